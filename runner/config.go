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
	// Method is one of Methods(): nonprivate, dpsgd, tsgd-gaussian, tsgd-ptr,
	// nonprivate-robust.
	Method string `json:"method" yaml:"method"`
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
	// private method uses by default (aggregate.Config.Secure): the
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

// Methods lists the training methods.
func Methods() []string {
	return append([]string{"nonprivate", "dpsgd", "tsgd-gaussian", "tsgd-ptr", "nonprivate-robust"}, pdpMethods()...)
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

// Private reports whether the method adds noise and is accounted.
func (c *TrainConfig) Private() bool {
	return c.Method == "dpsgd" || c.Method == "tsgd-gaussian" || c.Method == "tsgd-ptr"
}

// Noisy reports whether the method releases noise: the private methods and
// the personalized ones (pdp-*, accounted by their ledger).
func (c *TrainConfig) Noisy() bool { return c.Private() || contains(pdpMethods(), c.Method) }

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

func (c *TrainConfig) validate() error {
	bad := func(format string, a ...any) error { return fmt.Errorf("invalid configuration: "+format, a...) }
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	if !contains(Methods(), c.Method) {
		return bad("unknown method %q (known: %s)", c.Method, strings.Join(Methods(), ", "))
	}

	if err := c.validateNames(); err != nil {
		return err
	}
	if c.FloatNoise && !c.Noisy() {
		return bad("float noise (--float-noise) applies to private methods only, not %s, which adds no noise", c.Method)
	}
	if c.FloatNoise && c.SecureNoise {
		return bad("float_noise and secure_noise are both set: secure noise is the default; float_noise (--float-noise) opts out of it")
	}
	if err := c.validateScale(); err != nil {
		return err
	}
	if c.CheckpointEvery < 0 || c.EvalEvery < -1 {
		return bad("checkpoint interval must be ≥ 0 and evaluation interval ≥ −1 (0: unset, every epoch for a new run; −1: only at the end), got %d and %d", c.CheckpointEvery, c.EvalEvery)
	}
	if c.Accountant != "" {
		// The accountant refuses options it cannot honour (the PLD one:
		// the options of the RDP accountant).
		if _, err := privacy.NewAccountant(c.Accountant, privacy.AccountantConfig{Conversion: privacy.Conversion(c.Conversion), AllowUnproven: c.AllowUnproven, Interval: c.PLDInterval}); err != nil {
			return bad("%v", err)
		}
	}
	if contains(pdpMethods(), c.Method) {
		return c.validatePDP()
	}
	if c.BatchSize <= 0 && c.SamplingRate == 0 {
		return bad("batch size must be > 0, got %d", c.BatchSize)
	}
	if c.SamplingRate != 0 && !(c.SamplingRate > 0 && c.SamplingRate <= 1) {
		return bad("sampling rate q must be in (0, 1], got %v", c.SamplingRate)
	}
	if !(c.LR > 0) || !finite(c.LR) {
		return bad("learning rate must be finite and > 0, got %v", c.LR)
	}
	if c.LRFail < 0 || c.LRPass < 0 || !finite(c.LRFail) || !finite(c.LRPass) {
		return bad("branch learning rates must be finite and ≥ 0")
	}
	if c.Steps < 0 || c.Epochs < 0 || !finite(c.Epochs) {
		return bad("steps and epochs must be ≥ 0")
	}
	if c.Steps == 0 && c.Epochs == 0 && c.TargetEpsilon == 0 {
		return bad("set a run length: steps, epochs or a target ε")
	}
	if c.CorruptionRatio < 0 || c.CorruptionRatio > 1 || !finite(c.CorruptionRatio) {
		return bad("corruption ratio must be in [0, 1], got %v", c.CorruptionRatio)
	}
	if (c.Corruption == "" || c.Corruption == corruption.None) && c.CorruptionRatio != 0 {
		return bad("corruption ratio %v needs a corruption kind (--corruption %s)", c.CorruptionRatio, strings.Join(corruption.Kinds()[1:], " | "))
	}
	if c.Corruption != "" && c.Corruption != corruption.None && !(c.CorruptionRatio > 0) {
		return bad("corruption %s needs a ratio > 0 (--corruption-ratio)", c.Corruption)
	}
	if !finite(c.CenteredClipRadius) || c.CenteredClipRadius < 0 {
		return bad("centered-clip radius ρ must be finite and ≥ 0, got %v", c.CenteredClipRadius)
	}
	if !finite(c.DynamicRate) || c.DynamicRate < 0 {
		return bad("dynamic F rate must be finite and ≥ 0, got %v", c.DynamicRate)
	}
	if !finite(c.TrimFraction) || c.TrimFraction < 0 {
		return bad("trim fraction must be finite and ≥ 0, got %v", c.TrimFraction)
	}
	if !finite(c.SamplingRate) || !finite(c.TargetEpsilon) || !finite(c.Sigma) || !finite(c.Tau) || !finite(c.LaplaceB) || !finite(c.Delta0) || !finite(c.Delta) {
		return bad("numbers must be finite (σ, τ, b, δ, δ₀, q, target ε)")
	}
	if c.Conversion != "" && c.Conversion != "bbg" && c.Conversion != "mironov" {
		return bad("conversion must be bbg or mironov, got %q", c.Conversion)
	}
	if c.Accountant != "" {
		if err := privacy.CheckAccountantName(c.Accountant); err != nil {
			return bad("accountant: %v", err)
		}
	}
	if c.PLDInterval != 0 && !(c.PLDInterval > 0 && c.PLDInterval <= 1) {
		return bad("pld interval must be in (0, 1], got %v", c.PLDInterval)
	}
	switch c.Bound {
	case "", "auto", "whitebox", "blackbox":
	default:
		return bad("bound must be auto, whitebox or blackbox, got %q", c.Bound)
	}
	if c.Method == "nonprivate-robust" && c.Rule == "" {
		return bad("nonprivate-robust needs a rule (e.g. coord-median, krum, geomed)")
	}
	if c.ClipNorm < 0 || !finite(c.ClipNorm) {
		return bad("clipping norm R must be finite and ≥ 0, got %v", c.ClipNorm)
	}
	if !c.Private() {
		if c.TargetEpsilon != 0 {
			return bad("a target ε needs a private method, not %s", c.Method)
		}
		return nil
	}
	if !(c.Sigma > 0) || !finite(c.Sigma) {
		return bad("noise multiplier σ must be finite and > 0, got %v", c.Sigma)
	}
	if !(c.ClipNorm > 0) {
		return bad("clipping norm R must be > 0 for %s", c.Method)
	}
	if !(c.Delta > 0 && c.Delta < 1) {
		return bad("δ must be in (0, 1), got %v", c.Delta)
	}
	if c.TargetEpsilon < 0 || !finite(c.TargetEpsilon) {
		return bad("target ε must be finite and > 0, got %v", c.TargetEpsilon)
	}
	if c.TargetEpsilon > MaxTargetEpsilon {
		return bad("target ε = %v is above %v, where a guarantee means nothing (e^ε bounds the likelihood ratio)", c.TargetEpsilon, MaxTargetEpsilon)
	}
	if c.Method == "tsgd-gaussian" || c.Method == "tsgd-ptr" {
		if !(c.TrimFraction >= 0 && c.TrimFraction < 0.5) {
			return bad("trim fraction F/batch must be in [0, 0.5), got %v", c.TrimFraction)
		}
	}
	if c.Sigma < minSigma {
		return bad("noise multiplier σ = %v is below %v: its ε per step is astronomically large (use a non-private method instead)", c.Sigma, minSigma)
	}
	if c.Method == "tsgd-ptr" {
		// τ is in gradient-norm units here (as --tau of `trainer train`).
		if err := aggregate.CheckPTRTau(c.Tau, c.ClipNorm); err != nil {
			return bad("%v", err)
		}
		if c.Bound == string(privacy.SubsampleWhiteBox) && !c.AllowUnproven {
			// Theorem 4.4's conditions that do not depend on q or α
			// (privacy.WhiteBoxConditions): σ₂ = σ·τ/R ≥ 4.
			if s2 := c.Sigma * c.Tau / c.ClipNorm; s2 < 4 {
				return bad("the white-box bound (Theorem 4.4) is proven only for σ₂ = σ·τ/R ≥ 4, got %v·%v/%v = %.4g: use --bound auto (falls back to the black-box bound) or --allow-unproven", c.Sigma, c.Tau, c.ClipNorm, s2)
			}
			if c.SamplingRate > 0 {
				if err := privacy.WhiteBoxConditions(c.SamplingRate, aggregate.PTRMechanism(c.aggregateConfig(0)), 2); err != nil {
					return bad("the white-box bound (Theorem 4.4) does not hold: %v: use --bound auto or --allow-unproven", err)
				}
			}
		}
		if !(c.LaplaceB > 0) || !finite(c.LaplaceB) {
			return bad("PTR Laplace scale b must be finite and > 0, got %v", c.LaplaceB)
		}
		if !(c.Delta0 > 0 && c.Delta0 <= 0.5) {
			return bad("PTR δ₀ must be in (0, 1/2], got %v", c.Delta0)
		}
		if c.DynamicF && !(c.DynamicRate > 0 && c.DynamicRate < 0.5) {
			return bad("dynamic F rate must be in (0, 0.5), got %v", c.DynamicRate)
		}
	}
	return nil
}

// aggregateConfig is the aggregation rule's configuration of the run, for
// an expected batch size expected: F is the trim level of tsum/ptr-tsum and
// the assumed number of Byzantine gradients of krum; TrimFraction is also
// coord-trimmed-mean's β. Non-private methods get σ = 0.
func (c *TrainConfig) aggregateConfig(expected float64) aggregate.Config {
	ac := aggregate.Config{
		Sigma: c.Sigma, ClipNorm: c.ClipNorm, Tau: c.Tau, B: c.LaplaceB, Delta0: c.Delta0,
		F: int(math.Round(c.TrimFraction * expected)), TrimFraction: c.TrimFraction,
		Radius: c.CenteredClipRadius, ExpectedBatch: expected,
		Secure: c.SecureRelease() && c.Private(),
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
	case c.Rule != "" && c.Method != "nonprivate-robust":
		return bad("a rule (%s) applies only to nonprivate-robust, not %s", c.Rule, c.Method)
	case c.Corruption != "" && !contains(corruption.Kinds(), c.Corruption):
		return bad("unknown corruption %q (known: %s)", c.Corruption, strings.Join(corruption.Kinds(), ", "))
	case c.NoiseKey != nil && !c.Private() && !contains(pdpMethods(), c.Method):
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
