package aggregate

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/privtrain/privtrain/internal/registry"
	"github.com/privtrain/privtrain/privacy"
)

// Config is the serialized form of a rule's settings (flags, run configs,
// checkpoints): the union of the built-in rules' fields. New translates it
// to the named rule's own options type (SumOptions, PTROptions,
// KrumOptions, …; RuleOptions), which the rule validates.
//
// Zero values of the optional knobs (MaxIter, Tol, Smoothing, Iters) select
// the documented defaults of the rule that uses them.
type Config struct {
	// Sigma is the noise multiplier σ: Gaussian noise of standard deviation
	// σ times the rule's L2 sensitivity. σ = 0 releases the exact aggregate
	// (non-private, Report.Mechanism nil).
	Sigma float64
	// ClipNorm is R, the L2 bound of every per-example gradient; required
	// (> 0) whenever σ > 0.
	ClipNorm float64
	// Tau is PTR's proposed local sensitivity τ of TSUM_F, in gradient-norm
	// units (unnormalized), 0 < τ < R.
	Tau float64
	// B is the Laplace scale b of PTR's test.
	B float64
	// Delta0 is δ₀ of PTR's test; the threshold is B·log(1/(2δ₀)).
	Delta0 float64
	// F is the trim level of tsum and ptr-tsum (the number of largest-norm
	// gradients dropped) and the assumed number f of Byzantine gradients of
	// krum and multi-krum.
	F int
	// TrimFraction is β of coord-trimmed-mean: ⌊β·m⌋ values are dropped at
	// each end of every coordinate, 0 ≤ β < 0.5.
	TrimFraction float64
	// Select is the number of gradients multi-krum averages (0: m − F).
	Select int
	// Smoothing is the Weiszfeld smoothing ν of geomed (0: 1e-6·max(R, 1)).
	Smoothing float64
	// MaxIter bounds the Weiszfeld iterations of geomed (0: 100).
	MaxIter int
	// Tol is geomed's stopping tolerance on the step length, relative to
	// max(R, 1) (0: 1e-6).
	Tol float64
	// Radius is the clipping radius ρ of centered-clip.
	Radius float64
	// Iters is the number of centered-clip iterations (0: 1).
	Iters int
	// Reference selects centered-clip's starting point: "previous" (the
	// previous release, default) or "zero".
	Reference string
	// ExpectedBatch, if > 0, is the expected batch size by which
	// centered-clip divides its previous (sum-scale) release to get a
	// mean-scale reference. 0 divides by the previous step's actual batch
	// size, which is data dependent and therefore allowed only for σ = 0.
	ExpectedBatch float64
	// FloatNoise opts out of the floating-point-safe release, which is the
	// default: a rule with a secure release (SecureNames: sum, tsum,
	// ptr-tsum, …; see secureRelease) releases its noise as exact integer
	// sums on a power-of-two grid with exactly rounded Gaussian noise and an
	// exact Bernoulli PTR test bit, post-processing the same mechanism as
	// the float path (same accounting). With FloatNoise it adds float noise
	// to a float aggregate instead, and its (ε, δ) guarantee does NOT hold
	// against floating-point attacks (Mironov, CCS 2012: the low-order bits
	// of the release leak the data). A rule that adds noise but has no
	// secure release (centered-clip and rgm-sum with noise, …) is refused by
	// New unless FloatNoise is set. Without noise (σ = 0, or a non-private
	// rule) the release is exact and FloatNoise changes nothing.
	FloatNoise bool
	// RGM is the Relative Gaussian Mechanism of rgm-sum (its η, R_rel, γ,
	// σ and dimension; see privacy.RGM).
	RGM privacy.RGM
	// Options holds the named numeric parameters of rules registered by
	// other packages (see Register and Option); the built-in rules read only
	// the typed fields above.
	Options map[string]float64
}

// Planned is implemented by the private rules (sum, tsum, ptr-tsum,
// centered-clip, rgm-sum): the (not subsampled) mechanism every step of
// theirs is, fixed at construction, or nil when they add no noise. It is
// the one statement of a run's step mechanism: a trainer plans its
// accounting with it (so secure and float modes are accounted by their own
// curves), and the rule's Report.Mechanism of every release is this value.
type Planned interface {
	Mechanism() privacy.Mechanism
}

// PlannedMechanism returns the validated mechanism every private step of a
// is, for accounting. It fails if a does not implement Planned or plans no
// noise (a non-private rule or σ = 0).
func PlannedMechanism(a Aggregator) (privacy.Mechanism, error) {
	p, ok := a.(Planned)
	if !ok {
		return nil, fmt.Errorf("aggregate: rule %s does not state its privacy mechanism (aggregate.Planned), so it cannot be accounted", a.Name())
	}
	m := p.Mechanism()
	if m == nil {
		return nil, fmt.Errorf("aggregate: rule %s adds no noise (σ = 0): nothing to account", a.Name())
	}
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("aggregate: rule %s: mechanism: %w", a.Name(), err)
	}
	return m, nil
}

// Trimmer is implemented by the rules with a trim level F (tsum, ptr-tsum);
// the optimizer's dynamic-F controller (Remark 5.3) adjusts it between steps.
type Trimmer interface {
	TrimLevel() int
	// SetTrimLevel sets F; negative values are treated as 0.
	SetTrimLevel(f int)
}

// Constructor builds a rule from the serialized Config; it reads the
// fields of cfg the rule needs and rejects invalid values with a
// descriptive error (New has already checked σ and R, see Config). Rules
// with their own options type register with RegisterRule instead.
type Constructor func(cfg Config) (Aggregator, error)

// rules maps each rule's name to its entry. It is written only by Register
// and RegisterRule (the built-ins register in init below, other packages in
// theirs) and guarded for callers that register later.
var rules = registry.New[rule]("aggregate", "rule")

// Register makes a rule that reads Config directly available to New under
// name, as database/sql's Register does for drivers: call it from the init
// function of the package that defines the rule. It panics if name is
// empty, ctor is nil or name is already registered (two rules must never
// answer to one name). RegisterRule registers a rule with its own options
// type.
//
// A private rule must implement Planned, stating the mechanism its every
// release is (with its sensitivity analysis in its doc comment), and report
// the same value in Report.Mechanism: the accountant charges exactly what
// the rule plans. New builds a noisy rule (Planned mechanism, or σ > 0)
// only if it releases floating-point-safe noise (SecureReleaser) or
// Config.FloatNoise is set: a rule with a secure release uses it unless
// Config.FloatNoise.
func Register(name string, ctor Constructor) {
	if ctor == nil {
		panic("aggregate: Register of rule " + strconv.Quote(name) + " with a nil constructor")
	}
	rules.Register(name, rule{ctor: func(c Config) (Aggregator, error) {
		if err := checkNoise(c.Sigma, c.ClipNorm); err != nil {
			return nil, err
		}
		return ctor(c)
	}})
}

// The built-in rules register themselves like any other rule, each with
// its own options type.
func init() {
	RegisterRule("sum", sumOptions, func(o SumOptions) (Aggregator, error) { return NewSum(o) })
	RegisterRule("tsum", tsumOptions, func(o TSumOptions) (Aggregator, error) { return NewTSum(o) })
	RegisterRule("ptr-tsum", ptrOptions, func(o PTROptions) (Aggregator, error) { return NewPTRTSum(o) })
	RegisterRule("coord-median", coordMedianOptions, func(o CoordMedianOptions) (Aggregator, error) { return NewCoordMedian(o) })
	RegisterRule("coord-trimmed-mean", coordTrimmedMeanOptions, func(o CoordTrimmedMeanOptions) (Aggregator, error) { return NewCoordTrimmedMean(o) })
	RegisterRule("krum", krumOptions(false), func(o KrumOptions) (Aggregator, error) { return NewKrum(o) })
	RegisterRule("multi-krum", krumOptions(true), func(o KrumOptions) (Aggregator, error) { return NewKrum(o) })
	RegisterRule("geomed", geoMedOptions, func(o GeoMedOptions) (Aggregator, error) { return NewGeoMed(o) })
	RegisterRule("centered-clip", centeredClipOptions, func(o CenteredClipOptions) (Aggregator, error) { return NewCenteredClip(o) })
	RegisterRule("rgm-sum", rgmOptions, func(o RGMOptions) (Aggregator, error) { return NewRGMSum(o.RGM) })
}

// New returns a new instance of the named rule configured by cfg, which is
// translated to the rule's own options and validated by the rule. A rule
// that adds noise must then release it floating-point safely (IsSecure)
// unless cfg.FloatNoise is set; New refuses it otherwise, naming the rule
// and the opt-out. Without noise (σ = 0) the zero Config works for every
// rule.
//
// Instances keep scratch buffers (and, for centered-clip, the previous
// release), so one instance must not be used by concurrent goroutines.
func New(name string, cfg Config) (Aggregator, error) {
	r, ok := rules.Lookup(name)
	if !ok {
		return nil, fmt.Errorf("aggregate: unknown rule %q; registered: %s", name, strings.Join(Names(), ", "))
	}
	a, err := r.ctor(cfg)
	if err != nil {
		return nil, fmt.Errorf("aggregate: rule %q: %w", name, err)
	}
	if a == nil {
		return nil, fmt.Errorf("aggregate: rule %q: constructor returned no aggregator", name)
	}
	if !cfg.FloatNoise && addsNoise(a, cfg) && !IsSecure(a) {
		// Asked of the instance (SecureReleaser): a rule without a secure
		// release, or one that ignored the request, would release float
		// noise by default.
		return nil, noSecureMode(name, r)
	}
	return a, nil
}

// addsNoise reports whether a, built from cfg, adds privacy noise: it
// plans a mechanism (Planned; rgm-sum's noise is in Config.RGM), or cfg
// asks for σ > 0 (a rule that does not state its plan).
func addsNoise(a Aggregator, cfg Config) bool {
	if p, ok := a.(Planned); ok && p.Mechanism() != nil {
		return true
	}
	return cfg.Sigma > 0
}

// noSecureMode is New's refusal of a noisy rule without a
// floating-point-safe release when Config.FloatNoise is not set.
func noSecureMode(name string, r rule) error {
	what := "no secure-noise mode (no floating-point-safe release"
	if has, known := r.hasSecureRelease(); known && has {
		// Its options say it has one, but this instance did not use it.
		what = "no secure-noise mode for these settings (its instance does not release floating-point-safe noise"
	}
	return fmt.Errorf("aggregate: rule %q adds noise but has %s; %s do): it runs only with float noise, opted into by setting Config.FloatNoise, whose guarantee does not hold against floating-point attacks (Mironov, CCS 2012)", name, what, strings.Join(SecureNames(), ", "))
}

// Names lists the registered rules in lexical order.
func Names() []string { return rules.Names() }

// SecureNames lists the registered rules whose options say they have a
// floating-point-safe release (SecureOptions), in lexical order.
func SecureNames() []string {
	var out []string
	for _, n := range rules.Names() {
		if r, ok := rules.Lookup(n); ok {
			if has, _ := r.hasSecureRelease(); has {
				out = append(out, n)
			}
		}
	}
	return out
}

// Option returns the named entry of cfg.Options and whether it is set.
func (c Config) Option(name string) (float64, bool) {
	v, ok := c.Options[name]
	return v, ok
}
