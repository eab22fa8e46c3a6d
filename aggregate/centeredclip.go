package aggregate

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/privtrain/privtrain/privacy"
)

// CenteredClip is centered clipping (Karimireddy, He and Jaggi, ICML 2021):
// from a reference v₀, Iters times (default 1)
//
//	v ← v + (1/m) Σ_i clip(g_i − v, ρ),   clip(x, ρ) = x·min(1, ρ/‖x‖),
//
// released on the sum scale as m·v (= m·v₀ + Σ_i clip(g_i − v₀, ρ) for one
// iteration; m·v₀ for an empty batch). The reference is "zero" or
// "previous": the previous release divided by ExpectedBatch (or, with
// ExpectedBatch = 0, by the previous batch size; zero at the first step).
// Cost O(Iters·m·P).
//
// Sensitivity: with one iteration and a public reference (zero, or the
// previous release over the fixed ExpectedBatch), adding or removing g
// changes the release by v₀ + clip(g − v₀, ρ), a point of the segment
// [v₀, g], so its norm is at most S = min(max(R, ‖v₀‖), ‖v₀‖ + ρ). The
// release gets N(0, (σS)² I) and the step is privacy.Gaussian{σ}. Private
// use (σ > 0) therefore requires Iters = 1 and a public reference; more
// iterations make the reference data dependent and are allowed only with
// σ = 0.
type CenteredClip struct {
	clipNorm
	cfg   CenteredClipOptions
	iters int
	zero  bool
	prev  []float32 // previous release; nil before the first step
	prevM int
	v, d  []float64
	acc   []float64
}

// Mechanism returns the step's mechanism, privacy.Gaussian{σ} (nil for σ = 0).
func (a *CenteredClip) Mechanism() privacy.Mechanism {
	if a.cfg.Sigma > 0 {
		return privacy.Gaussian{Sigma: a.cfg.Sigma}
	}
	return nil
}

// CenteredClipOptions are centered-clip's settings (Config.Sigma,
// ClipNorm, Radius, Iters, Reference, ExpectedBatch).
type CenteredClipOptions struct {
	// Sigma is the noise multiplier σ (0: non-private).
	Sigma float64
	// ClipNorm is R, the L2 bound of every gradient (> 0 when σ > 0).
	ClipNorm float64
	// Radius is the clipping radius ρ (> 0).
	Radius float64
	// Iters is the number of iterations (0: 1; σ > 0 needs 1).
	Iters int
	// Reference is "previous" (or "": the previous release) or "zero".
	Reference string
	// ExpectedBatch divides the previous release (0: the previous batch
	// size, σ = 0 only).
	ExpectedBatch float64
}

func centeredClipOptions(c Config) CenteredClipOptions {
	return CenteredClipOptions{Sigma: c.Sigma, ClipNorm: c.ClipNorm, Radius: c.Radius, Iters: c.Iters, Reference: c.Reference, ExpectedBatch: c.ExpectedBatch}
}

// Validate checks σ, R, ρ, the iterations, the reference and the expected
// batch, and that a private run has one iteration and a public reference.
func (o CenteredClipOptions) Validate() error {
	if err := checkNoise(o.Sigma, o.ClipNorm); err != nil {
		return err
	}
	iters := o.iters()
	switch o.Reference {
	case "", "previous", "zero":
	default:
		return fmt.Errorf("reference must be \"previous\" or \"zero\", got %q", o.Reference)
	}
	switch {
	case !(o.Radius > 0) || math.IsInf(o.Radius, 0):
		return fmt.Errorf("clipping radius ρ must be finite and > 0, got %v", o.Radius)
	case iters < 0:
		return fmt.Errorf("iterations must be > 0, got %d", o.Iters)
	case !(o.ExpectedBatch >= 0) || math.IsInf(o.ExpectedBatch, 0):
		return fmt.Errorf("expected batch size must be finite and ≥ 0, got %v", o.ExpectedBatch)
	}
	if o.Sigma > 0 {
		if iters != 1 {
			return fmt.Errorf("private centered clipping (σ > 0) supports only 1 iteration (got %d): later iterations use a data-dependent reference", iters)
		}
		if o.Reference != "zero" && o.ExpectedBatch == 0 {
			return fmt.Errorf("private centered clipping with reference \"previous\" needs ExpectedBatch > 0 (dividing by the previous batch size is data dependent)")
		}
	}
	return nil
}

// iters is Iters with its default (0: 1).
func (o CenteredClipOptions) iters() int {
	if o.Iters == 0 {
		return 1
	}
	return o.Iters
}

// NewCenteredClip returns the centered-clip rule for validated options o.
func NewCenteredClip(o CenteredClipOptions) (*CenteredClip, error) {
	return &CenteredClip{clipNorm: clipNorm(o.ClipNorm), cfg: o, iters: o.iters(), zero: o.Reference == "zero"}, nil
}

// Name returns "centered-clip".
func (a *CenteredClip) Name() string { return "centered-clip" }

// Aggregate writes m·v plus noise into out and remembers the release.
func (a *CenteredClip) Aggregate(g Grads, rng *rand.Rand, out []float32) (Report, error) {
	private := a.cfg.Sigma > 0
	if err := checkGrads(g, out, private, a.cfg.ClipNorm); err != nil {
		return Report{}, fmt.Errorf("centered-clip: %w", err)
	}
	if err := needRNG(rng, a.cfg.Sigma); err != nil {
		return Report{}, fmt.Errorf("centered-clip: %w", err)
	}
	m, p := g.M, g.P
	if len(a.v) != p {
		a.v, a.d, a.acc = make([]float64, p), make([]float64, p), make([]float64, p)
		a.prev = nil
	}
	v := a.v
	clear(v)
	if !a.zero && a.prev != nil {
		div := a.cfg.ExpectedBatch
		if div == 0 {
			div = float64(max(a.prevM, 1))
		}
		for j, x := range a.prev {
			v[j] = float64(x) / div
		}
	}
	refNorm := 0.0
	for _, x := range v {
		refNorm += x * x
	}
	refNorm = math.Sqrt(refNorm)
	rho := a.cfg.Radius
	for it := 0; it < a.iters && m > 0; it++ {
		clear(a.acc)
		for i := 0; i < m; i++ {
			r := row(g, i)
			n := 0.0
			for j, x := range r {
				a.d[j] = float64(x) - v[j]
				n += a.d[j] * a.d[j]
			}
			c := 1.0
			if n = math.Sqrt(n); n > rho {
				c = rho / n
			}
			for j, x := range a.d {
				a.acc[j] += c * x
			}
		}
		for j := range v {
			v[j] += a.acc[j] / float64(m)
		}
	}
	for j := range out {
		out[j] = float32(float64(m) * v[j])
	}
	if err := checkFinite(out); err != nil {
		return Report{}, fmt.Errorf("centered-clip: %w", err)
	}
	var rep Report
	if private {
		sens := math.Min(math.Max(a.cfg.ClipNorm, refNorm), refNorm+rho)
		addNoise(out, a.cfg.Sigma*sens, rng)
		rep.Mechanism = privacy.Gaussian{Sigma: a.cfg.Sigma}
	}
	if a.prev == nil {
		a.prev = make([]float32, p)
	}
	copy(a.prev, out)
	a.prevM = m
	return rep, nil
}
