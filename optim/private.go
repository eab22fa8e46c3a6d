package optim

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/privtrain/privtrain/aggregate"
	"github.com/privtrain/privtrain/datasets"
	"github.com/privtrain/privtrain/model"
	"github.com/privtrain/privtrain/privacy"
	"github.com/privtrain/privtrain/randstream"
)

// PrivateConfig states the privacy of a DP-SGD run once, for MakePrivate.
// Give either Sigma or TargetEpsilon (with Steps), never both.
type PrivateConfig struct {
	// ClipNorm is R, the per-example L2 clipping bound (> 0). It is stated
	// once: it configures the rule (aggregate.Config.ClipNorm), and the
	// trainer clips to the R the rule reports (aggregate.Clipping).
	ClipNorm float64
	// Q is the Poisson sampling rate in (0, 1]; when 0, BatchSize/N.
	Q float64
	// BatchSize is the expected batch size, used when Q is 0.
	BatchSize int
	// Sigma is the noise multiplier σ (noise std σ·R on the sum).
	Sigma float64
	// TargetEpsilon, when > 0, calibrates σ with privacy.CalibrateSigma:
	// the smallest σ (to privacy.CalibrationTolerance) such that Steps
	// steps of the rule's mechanism (the Gaussian; for ptr-tsum the PTR
	// mechanism with Sigma1 = σ and the given τ, b, δ₀) are
	// (TargetEpsilon, Delta)-DP under the Accountant.
	TargetEpsilon float64
	// Steps is the planned number of steps (required with TargetEpsilon).
	Steps int
	// Delta is the δ at which ε is reported (and calibrated), in (0, 1).
	Delta float64
	// Accountant is any registered accountant (privacy.AccountantNames):
	// privacy.KindPLD (a certified upper bound from the privacy loss
	// distribution, the tightest here), privacy.KindRDP (Rényi DP, as
	// Opacus' RDP accountant), ...; "" means privacy.DefaultAccountant of
	// the step (PLD for DP-SGD and TSGD+PTR: both have one).
	Accountant string
	// Conversion from RDP to (ε, δ) ("" means privacy.DefaultConversion); RDP only.
	Conversion privacy.Conversion
	// LR is the learning rate (> 0).
	LR float64
	// Rule is the registered aggregation rule ("" means "sum"). With
	// Config{Sigma: σ, ClipNorm: R, Options: Options} it must plan
	// (aggregate.Planned) the Gaussian mechanism with multiplier σ at
	// normalized sensitivity 1 — as sum and tsum do, and any rule
	// calibrating its noise to its own sensitivity; MakePrivate checks the
	// plan once, and the accountant composes it every step. A rule should
	// also report the R it clips to (aggregate.Clipping); for one that does
	// not, the trainer clips to ClipNorm.
	Rule    string
	Options map[string]float64
	// FloatNoise opts out of the secure release, the default: it is
	// passed to the rule as aggregate.Config.FloatNoise, so by default the
	// rule releases exact integer sums on a power-of-two grid with exactly
	// sampled noise (a post-processing of the Gaussian mechanism it plans,
	// so accounted alike), and a rule without a secure release
	// (aggregate.SecureReleaser) is refused. With FloatNoise the rule
	// releases float noise, whose guarantee does not hold against
	// floating-point attacks (Mironov, CCS 2012); Private's Secure field
	// then reads false.
	FloatNoise bool
	// Key keys the privacy randomness (Poisson sampling and noise). The
	// zero Key means a fresh secret key from the operating system
	// (randstream.NewSecret), which is what a released model needs. A key
	// from randstream.FromSeed makes the run reproducible, and the guarantee
	// then holds only while the seed stays secret.
	Key randstream.Key
	// Workers is the number of goroutines for clipping (0: GOMAXPROCS).
	Workers int

	// TSGD+PTR (Rule "ptr-tsum"; Wang et al., NeurIPS 2022): Tau is the
	// proposed local sensitivity τ (0 < τ < R, gradient-norm units),
	// LaplaceB the Laplace scale b and Delta0 the δ₀ of the test, TrimLevel
	// the trim level F (also tsum's); LRFail / LRPass the learning rates
	// after a failed / passed test (0: LR), as optim.PTRPolicy. With a
	// TargetEpsilon, σ (both branches' multiplier) is calibrated on the
	// PTR mechanism (privacy.CalibrationRequest.Step); the test's Laplace
	// part does not depend on σ, so a target below its cost is
	// unreachable.
	Tau, LaplaceB, Delta0 float64
	TrimLevel             int
	LRFail, LRPass        float64
	// Optimizer and Accumulate are the trainer's (Config): post-processing
	// of the releases, which changes nothing in the accounting.
	Optimizer  OptimizerConfig
	Accumulate int
}

// Private is a ready DP-SGD trainer made by MakePrivate: a Poisson sampler,
// per-example clipping to R, a private aggregation rule and an accountant
// that charges every step. Its Trainer can also be driven step by step.
type Private struct {
	*Trainer
	// Sigma is the noise multiplier in use (given or calibrated); Q the
	// sampling rate; Delta and Conversion those at which Epsilon reports.
	Sigma, Q, Delta float64
	Conversion      privacy.Conversion
	// Secure is true when the releases are floating-point safe (the
	// default; false only with PrivateConfig.FloatNoise).
	Secure     bool
	Accountant privacy.Accountant
	Sampler    *datasets.PoissonSampler
	Aggregator aggregate.Aggregator
	next       int
}

// MakePrivate returns a private trainer of m on data (the analogue of
// Opacus' make_private and make_private_with_epsilon): Poisson sampling at
// rate q, clipping to R, the aggregation rule (default "sum", DP-SGD's
// Σ g_i + N(0, σ²R² I)) and an accountant composing the Poisson-subsampled
// Gaussian mechanism every step: by default the PLD accountant (certified
// upper bound), or RDP (MTZ19) on request. With a target
// (ε, δ) and a number of steps, σ is the smallest that meets it. The
// release is the rule's secure (floating-point-safe) one unless
// cfg.FloatNoise.
//
// The model is a classifier (labels) when its spec has more than one class
// and a regression model (targets) otherwise; data must have the matching
// field and as many features per example as the model's input.
func MakePrivate(m model.Model, data *datasets.Dataset, cfg PrivateConfig) (*Private, error) {
	if m == nil || data == nil {
		return nil, errors.New("optim: make private: model and data are required")
	}
	if err := data.Validate(); err != nil {
		return nil, fmt.Errorf("optim: make private: %w", err)
	}
	labels := m.Spec().Classes > 1
	if labels && data.Labels == nil || !labels && data.Targets == nil {
		return nil, fmt.Errorf("optim: make private: the model needs %s, which %s lacks", map[bool]string{true: "labels", false: "targets"}[labels], data.Name)
	}
	if !(cfg.ClipNorm > 0) || math.IsInf(cfg.ClipNorm, 0) {
		return nil, fmt.Errorf("optim: make private: clipping norm R must be finite and > 0, got %v", cfg.ClipNorm)
	}
	if !(cfg.Delta > 0 && cfg.Delta < 1) {
		return nil, fmt.Errorf("optim: make private: δ must be in (0, 1), got %v", cfg.Delta)
	}
	q := cfg.Q
	if q == 0 {
		if cfg.BatchSize <= 0 || data.N == 0 {
			return nil, fmt.Errorf("optim: make private: set a sampling rate q or an expected batch size > 0 (got %d) on non-empty data", cfg.BatchSize)
		}
		q = float64(cfg.BatchSize) / float64(data.N)
	}
	if !(q > 0 && q <= 1) {
		return nil, fmt.Errorf("optim: make private: sampling rate q must be in (0, 1], got %v", q)
	}
	conv := cfg.Conversion.OrDefault()
	kind := cfg.Accountant
	if kind != "" {
		if err := privacy.CheckAccountantName(kind); err != nil {
			return nil, fmt.Errorf("optim: make private: %w", err)
		}
	}
	// step is the rule's (not subsampled) mechanism at σ for the
	// calibration: nil for the Gaussian, ptr-tsum's PTR mechanism
	// (aggregate.PTRMechanism, what the rule will plan).
	var step func(float64) privacy.Mechanism
	if cfg.Rule == "ptr-tsum" {
		step = func(s float64) privacy.Mechanism { return aggregate.PTRMechanism(ruleConfig(cfg, s)) }
	}
	if kind == "" && cfg.TargetEpsilon != 0 {
		kind = privacy.DefaultAccountant(privacy.PoissonSubsampled{Base: privacy.Gaussian{Sigma: 1}, Q: q})
		if step != nil {
			kind = privacy.DefaultAccountant(privacy.PoissonSubsampled{Base: step(1), Q: q})
		}
	}
	sigma := cfg.Sigma
	switch {
	case cfg.TargetEpsilon != 0 && cfg.Sigma != 0:
		return nil, errors.New("optim: make private: give either σ or a target ε, not both")
	case cfg.TargetEpsilon != 0:
		if cfg.Steps < 1 {
			return nil, fmt.Errorf("optim: make private: a target ε needs the number of steps (≥ 1), got %d", cfg.Steps)
		}
		if step != nil {
			// τ, b, δ₀ and F are checked before a search that would
			// report an invalid setting as an unreachable target.
			if o, ok := aggregate.RuleOptions("ptr-tsum", ruleConfig(cfg, 1)); ok {
				if err := o.Validate(); err != nil {
					return nil, fmt.Errorf("optim: make private: ptr-tsum: %w", err)
				}
			}
		}
		var err error
		sigma, err = privacy.CalibrateSigma(privacy.CalibrationRequest{
			TargetEpsilon: cfg.TargetEpsilon, Delta: cfg.Delta, Q: q, Steps: cfg.Steps, Conversion: cfg.Conversion,
			Accountant: kind, Step: step,
		})
		if err != nil {
			return nil, fmt.Errorf("optim: make private: %w", err)
		}
	case !(sigma > 0) || math.IsInf(sigma, 0):
		return nil, fmt.Errorf("optim: make private: noise multiplier σ must be finite and > 0 (or give a target ε), got %v", sigma)
	}
	rule := cfg.Rule
	if rule == "" {
		rule = "sum"
	}
	ptr := rule == "ptr-tsum"
	if !ptr && (cfg.Tau != 0 || cfg.LaplaceB != 0 || cfg.Delta0 != 0 || cfg.LRFail != 0 || cfg.LRPass != 0) {
		return nil, fmt.Errorf("optim: make private: τ, b, δ₀ and the branch learning rates are TSGD+PTR's (rule ptr-tsum), not %s's", rule)
	}
	if cfg.TrimLevel != 0 && !ptr && rule != "tsum" {
		return nil, fmt.Errorf("optim: make private: a trim level F is for tsum and ptr-tsum, not %s", rule)
	}
	if cfg.TrimLevel < 0 {
		return nil, fmt.Errorf("optim: make private: trim level F must be ≥ 0, got %d", cfg.TrimLevel)
	}
	ac := ruleConfig(cfg, sigma)
	ac.Options, ac.FloatNoise = cfg.Options, cfg.FloatNoise
	agg, err := aggregate.New(rule, ac)
	if err != nil {
		if !cfg.FloatNoise && strings.Contains(err.Error(), "no secure-noise mode") {
			return nil, fmt.Errorf("optim: make private: %w (set PrivateConfig.FloatNoise to run it with float noise)", err)
		}
		return nil, fmt.Errorf("optim: make private: %w", err)
	}
	// σ was given or calibrated for the Gaussian mechanism: the rule must
	// plan exactly that (the trainer accounts the rule's plan). ptr-tsum
	// plans its own PTR mechanism from σ, τ, b and δ₀ (aggregate.PTRTSum),
	// which a calibration must have used.
	mech, err := aggregate.PlannedMechanism(agg)
	want := privacy.Mechanism(privacy.Gaussian{Sigma: sigma})
	if ptr {
		want = aggregate.PTRMechanism(ac)
	}
	if err != nil {
		return nil, fmt.Errorf("optim: make private: %w", err)
	} else if mech != want {
		return nil, fmt.Errorf("optim: make private: rule %s plans the mechanism %+v, not the %s mechanism with σ = %v that MakePrivate states", rule, mech.Spec(), want.Spec().Kind, sigma)
	}
	if kind == "" {
		// PLD when the subsampled step has a proven privacy loss
		// distribution (the Gaussian, TSGD+PTR: docs/ptr-pld.md), else RDP.
		kind = privacy.DefaultAccountant(privacy.PoissonSubsampled{Base: mech, Q: q})
	}
	key := cfg.Key
	if key.IsZero() {
		var err error
		if key, err = randstream.NewSecret(); err != nil {
			return nil, fmt.Errorf("optim: make private: %w", err)
		}
	}
	sampler, err := datasets.NewPoissonSamplerKey(data.N, q, key.Derive("sampler"))
	if err != nil {
		return nil, fmt.Errorf("optim: make private: %w", err)
	}
	acct, err := privacy.NewAccountant(kind, privacy.AccountantConfig{Conversion: cfg.Conversion})
	if err != nil {
		return nil, fmt.Errorf("optim: make private: %w", err)
	}
	tc := Config{
		Model: m, Data: data, Labels: labels, Sampler: sampler, Aggregator: agg,
		LR: cfg.LR, Accountant: acct, Delta: cfg.Delta, Conversion: conv,
		NoiseKey: key.Derive("noise"), Workers: cfg.Workers,
		Optimizer: cfg.Optimizer, Accumulate: cfg.Accumulate,
	}
	if ptr && (cfg.LRFail != 0 || cfg.LRPass != 0) {
		tc.Policy = &PTRPolicy{LRFail: cfg.LRFail, LRPass: cfg.LRPass}
	}
	if _, ok := agg.(aggregate.Clipping); !ok {
		// A rule that does not state its R (aggregate.Clipping) was
		// configured with cfg.ClipNorm all the same: clip to it.
		tc.ClipNorm = cfg.ClipNorm
	}
	t, err := NewTrainer(tc)
	if err != nil {
		return nil, fmt.Errorf("optim: make private: %w", err)
	}
	return &Private{Trainer: t, Sigma: sigma, Q: q, Delta: cfg.Delta, Conversion: conv, Secure: aggregate.IsSecure(agg),
		Accountant: acct, Sampler: sampler, Aggregator: agg}, nil
}

// ruleConfig is the rule configuration of cfg at noise multiplier σ: σ, R
// and TSGD+PTR's τ, b, δ₀ and F (zero for the other rules, which MakePrivate
// checks).
func ruleConfig(cfg PrivateConfig, sigma float64) aggregate.Config {
	return aggregate.Config{Sigma: sigma, ClipNorm: cfg.ClipNorm, Tau: cfg.Tau, B: cfg.LaplaceB, Delta0: cfg.Delta0, F: cfg.TrimLevel}
}

// Train runs the next n steps (continuing after earlier calls) and returns
// the last step's result.
func (p *Private) Train(n int) (StepResult, error) {
	var last StepResult
	for i := 0; i < n; i++ {
		r, err := p.Step(p.next)
		if err != nil {
			return r, err
		}
		p.next++
		last = r
	}
	return last, nil
}

// Steps returns the number of steps Train has run.
func (p *Private) Steps() int { return p.next }

// Epsilon returns the (ε, δ) guarantee of the steps run so far at the
// configured δ, from the configured accountant (Guarantee.Accountant names
// it).
func (p *Private) Epsilon() (privacy.Guarantee, error) {
	return p.Accountant.EpsilonFor(p.Delta)
}
