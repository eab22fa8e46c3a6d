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
	cfg   Config
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

func newCenteredClip(cfg Config) (Aggregator, error) {
	a := &CenteredClip{clipNorm: clipNorm(cfg.ClipNorm), cfg: cfg, iters: cfg.Iters}
	if a.iters == 0 {
		a.iters = 1
	}
	switch cfg.Reference {
	case "", "previous":
	case "zero":
		a.zero = true
	default:
		return nil, fmt.Errorf("reference must be \"previous\" or \"zero\", got %q", cfg.Reference)
	}
	switch {
	case !(cfg.Radius > 0) || math.IsInf(cfg.Radius, 0):
		return nil, fmt.Errorf("clipping radius ρ must be finite and > 0, got %v", cfg.Radius)
	case a.iters < 0:
		return nil, fmt.Errorf("iterations must be > 0, got %d", cfg.Iters)
	case !(cfg.ExpectedBatch >= 0) || math.IsInf(cfg.ExpectedBatch, 0):
		return nil, fmt.Errorf("expected batch size must be finite and ≥ 0, got %v", cfg.ExpectedBatch)
	}
	if cfg.Sigma > 0 {
		if a.iters != 1 {
			return nil, fmt.Errorf("private centered clipping (σ > 0) supports only 1 iteration (got %d): later iterations use a data-dependent reference", a.iters)
		}
		if !a.zero && cfg.ExpectedBatch == 0 {
			return nil, fmt.Errorf("private centered clipping with reference \"previous\" needs ExpectedBatch > 0 (dividing by the previous batch size is data dependent)")
		}
	}
	return a, nil
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
