// Package coordclip is a robust private aggregation rule defined outside
// privtrain: the coordinate-clipped sum. Importing it registers the rule
// "coord-clipped-sum" with privtrain's aggregate registry.
package coordclip

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/privtrain/privtrain/aggregate"
	"github.com/privtrain/privtrain/privacy"
)

// Name is the rule's registered name.
const Name = "coord-clipped-sum"

// OptionC is the aggregate.Config.Options key of the coordinate bound c.
const OptionC = "coord_clip"

// normSlack is the relative tolerance on ‖g_i‖ ≤ R that absorbs float32
// rounding of rows clipped by the trainer; it is included in Δ below.
const normSlack = 1e-5

func init() {
	aggregate.Register(Name, func(cfg aggregate.Config) (aggregate.Aggregator, error) {
		c, ok := cfg.Option(OptionC)
		if !ok {
			return nil, fmt.Errorf("option %q (the coordinate bound c) is required", OptionC)
		}
		for k := range cfg.Options {
			if k != OptionC {
				return nil, fmt.Errorf("unknown option %q (only %q)", k, OptionC)
			}
		}
		a, err := New(cfg.Sigma, cfg.ClipNorm, c)
		if err != nil || cfg.FloatNoise || cfg.Sigma == 0 {
			// Float noise on request, or no noise at all (σ = 0).
			return a, err
		}
		return a, a.makeSecure()
	})
}

// Sum is the coordinate-clipped sum
//
//	CSUM(S) = Σ_i clip_c(g_i) + N(0, (σΔ)² I),  clip_c(x)_j = max(−c, min(c, x_j)),
//
// of per-example gradients g_i already clipped to ‖g_i‖ ≤ R.
//
// Robustness: one example moves every coordinate of the sum by at most c,
// where L2 clipping alone lets it put its whole norm R on one coordinate; a
// few corrupted examples cannot dominate a coordinate.
//
// Sensitivity (add/remove-one adjacency, as Poisson sampling uses): adding
// or removing example g changes the sum by clip_c(g). Clipping coordinates
// only shrinks magnitudes, so ‖clip_c(g)‖ ≤ ‖g‖ ≤ R, and every coordinate
// is at most c, so ‖clip_c(g)‖ ≤ c√P for dimension P. Hence the L2
// sensitivity is Δ = min(R, c√P) (with R enlarged by 1e-5 to cover the
// float32 rounding of the trainer's clipping). The noise N(0, (σΔ)² I)
// makes the release the Gaussian mechanism with multiplier σ at
// sensitivity Δ (Mironov 2017, Proposition 7: ε(α) = α/(2σ²)), reported as
// privacy.Gaussian{Sigma: σ}; the accountant composes its Poisson-subsampled
// version with the MTZ19 bound. When c√P < R the rule adds less noise than
// DP-SGD's sum for the same guarantee.
//
// Secure release (privtrain's default: aggregate.Config without FloatNoise,
// σ > 0): the coordinate-clipped rows are released through privtrain's
// secure sum (aggregate rule "sum", whose zero Config is secure) configured
// with clip norm
// Δ' = Δ·(1 + 1e-9) ≥ every clipped row's norm: exact integer sums on a
// power-of-two grid with exactly sampled noise of standard deviation σΔ',
// the floating-point-safe post-processing of the Gaussian mechanism with
// multiplier σ at sensitivity Δ' ≥ Δ. The rule then still reports
// privacy.Gaussian{σ}, and checks that the secure sum reports exactly that.
// With Config.FloatNoise the rule adds float noise, whose guarantee does
// not hold against floating-point attacks (Mironov, CCS 2012).
type Sum struct {
	sigma, r, c float64
	cf          float32 // c rounded down to float32, so |clip| ≤ c exactly

	secure bool
	inner  aggregate.Aggregator // the secure sum at Δ'(innerP)
	innerP int
	rows   []float32
	norms  []float64
}

// secureSlack is the relative margin of Δ' over Δ: it covers the float64
// rounding of the clipped rows' measured norms.
const secureSlack = 1e-9

// makeSecure switches the rule to the secure release (σ > 0 only), building
// the secure sum once at Δ = R to surface configuration errors now.
func (a *Sum) makeSecure() error {
	if !(a.sigma > 0) {
		return errors.New("the secure release needs σ > 0")
	}
	a.secure = true
	return a.secureSum(0)
}

// secureSum makes a.inner the secure sum for dimension p (p = 0: at R).
func (a *Sum) secureSum(p int) error {
	if a.inner != nil && a.innerP == p {
		return nil
	}
	d := a.r * (1 + normSlack)
	if p > 0 {
		d = a.Sensitivity(p)
	}
	inner, err := aggregate.New("sum", aggregate.Config{Sigma: a.sigma, ClipNorm: d * (1 + secureSlack)})
	if err != nil {
		return fmt.Errorf("secure release: %w", err)
	}
	a.inner, a.innerP = inner, p
	return nil
}

// SecureRelease reports whether the release is floating-point safe
// (aggregate.SecureReleaser): true when built with σ > 0 and without
// Config.FloatNoise.
func (a *Sum) SecureRelease() bool { return a.secure }

// New returns the rule with noise multiplier σ ≥ 0 (0: exact, non-private),
// L2 bound R (> 0 when σ > 0) and coordinate bound c > 0.
func New(sigma, r, c float64) (*Sum, error) {
	switch {
	case !(sigma >= 0) || math.IsInf(sigma, 0):
		return nil, fmt.Errorf("σ must be finite and ≥ 0, got %v", sigma)
	case sigma > 0 && (!(r > 0) || math.IsInf(r, 0)):
		return nil, fmt.Errorf("σ > 0 needs a finite clip norm R > 0, got %v", r)
	case !(c > 0) || math.IsInf(c, 0):
		return nil, fmt.Errorf("coordinate bound c must be finite and > 0, got %v", c)
	}
	cf := float32(c)
	if float64(cf) > c {
		cf = math.Nextafter32(cf, 0)
	}
	return &Sum{sigma: sigma, r: r, c: c, cf: cf}, nil
}

// Name returns "coord-clipped-sum".
func (a *Sum) Name() string { return Name }

// Mechanism states the mechanism every release is (aggregate.Planned):
// privacy.Gaussian{Sigma: σ}, the noise being calibrated to the rule's own
// sensitivity Δ (nil when σ = 0). The trainer accounts this plan.
func (a *Sum) Mechanism() privacy.Mechanism {
	if a.sigma > 0 {
		return privacy.Gaussian{Sigma: a.sigma}
	}
	return nil
}

// ClipNorm returns R, the per-example L2 bound the rule's sensitivity
// assumes (aggregate.Clipping): the trainer clips every gradient to it, so
// R is stated once, in the rule's configuration.
func (a *Sum) ClipNorm() float64 { return a.r }

// Sensitivity returns Δ = min(R(1 + 1e-5), c√P) for dimension p.
func (a *Sum) Sensitivity(p int) float64 {
	return math.Min(a.r*(1+normSlack), a.c*math.Sqrt(float64(p)))
}

// Aggregate writes CSUM(S) into out and reports the Gaussian mechanism
// (nil when σ = 0).
func (a *Sum) Aggregate(g aggregate.Grads, rng *rand.Rand, out []float32) (aggregate.Report, error) {
	if g.M < 0 || g.P <= 0 || len(g.G) != g.M*g.P || len(g.Norms) != g.M || len(out) != g.P {
		return aggregate.Report{}, fmt.Errorf("%s: inconsistent batch (M=%d, P=%d, %d values, %d norms, out %d)", Name, g.M, g.P, len(g.G), len(g.Norms), len(out))
	}
	private := a.sigma > 0
	if private {
		if math.Abs(g.ClipNorm-a.r) > 1e-9*a.r {
			return aggregate.Report{}, fmt.Errorf("%s: gradients clipped to %v, rule calibrated for R = %v", Name, g.ClipNorm, a.r)
		}
		for i, n := range g.Norms {
			if !(n <= a.r*(1+normSlack)) {
				return aggregate.Report{}, fmt.Errorf("%s: gradient %d has norm %v > R = %v: clip before a private aggregation", Name, i, n, a.r)
			}
		}
		if rng == nil {
			return aggregate.Report{}, errors.New(Name + ": nil random generator for a noisy rule")
		}
	}
	if private && a.secure {
		return a.aggregateSecure(g, rng, out)
	}
	clear(out)
	for i := 0; i < g.M; i++ {
		for j, v := range g.G[i*g.P : (i+1)*g.P] {
			out[j] += max(-a.cf, min(a.cf, v))
		}
	}
	for j, v := range out {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return aggregate.Report{}, fmt.Errorf("%s: coordinate %d is %v (NaN/Inf in gradients?)", Name, j, v)
		}
	}
	if !private {
		return aggregate.Report{}, nil
	}
	std := a.sigma * a.Sensitivity(g.P)
	for j := range out {
		out[j] += float32(std * rng.NormFloat64())
	}
	return aggregate.Report{Mechanism: privacy.Gaussian{Sigma: a.sigma}}, nil
}

// aggregateSecure releases the coordinate-clipped rows through the secure
// sum at Δ'(P) (see Sum).
func (a *Sum) aggregateSecure(g aggregate.Grads, rng *rand.Rand, out []float32) (aggregate.Report, error) {
	if err := a.secureSum(g.P); err != nil {
		return aggregate.Report{}, fmt.Errorf("%s: %w", Name, err)
	}
	a.rows = append(a.rows[:0], g.G...)
	a.norms = a.norms[:0]
	for i := 0; i < g.M; i++ {
		var s float64
		row := a.rows[i*g.P : (i+1)*g.P]
		for j, v := range row {
			v = max(-a.cf, min(a.cf, v))
			row[j] = v
			s += float64(v) * float64(v)
		}
		a.norms = append(a.norms, math.Sqrt(s))
	}
	cn := a.inner.(aggregate.Clipping).ClipNorm()
	rep, err := a.inner.Aggregate(aggregate.Grads{G: a.rows, Norms: a.norms, M: g.M, P: g.P, ClipNorm: cn}, rng, out)
	if err != nil {
		return aggregate.Report{}, fmt.Errorf("%s: %w", Name, err)
	}
	if want := a.Mechanism(); rep.Mechanism != want {
		return aggregate.Report{}, fmt.Errorf("%s: the secure sum reports the mechanism %v, not the planned %v", Name, rep.Mechanism, want)
	}
	return rep, nil
}
