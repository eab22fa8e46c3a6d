package runner

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/privtrain/privtrain/aggregate"
	"github.com/privtrain/privtrain/corruption"
	"github.com/privtrain/privtrain/datasets"
	"github.com/privtrain/privtrain/internal/fileutil"
	"github.com/privtrain/privtrain/model"
	"github.com/privtrain/privtrain/privacy"
	"github.com/privtrain/privtrain/randstream"
)

// TrainConfig is everything that defines a training run. It is written,
// resolved, to the run directory as config.json; a run is reproducible
// bit-for-bit from it together with its secret key (private/noise.key), or
// from it alone when ReproducibleNoise is set.
type TrainConfig struct {
	Preset  string `json:"preset,omitempty" yaml:"preset,omitempty"`
	Dataset string `json:"dataset" yaml:"dataset"`
	DataDir string `json:"data_dir,omitempty" yaml:"data_dir,omitempty"`
	Model   string `json:"model" yaml:"model"`
	// Network, if set, is the network to train (networks as data, e.g.
	// from trainer train --model-file); Model is then its name, which must
	// not be a registered architecture.
	Network *model.Network `json:"network,omitempty" yaml:"network,omitempty"`
	// Method is a registered training method (Methods, RegisterMethod):
	// nonprivate, dpsgd, tsgd-gaussian, tsgd-ptr, nonprivate-robust, pdp-*.
	Method string `json:"method" yaml:"method"`
	// MethodOptions holds the options a method declares (Method.Options).
	MethodOptions map[string]float64 `json:"method_options,omitempty" yaml:"method_options,omitempty"`
	// Rule is the aggregation rule of nonprivate-robust (any aggregate rule).
	Rule string `json:"rule,omitempty" yaml:"rule,omitempty"`

	// BatchSize is the expected batch size; the Poisson rate is q = BatchSize/N
	// unless SamplingRate is set.
	BatchSize    int     `json:"batch_size" yaml:"batch_size"`
	SamplingRate float64 `json:"sampling_rate,omitempty" yaml:"sampling_rate,omitempty"`
	LR           float64 `json:"lr" yaml:"lr"`
	// LRFail / LRPass are the learning rates after a failed / passed PTR test
	// (η_A, η_B of appendix A.4; 0: use LR).
	LRFail float64 `json:"lr_fail,omitempty" yaml:"lr_fail,omitempty"`
	LRPass float64 `json:"lr_pass,omitempty" yaml:"lr_pass,omitempty"`

	Sigma    float64 `json:"sigma" yaml:"sigma"`
	ClipNorm float64 `json:"clip_norm" yaml:"clip_norm"`
	Delta    float64 `json:"delta" yaml:"delta"`
	// TargetEpsilon > 0 trains until the next step would exceed ε(δ).
	TargetEpsilon float64 `json:"target_epsilon,omitempty" yaml:"target_epsilon,omitempty"`
	// Epochs or Steps bound the run length (Steps wins when both are set).
	Epochs float64 `json:"epochs,omitempty" yaml:"epochs,omitempty"`
	Steps  int     `json:"steps,omitempty" yaml:"steps,omitempty"`
	// Conversion is the RDP → (ε, δ) conversion: "bbg" (default) or "mironov".
	Conversion string `json:"conversion,omitempty" yaml:"conversion,omitempty"`
	// Bound selects the subsampling bound: auto, whitebox, blackbox.
	Bound         string `json:"bound,omitempty" yaml:"bound,omitempty"`
	AllowUnproven bool   `json:"allow_unproven,omitempty" yaml:"allow_unproven,omitempty"`
	// Accountant is "pld", "rdp" or "" (default: pld when the step
	// mechanism has a proven privacy loss distribution — DP-SGD,
	// TSGD+Gaussian and TSGD+PTR (docs/ptr-pld.md) — else rdp, e.g. the
	// discrete-Laplace secure PTR release). PLDInterval is the PLD
	// discretization interval (0: privacy.DefaultPLDInterval).
	Accountant  string  `json:"accountant,omitempty" yaml:"accountant,omitempty"`
	PLDInterval float64 `json:"pld_interval,omitempty" yaml:"pld_interval,omitempty"`

	// PTR / trimmed-sum parameters (tsgd-ptr, tsgd-gaussian).
	Tau          float64 `json:"tau,omitempty" yaml:"tau,omitempty"`
	LaplaceB     float64 `json:"laplace_b,omitempty" yaml:"laplace_b,omitempty"`
	Delta0       float64 `json:"delta0,omitempty" yaml:"delta0,omitempty"`
	TrimFraction float64 `json:"trim_fraction,omitempty" yaml:"trim_fraction,omitempty"`
	DynamicF     bool    `json:"dynamic_f,omitempty" yaml:"dynamic_f,omitempty"`
	DynamicRate  float64 `json:"dynamic_f_rate,omitempty" yaml:"dynamic_f_rate,omitempty"`
	// DynamicIncreaseOnPass follows appendix B.1.3's direction instead of
	// Remark 5.3's (see optim.TrimController).
	DynamicIncreaseOnPass bool `json:"dynamic_f_increase_on_pass,omitempty" yaml:"dynamic_f_increase_on_pass,omitempty"`

	// CenteredClipRadius is ρ of the centered-clip rule.
	CenteredClipRadius float64 `json:"centered_clip_radius,omitempty" yaml:"centered_clip_radius,omitempty"`

	Corruption      string  `json:"corruption,omitempty" yaml:"corruption,omitempty"`
	CorruptionRatio float64 `json:"corruption_ratio,omitempty" yaml:"corruption_ratio,omitempty"`

	// DataChecksums names a sha256sum-style manifest the dataset's files are
	// verified against instead of the official checksums (CIFAR-10 and
	// EMNIST only; see datasets.LoadWithChecksums). Empty: official files.
	DataChecksums string `json:"data_checksums,omitempty" yaml:"data_checksums,omitempty"`

	// PDP configures the personalized-DP methods (pdp-*).
	PDP PDPConfig `json:"pdp,omitempty" yaml:"pdp,omitempty"`

	// OptimizerSettings: optimizer, schedule, accumulation (optimizer.go);
	// its keys are top-level.
	OptimizerSettings `yaml:",inline"`

	// Seed is the public seed (`--seed`): model initialization, the
	// corruption plan (the attacker's choice), non-private batches. It need
	// not be secret and is published in config.json; nothing private is
	// derived from it. The privacy randomness (noise, Poisson sampling, PTR
	// test) has its own secret key (release.go, privacyKey): drawn from the
	// OS, or NoiseKey, kept in the run's private/noise.key.
	Seed uint64 `json:"seed" yaml:"seed"`
	// NoiseKey, when set, is the secret key of a new private run's privacy
	// randomness instead of one drawn from the OS (`--noise-key-file`): runs
	// given the same key and seed are bit-identical. Never written to a
	// release-safe file (only to private/noise.key).
	NoiseKey *randstream.Key `json:"-" yaml:"-"`
	// NoiseKeySource records where the key came from: "" drawn from the OS,
	// "supplied" given as NoiseKey. Set by Train; not a secret.
	NoiseKeySource string `json:"noise_key_source,omitempty" yaml:"noise_key_source,omitempty"`
	// ReproducibleNoise marks a run started before the seeds were split,
	// whose privacy randomness derives from Seed (which is then a secret,
	// and its config.json operator-only). Such runs still resume; new runs
	// with it are refused (a uint64 seed is guessable: use NoiseKey).
	ReproducibleNoise bool `json:"reproducible_noise,omitempty" yaml:"reproducible_noise,omitempty"`
	// FloatNoise opts out of the floating-point-safe release that every
	// private method uses by default (aggregate.Config.FloatNoise unset): the
	// aggregate is then computed in float32 with float noise added, and the
	// guarantee does not hold against floating-point attacks (Mironov,
	// CCS 2012). For comparisons with earlier float runs only.
	FloatNoise bool `json:"float_noise,omitempty" yaml:"float_noise,omitempty"`
	// SecureNoise records in a run's config.json that its release is
	// floating-point safe (ResolveNoise sets it from FloatNoise). Runs
	// written before secure noise became the default have it only if they
	// were started with --secure-noise: a private run without it was a
	// float run, and ReadRunConfig resumes it as one. As an input it is a
	// deprecated alias of the default (true); false is refused
	// (LoadConfigFile), float noise being asked for by FloatNoise.
	SecureNoise     bool   `json:"secure_noise,omitempty" yaml:"secure_noise,omitempty"`
	Out             string `json:"out" yaml:"out"`
	CheckpointEvery int    `json:"checkpoint_every,omitempty" yaml:"checkpoint_every,omitempty"`
	// EvalEvery > 0 evaluates test accuracy every EvalEvery steps; < 0 only
	// at the end. 0 (unset): a new run of the SGD family evaluates every
	// epoch, ⌈N/expected batch⌉ steps, stored resolved in config.json; a
	// resume keeps the stored value (0 in runs written before this default:
	// only at the end).
	EvalEvery int `json:"eval_every,omitempty" yaml:"eval_every,omitempty"`
}

// DefaultConfig is the default job (`trainer` with no arguments): TSGD+PTR
// on real MNIST with the TF-Privacy CNN, 10% of the training labels flipped,
// the PTR paper's MNIST hyper-parameters (preset ptr-mnist, dynamic F) and a
// privacy budget of (ε, δ) = (3, 1e-5), which sets the training length.
func DefaultConfig() TrainConfig {
	c := TrainConfig{
		Method: "tsgd-ptr", Conversion: "bbg", Bound: "auto",
		TargetEpsilon: 3, DynamicF: true,
		Corruption: "label-flip", CorruptionRatio: 0.1,
		Seed: 1, Out: "runs/default", CheckpointEvery: 500,
	}
	Presets()["ptr-mnist"](&c)
	c.Preset = "ptr-mnist"
	return c
}

// TrainDefaults is where `trainer train` starts: the default job without
// its corruption. The default job (`trainer` with no arguments) flips 10% of
// the labels to show robustness; a plain `train` trains on clean data
// unless --corruption is given.
func TrainDefaults() TrainConfig {
	c := DefaultConfig()
	c.Corruption, c.CorruptionRatio = corruption.None, 0
	return c
}

// Presets returns the named hyper-parameter presets: the PTR paper's
// (appendix B.1.3) and the personalized-DP paper's (PDPPresets).
func Presets() map[string]func(*TrainConfig) {
	ptr := func(dataset, model string, r, tau, sigmaPTR, sigmaGauss, lr float64, batch int) func(*TrainConfig) {
		return func(c *TrainConfig) {
			c.Dataset, c.Model = dataset, model
			c.ClipNorm, c.Tau, c.LR, c.BatchSize = r, tau, lr, batch
			c.Delta0, c.LaplaceB, c.Delta = 1e-8, 1, 1e-5
			c.Sigma = sigmaPTR
			if c.Method == "tsgd-gaussian" || c.Method == "dpsgd" {
				c.Sigma = sigmaGauss
			}
			if c.Method == "" || c.Method == "nonprivate" {
				c.Method = "tsgd-ptr"
				c.Sigma = sigmaPTR
			}
			c.TrimFraction = 0.25
			c.DynamicRate = 0.02
		}
	}
	m := map[string]func(*TrainConfig){
		"ptr-mnist":   ptr("mnist", "tfp-cnn", 1, 0.5, 1.1, 0.7, 0.15, 256),
		"ptr-emnist":  ptr("emnist-letters", "tfp-cnn", 1, 0.5, 1.1, 0.7, 0.15, 256),
		"ptr-cifar10": ptr("cifar10", "tfp-cnn", 3, 2, 1.1, 0.9, 0.1, 1024),
	}
	maps.Copy(m, PDPPresets())
	return m
}

// ApplyPreset applies the named preset to c (method-dependent σ).
func ApplyPreset(c *TrainConfig, name string) error {
	p, ok := Presets()[name]
	if !ok {
		return fmt.Errorf("unknown preset %q (known: %s)", name, strings.Join(presetNames(), ", "))
	}
	p(c)
	c.Preset = name
	return nil
}

func presetNames() []string {
	var n []string
	for k := range Presets() {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// LoadConfigFile merges a JSON (.json) or YAML (.yaml, .yml) file into c.
// Keys must match the field names exactly (case-sensitive; encoding/json
// alone would let "Steps" set steps), unknown keys are errors, and the file
// must hold exactly one document.
func LoadConfigFile(path string, c *TrainConfig) error {
	data, err := fileutil.ReadRegular(path)
	if err != nil {
		return fmt.Errorf("config file: %w", err)
	}
	fail := func(err error) error { return fmt.Errorf("config file %s: %w", path, err) }
	if len(bytes.TrimSpace(data)) == 0 {
		return fail(errors.New("the file is empty (want one configuration object)"))
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".json":
		if b := bytes.TrimSpace(data); b[0] != '{' {
			return fail(errors.New("want a JSON object ({\"method\": …}), not " + describeJSON(b)))
		}
		if err := CheckDuplicateJSONKeys(data); err != nil {
			return fail(err)
		}
		if err := checkJSONKeys(data, reflect.TypeOf(*c), ""); err != nil {
			return fail(err)
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(c); err != nil {
			return fail(err)
		}
		if _, err := dec.Token(); err != io.EOF {
			return fail(errors.New("more than one JSON document (only one configuration per file)"))
		}
	case ".yaml", ".yml":
		var doc yaml.Node
		if err := yaml.Unmarshal(data, &doc); err != nil {
			return fail(err)
		}
		if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
			return fail(errors.New("want a YAML mapping (method: …), not a scalar, list or null"))
		}
		dec := yaml.NewDecoder(bytes.NewReader(data))
		dec.KnownFields(true)
		if err := dec.Decode(c); err != nil {
			return fail(err)
		}
		var extra any
		if err := dec.Decode(&extra); err != io.EOF {
			return fail(errors.New("more than one YAML document (only one configuration per file)"))
		}
	default:
		return fmt.Errorf("config file %s: unknown extension (want .json, .yaml or .yml)", path)
	}
	return checkDeprecatedNoise(data, fail)
}

// checkDeprecatedNoise refuses secure_noise: false in a config file: it
// selected float noise when float was the default, and float noise is now
// asked for by float_noise: true (secure_noise: true, the default, is
// accepted and changes nothing).
func checkDeprecatedNoise(data []byte, fail func(error) error) error {
	var legacy struct {
		SecureNoise *bool `json:"secure_noise" yaml:"secure_noise"`
	}
	// Both formats decode with yaml (JSON is YAML); the file has already
	// decoded, so an error here cannot be new.
	if yaml.Unmarshal(data, &legacy) == nil && legacy.SecureNoise != nil && !*legacy.SecureNoise {
		return fail(errors.New("secure_noise: false no longer selects float noise (secure noise is the default): write float_noise: true to opt out of it"))
	}
	return nil
}

// describeJSON names the kind of the JSON value starting data.
func describeJSON(data []byte) string {
	switch data[0] {
	case '[':
		return "a list"
	case 'n':
		return "null"
	case '"':
		return "a string"
	}
	return "a number or boolean"
}

// CheckDuplicateJSONKeys refuses a JSON document in which an object repeats
// a key (encoding/json keeps the last, so "steps": 2, "steps": 3 ran 3).
// Malformed JSON is left to the decoder to report.
func CheckDuplicateJSONKeys(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	var walk func(path string) error
	walk = func(path string) error {
		tok, err := dec.Token()
		if err != nil {
			return nil // malformed: the decoder reports it
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil
				}
				k, _ := kt.(string)
				if seen[k] {
					return fmt.Errorf("key %q appears twice", path+k)
				}
				seen[k] = true
				if err := walk(path + k + "."); err != nil {
					return err
				}
			}
			dec.Token() // '}'
		case json.Delim('['):
			for dec.More() {
				if err := walk(path); err != nil {
					return err
				}
			}
			dec.Token() // ']'
		}
		return nil
	}
	return walk("")
}

// checkJSONKeys checks that every key of the JSON object data is exactly
// the json tag of a field of struct type t (recursing into struct fields).
func checkJSONKeys(data []byte, t reflect.Type, prefix string) error {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		return nil // not an object: the decoder reports it
	}
	fields := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous && f.Tag.Get("json") == "" && f.Type.Kind() == reflect.Struct {
			// An embedded struct's keys are the outer object's (encoding/json).
			for j := 0; j < f.Type.NumField(); j++ {
				if name, _, _ := strings.Cut(f.Type.Field(j).Tag.Get("json"), ","); name != "" && name != "-" {
					fields[name] = f.Type.Field(j).Type
				}
			}
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		fields[name] = f.Type
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		ft, ok := fields[k]
		if !ok {
			for name := range fields {
				if strings.EqualFold(name, k) {
					return fmt.Errorf("key %q: keys are case-sensitive, did you mean %q?", prefix+k, prefix+name)
				}
			}
			return fmt.Errorf("unknown key %q", prefix+k)
		}
		if ft.Kind() == reflect.Struct {
			if err := checkJSONKeys(obj[k], ft, prefix+k+"."); err != nil {
				return err
			}
		}
	}
	return nil
}

// Private reports whether the method adds noise and is accounted by a
// privacy accountant (a private FamilySGD method, Method.Private).
func (c *TrainConfig) Private() bool {
	m := c.method()
	return m.Private && m.Family == FamilySGD
}

// Noisy reports whether the method releases noise: the private methods and
// the personalized ones (pdp-*, accounted by their ledger).
func (c *TrainConfig) Noisy() bool { return c.Private() || c.pdp() }

// uses reports whether c's method uses the method-dependent flag (or
// setting) name (Method.Flags).
func (c *TrainConfig) uses(name string) bool { return slices.Contains(c.method().Flags, name) }

// pdp reports whether the method runs personalized-DP rounds.
func (c *TrainConfig) pdp() bool {
	m, ok := methods.Lookup(c.Method)
	return ok && m.Family == FamilyPDP
}

// SecureRelease reports whether the run's noisy releases are
// floating-point safe: every noisy method's default, unless FloatNoise.
func (c *TrainConfig) SecureRelease() bool { return c.Noisy() && !c.FloatNoise }

// ResolveNoise records the noise mode of a noisy method in SecureNoise
// (true for the secure release), so that config.json, the checkpoint's
// binding and a grid cell's key state it whatever the caller set. It leaves
// other methods' SecureNoise as it was (runs of the former default job with
// a non-private method stored it true).
func (c *TrainConfig) ResolveNoise() {
	if c.Noisy() {
		c.SecureNoise = !c.FloatNoise
	}
}

// NoiseIdentity is c as it identifies a run: the noise mode resolved
// (ResolveNoise) and stated once, by SecureNoise, with FloatNoise cleared.
// A float run then has the identity it had before float noise became an
// opt-in (neither key), so checkpoints and grid cells of earlier float runs
// keep their bindings and keys, and a secure run has secure_noise true as
// the earlier --secure-noise runs had.
func (c TrainConfig) NoiseIdentity() TrainConfig {
	c.ResolveNoise()
	c.FloatNoise = false
	return c
}

// readLegacyNoise gives a stored run configuration its noise mode: a noisy
// run stored without secure_noise was a float run (before secure noise
// became the default, float was; since, a float run stores float_noise), so
// it resumes with float noise.
func (c *TrainConfig) readLegacyNoise() {
	if c.Noisy() && !c.SecureNoise {
		c.FloatNoise = true
	}
}

// Validate checks every hyper-parameter before any data is loaded.
func (c *TrainConfig) Validate() error {
	if err := c.validate(); err != nil {
		return err
	}
	if _, err := json.Marshal(c); err != nil {
		// NaN or ±Inf in a field no check above names: it could not even be
		// recorded in config.json.
		return fmt.Errorf("invalid configuration: every number must be finite: %w", err)
	}
	return nil
}

// invalid is the error of an invalid configuration.
func invalid(format string, a ...any) error {
	return fmt.Errorf("invalid configuration: "+format, a...)
}

// finite reports whether v is neither NaN nor ±Inf.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// validate checks c: the settings of every method, then those of the
// method's family (validateSGD and validatePrivate, or validatePDP), then
// the method's own (Method.Validate).
func (c *TrainConfig) validate() error {
	m, ok := methods.Lookup(c.Method)
	if !ok {
		return invalid("unknown method %q (known: %s)", c.Method, strings.Join(Methods(), ", "))
	}
	if err := c.validateCommon(); err != nil {
		return err
	}
	if err := c.checkMethodOptions(m); err != nil {
		return err
	}
	if err := c.validateFamily(m); err != nil {
		return err
	}
	if m.Validate == nil {
		return nil
	}
	return m.Validate(c)
}

// validateFamily checks the settings every method of m's family uses.
func (c *TrainConfig) validateFamily(m Method) error {
	if m.Family == FamilyPDP {
		return c.validatePDP(m)
	}
	if err := c.validateSGD(); err != nil {
		return err
	}
	if m.Private {
		return c.validatePrivate()
	}
	if c.TargetEpsilon != 0 {
		return invalid("a target ε needs a private method, not %s", c.Method)
	}
	return nil
}

// validateCommon checks the names, the noise mode, the magnitudes, the
// intervals and the accountant's options, which every method shares.
func (c *TrainConfig) validateCommon() error {
	if err := c.validateNames(); err != nil {
		return err
	}
	switch {
	case c.FloatNoise && !c.Noisy():
		return invalid("float noise (--float-noise) applies to private methods only, not %s, which adds no noise", c.Method)
	case c.FloatNoise && c.SecureNoise:
		return invalid("float_noise and secure_noise are both set: secure noise is the default; float_noise (--float-noise) opts out of it")
	}
	if err := c.validateScale(); err != nil {
		return err
	}
	if err := c.validateOptimizer(!c.pdp()); err != nil {
		return err
	}
	if c.CheckpointEvery < 0 || c.EvalEvery < -1 {
		return invalid("checkpoint interval must be ≥ 0 and evaluation interval ≥ −1 (0: unset, every epoch for a new run; −1: only at the end), got %d and %d", c.CheckpointEvery, c.EvalEvery)
	}
	if c.Accountant != "" {
		// The accountant refuses options it cannot honour (the PLD one:
		// the options of the RDP accountant).
		if _, err := privacy.NewAccountant(c.Accountant, privacy.AccountantConfig{Conversion: privacy.Conversion(c.Conversion), AllowUnproven: c.AllowUnproven, Interval: c.PLDInterval}); err != nil {
			return invalid("%v", err)
		}
	}
	return nil
}

// validateSGD checks the settings of the FamilySGD methods: sampling,
// learning rates, run length, corruption, the rules' knobs and the
// accounting options.
func (c *TrainConfig) validateSGD() error {
	if err := c.validateSGDRun(); err != nil {
		return err
	}
	if err := c.validateCorruption(); err != nil {
		return err
	}
	switch {
	case !finite(c.CenteredClipRadius) || c.CenteredClipRadius < 0:
		return invalid("centered-clip radius ρ must be finite and ≥ 0, got %v", c.CenteredClipRadius)
	case !finite(c.DynamicRate) || c.DynamicRate < 0:
		return invalid("dynamic F rate must be finite and ≥ 0, got %v", c.DynamicRate)
	case !finite(c.TrimFraction) || c.TrimFraction < 0:
		return invalid("trim fraction must be finite and ≥ 0, got %v", c.TrimFraction)
	case !finite(c.SamplingRate) || !finite(c.TargetEpsilon) || !finite(c.Sigma) || !finite(c.Tau) || !finite(c.LaplaceB) || !finite(c.Delta0) || !finite(c.Delta):
		return invalid("numbers must be finite (σ, τ, b, δ, δ₀, q, target ε)")
	}
	if err := c.validateAccounting(); err != nil {
		return err
	}
	if c.ClipNorm < 0 || !finite(c.ClipNorm) {
		return invalid("clipping norm R must be finite and ≥ 0, got %v", c.ClipNorm)
	}
	return nil
}

// validateBatchLR checks the batch size or sampling rate and the learning
// rate, which both families use.
func (c *TrainConfig) validateBatchLR() error {
	switch {
	case c.BatchSize <= 0 && c.SamplingRate == 0:
		return invalid("batch size must be > 0, got %d", c.BatchSize)
	case c.SamplingRate != 0 && !(c.SamplingRate > 0 && c.SamplingRate <= 1):
		return invalid("sampling rate q must be in (0, 1], got %v", c.SamplingRate)
	case !(c.LR > 0) || !finite(c.LR):
		return invalid("learning rate must be finite and > 0, got %v", c.LR)
	}
	return nil
}

// validateSGDRun checks the batch, the learning rates and the run length.
func (c *TrainConfig) validateSGDRun() error {
	if err := c.validateBatchLR(); err != nil {
		return err
	}
	switch {
	case c.LRFail < 0 || c.LRPass < 0 || !finite(c.LRFail) || !finite(c.LRPass):
		return invalid("branch learning rates must be finite and ≥ 0")
	case c.Steps < 0 || c.Epochs < 0 || !finite(c.Epochs):
		return invalid("steps and epochs must be ≥ 0")
	case c.Steps == 0 && c.Epochs == 0 && c.TargetEpsilon == 0:
		return invalid("set a run length: steps, epochs or a target ε")
	}
	return nil
}

// validateCorruption checks the corruption kind and ratio agree.
func (c *TrainConfig) validateCorruption() error {
	none := c.Corruption == "" || c.Corruption == corruption.None
	switch {
	case c.CorruptionRatio < 0 || c.CorruptionRatio > 1 || !finite(c.CorruptionRatio):
		return invalid("corruption ratio must be in [0, 1], got %v", c.CorruptionRatio)
	case none && c.CorruptionRatio != 0:
		return invalid("corruption ratio %v needs a corruption kind (--corruption %s)", c.CorruptionRatio, strings.Join(corruption.Kinds()[1:], " | "))
	case !none && !(c.CorruptionRatio > 0):
		return invalid("corruption %s needs a ratio > 0 (--corruption-ratio)", c.Corruption)
	}
	return nil
}

// validateAccounting checks the conversion, accountant, PLD interval and
// subsampling bound names.
func (c *TrainConfig) validateAccounting() error {
	switch {
	case c.Conversion != "" && c.Conversion != "bbg" && c.Conversion != "mironov":
		return invalid("conversion must be bbg or mironov, got %q", c.Conversion)
	case c.PLDInterval != 0 && !(c.PLDInterval > 0 && c.PLDInterval <= 1):
		return invalid("pld interval must be in (0, 1], got %v", c.PLDInterval)
	}
	if c.Accountant != "" {
		if err := privacy.CheckAccountantName(c.Accountant); err != nil {
			return invalid("accountant: %v", err)
		}
	}
	switch c.Bound {
	case "", "auto", "whitebox", "blackbox":
		return nil
	}
	return invalid("bound must be auto, whitebox or blackbox, got %q", c.Bound)
}

// validatePrivate checks the settings of every private method: σ, R, δ and
// the target ε.
func (c *TrainConfig) validatePrivate() error {
	switch {
	case !(c.Sigma > 0) || !finite(c.Sigma):
		return invalid("noise multiplier σ must be finite and > 0, got %v", c.Sigma)
	case !(c.ClipNorm > 0):
		return invalid("clipping norm R must be > 0 for %s", c.Method)
	case !(c.Delta > 0 && c.Delta < 1):
		return invalid("δ must be in (0, 1), got %v", c.Delta)
	case c.TargetEpsilon < 0 || !finite(c.TargetEpsilon):
		return invalid("target ε must be finite and > 0, got %v", c.TargetEpsilon)
	case c.TargetEpsilon > MaxTargetEpsilon:
		return invalid("target ε = %v is above %v, where a guarantee means nothing (e^ε bounds the likelihood ratio)", c.TargetEpsilon, MaxTargetEpsilon)
	case c.Sigma < minSigma:
		return invalid("noise multiplier σ = %v is below %v: its ε per step is astronomically large (use a non-private method instead)", c.Sigma, minSigma)
	}
	return nil
}

// aggregateConfig is the aggregation rule's configuration of the run, for
// an expected batch size expected: F is the trim level of tsum/ptr-tsum and
// the assumed number of Byzantine gradients of krum; TrimFraction is also
// coord-trimmed-mean's β. Non-private methods get σ = 0. The rule releases
// secure noise (aggregate.Config's zero FloatNoise) unless the run opted
// out with FloatNoise.
func (c *TrainConfig) aggregateConfig(expected float64) aggregate.Config {
	ac := aggregate.Config{
		Sigma: c.Sigma, ClipNorm: c.ClipNorm, Tau: c.Tau, B: c.LaplaceB, Delta0: c.Delta0,
		F: int(math.Round(c.TrimFraction * expected)), TrimFraction: c.TrimFraction,
		Radius: c.CenteredClipRadius, ExpectedBatch: expected,
		// Secure unless a noisy run opted out (SecureRelease).
		FloatNoise: c.Noisy() && !c.SecureRelease(),
	}
	if !c.Private() {
		ac.Sigma = 0
	}
	return ac
}

// MaxTargetEpsilon is the largest target ε accepted (train, grids, account
// sigma). At ε = 100 the likelihood ratio e^ε ≈ 2.7·10⁴³ bounds nothing;
// larger targets only make the accountant's budget search (more steps,
// smaller σ) arbitrarily expensive.
const MaxTargetEpsilon = 100

// maxScale bounds σ, R, the learning rates and ρ, and maxStepScale the
// product lr·max(σ, 1)·max(R, 1), which scales one step's update (clipped
// gradients ≤ R, noise of standard deviation σR, times lr). No setting of
// the papers comes near (their largest product is below 100); far larger
// values overflow the float32 parameters (largest 3.4·10³⁸) in the first
// step or two, and the run would fail after writing its directory.
const (
	maxScale     = 1e6
	maxStepScale = 1e6
)

// validateScale refuses magnitudes that cannot train (see maxScale).
func (c *TrainConfig) validateScale() error {
	for _, v := range []struct {
		name string
		x    float64
	}{{"noise multiplier σ", c.Sigma}, {"clipping norm R", c.ClipNorm}, {"learning rate", c.LR},
		{"learning rate after a failed PTR test", c.LRFail}, {"learning rate after a passed PTR test", c.LRPass},
		{"centered-clip radius ρ", c.CenteredClipRadius}} {
		if v.x > maxScale {
			return fmt.Errorf("invalid configuration: %s = %v is above %g: float32 parameters would overflow", v.name, v.x, maxScale)
		}
	}
	lr := max(c.LR, c.LRFail, c.LRPass)
	if p := lr * max(c.Sigma, 1) * max(c.ClipNorm, 1); p > maxStepScale {
		return fmt.Errorf("invalid configuration: lr·max(σ,1)·max(R,1) = %.3g is above %g: one step's update would overflow float32 parameters", p, float64(maxStepScale))
	}
	return nil
}

// minSigma is the smallest noise multiplier accepted: below it one step's
// RDP α/(2σ²) exceeds 10^6 at α = 2 and the run is private in name only.
const minSigma = 1e-3

// validateNames checks every name the run is built from (method, dataset,
// model, rule, corruption kind, bound, conversion) before any data is
// loaded or anything is written.
func (c *TrainConfig) validateNames() error {
	bad := func(format string, a ...any) error { return fmt.Errorf("invalid configuration: "+format, a...) }
	switch {
	case c.Dataset == "" || c.Model == "":
		return bad("dataset and model are required")
	case !contains(datasets.Names(), c.Dataset):
		return bad("unknown dataset %q (known: %s)", c.Dataset, strings.Join(datasets.Names(), ", "))
	case c.Network == nil && !contains(model.Names(), c.Model):
		return bad("unknown model %q (known: %s)", c.Model, strings.Join(model.Names(), ", "))
	case c.Network != nil && contains(model.Names(), c.Model):
		return bad("model %q is a registered architecture; a network of your own needs another name", c.Model)
	case c.Rule != "" && !contains(aggregate.Names(), c.Rule):
		return bad("unknown rule %q (known: %s)", c.Rule, strings.Join(aggregate.Names(), ", "))
	case c.Rule != "" && !c.uses("rule"):
		return bad("a rule (%s) applies only to %s, not %s", c.Rule, strings.Join(MethodFlags()["rule"], ", "), c.Method)
	case c.Corruption != "" && !contains(corruption.Kinds(), c.Corruption):
		return bad("unknown corruption %q (known: %s)", c.Corruption, strings.Join(corruption.Kinds(), ", "))
	case c.NoiseKey != nil && !c.Noisy():
		return bad("a noise key is for private methods; %s adds no noise", c.Method)
	case c.NoiseKeySource != "" && c.NoiseKeySource != noiseKeySupplied:
		return bad("unknown noise_key_source %q (known: %s)", c.NoiseKeySource, noiseKeySupplied)
	}
	if c.NoiseKey != nil {
		if err := CheckNoiseKey(*c.NoiseKey); err != nil {
			return bad("noise key: %v", err)
		}
	}
	if err := privacy.SubsampleBound(c.Bound).Validate(); err != nil {
		return bad("%v", err)
	}
	if c.Network != nil {
		if err := c.Network.Validate(); err != nil {
			return bad("model %s: %v", c.Model, err)
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
