package aggregate

import (
	"fmt"
	"math/rand/v2"

	"github.com/privtrain/privtrain/privacy"
)

// TSum is the norm-based trimmed sum TSUM_F(S) = Σ_{i ≤ m−F} g_(i) of the
// m−F smallest-norm gradients (0 if m ≤ F; equal norms ordered by index),
// plus N(0, (σR)² I): the TSGD+Gaussian baseline.
//
// Under add/remove adjacency with ‖g_i‖ ≤ R, TSUM_F changes by one kept
// gradient, so its L2 sensitivity is R and the step is the Gaussian
// mechanism with multiplier σ (nil Mechanism when σ = 0).
//
// By default (σ > 0 without Config.FloatNoise) the norms, the trimming and
// the release are on the integer grid (see secureRelease), post-processing
// the same Gaussian mechanism; with FloatNoise it adds float noise.
type TSum struct {
	clipNorm
	cfg TSumOptions
	f   int
	s   scratch
	sec *secureRelease
}

// TSumOptions are tsum's settings (Config.Sigma, ClipNorm, F, FloatNoise).
type TSumOptions struct {
	// Sigma is the noise multiplier σ (0: non-private trimming).
	Sigma float64
	// ClipNorm is R, the L2 bound of every gradient (> 0 when σ > 0).
	ClipNorm float64
	// F is the number of largest-norm gradients dropped (≥ 0).
	F int
	// FloatNoise opts out of the floating-point-safe release of σ > 0:
	// float noise, whose guarantee does NOT hold against floating-point
	// attacks (see Config.FloatNoise).
	FloatNoise bool
}

func tsumOptions(c Config) TSumOptions {
	return TSumOptions{Sigma: c.Sigma, ClipNorm: c.ClipNorm, F: c.F, FloatNoise: c.FloatNoise}
}

// Validate checks σ, R and F.
func (o TSumOptions) Validate() error {
	if err := checkNoise(o.Sigma, o.ClipNorm); err != nil {
		return err
	}
	return checkTrim(o.F)
}

// SecureRequested reports !o.FloatNoise: tsum has a secure release
// (SecureOptions).
func (o TSumOptions) SecureRequested() bool { return !o.FloatNoise }

// NewTSum returns the tsum rule for validated options o.
func NewTSum(o TSumOptions) (*TSum, error) {
	a := &TSum{clipNorm: clipNorm(o.ClipNorm), cfg: o, f: o.F}
	var err error
	if a.sec, err = secureUnlessFloat(o.FloatNoise, o.Sigma, o.ClipNorm); err != nil {
		return nil, err
	}
	return a, nil
}

// Mechanism returns the step's mechanism (nil for σ = 0).
func (a *TSum) Mechanism() privacy.Mechanism { return gaussianStep(a.sec, a.cfg.Sigma) }

// Name returns "tsum".
func (a *TSum) Name() string { return "tsum" }

// TrimLevel returns F.
func (a *TSum) TrimLevel() int { return a.f }

// SetTrimLevel sets F (negative values become 0).
func (a *TSum) SetTrimLevel(f int) { a.f = max(f, 0) }

// Aggregate writes TSUM_F plus noise into out.
func (a *TSum) Aggregate(g Grads, rng *rand.Rand, out []float32) (Report, error) {
	private := a.cfg.Sigma > 0
	std := a.cfg.Sigma * a.cfg.ClipNorm
	if err := checkGrads(g, out, private, a.cfg.ClipNorm); err != nil {
		return Report{}, fmt.Errorf("tsum: %w", err)
	}
	if err := needRNG(rng, std); err != nil {
		return Report{}, fmt.Errorf("tsum: %w", err)
	}
	a.s.grow(g.M, g.P)
	if a.sec != nil {
		if err := a.sec.prepare(g); err != nil {
			return Report{}, fmt.Errorf("tsum: %w", err)
		}
		a.s.idx = a.sec.sortBySumSq(a.s.idx)
		kept := max(g.M-a.f, 0)
		a.sec.release(g, a.s.idx[kept:], a.sec.noise, rng, out)
		return Report{Trimmed: g.M - kept, Mechanism: a.sec.Mechanism(), Diagnostics: TrimDiagnostics{F: a.f}}, nil
	}
	a.s.idx = sortByNorm(g.Norms, a.s.idx)
	kept := max(g.M-a.f, 0)
	sumRows(g, a.s.idx[:kept], a.s.acc, out)
	if err := checkFinite(out); err != nil {
		return Report{}, fmt.Errorf("tsum: %w", err)
	}
	addNoise(out, std, rng)
	rep := Report{Trimmed: g.M - kept, Diagnostics: TrimDiagnostics{F: a.f}}
	if private {
		rep.Mechanism = privacy.Gaussian{Sigma: a.cfg.Sigma}
	}
	return rep, nil
}
