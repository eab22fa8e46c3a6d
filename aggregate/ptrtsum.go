package aggregate

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/privtrain/privtrain/privacy"
)

// PTRTSum is PTR-TMEAN (Algorithm 3 of Wang et al., NeurIPS 2022): a
// Propose-Test-Release choice between SUM and the trimmed sum TSUM_F.
//
// With the norms sorted ascending, ‖g_(1)‖ ≤ … ≤ ‖g_(m)‖, Theorem 5.1 gives
// the largest local sensitivity of TSUM_F reachable with r additions or
// removals:
//
//	LS^(r)(S) = ‖g_(m−F+1+r)‖  for r ≤ F−1,   R  for r ≥ F.
//
// Edge cases (derived from the definition, which the theorem leaves
// implicit): when m−F+1+r ≤ 0, every dataset within r+1 edits has at most F
// points, so TSUM_F is identically 0 there and LS^(r) = 0; with F = 0,
// TSUM_0 = SUM and LS^(r) = R for all r. The safety margin
// Δ(S) = min{r : LS^(r)(S) > τ} ∈ [0, F] is found in O(F) after the sort
// (τ < R guarantees Δ ≤ F).
//
// The test draws Δ̂ = Δ + Lap(0, b) and compares it with B = b·log(1/(2δ₀)).
// Failure (Δ̂ ≤ B, PTRFailed, "+") releases SUM(S) + N(0, (σR)² I); success
// (PTRPassed, "-") releases TSUM_F(S) + N(0, (στ)² I). Both SUM and TSUM_F have
// L2 global sensitivity R, so with sensitivities normalized to 1 the step is
// privacy.PTR{Sigma1: σ, Tau: τ/R, B: b, Delta0: δ₀} (Theorem 4.3). σ > 0 is
// required.
//
// By default (without Config.FloatNoise) the test's bit is drawn exactly
// with probability P[Lap(b) > B − Δ] on the integer Δ and the branches are
// released on the integer grid with exactly rounded Gaussian noise (see
// secureRelease): the same mechanism, privacy.PTR, as post-processing. With
// FloatNoise the test and the branches use float noise.
type PTRTSum struct {
	clipNorm
	cfg       PTROptions
	mech      privacy.PTR
	f         int
	threshold float64
	s         scratch
	sorted    []float64
	sec       *secureRelease
	// tests and passed count the tests this instance ran and passed
	// (Summarizer, Stateful).
	tests, passed int
}

// CheckPTRTau is the one statement of the proposed sensitivity's range for
// PTR training: 0 < τ < R in gradient-norm units (τ ≥ R makes the test
// pointless: every clipped gradient is within τ, use tsum). The mechanism
// then sees the normalized τ/R ∈ (0, 1) (privacy.PTR accepts (0, 1]).
func CheckPTRTau(tau, clipNorm float64) error {
	if !(tau > 0 && tau < clipNorm) {
		return fmt.Errorf("PTR τ must satisfy 0 < τ < R = %v (gradient-norm units; τ/R is the normalized τ of `trainer account`), got %v (τ ≥ R makes the test pointless: use tsum)", clipNorm, tau)
	}
	return nil
}

// PTRMechanism is the one statement of TSGD+PTR's step mechanism for the
// rule configuration cfg: privacy.PTR{Sigma1: σ, Tau: τ/R, B: b, Delta0: δ₀},
// the test and both branches with the sensitivity R normalized to 1
// (Theorem 4.3; see PTRTSum). It does not validate: PTRTSum's constructor
// and privacy.PTR.Validate do.
func PTRMechanism(cfg Config) privacy.PTR { return ptrOptions(cfg).Mechanism() }

// PTROptions are ptr-tsum's settings (Config.Sigma, ClipNorm, F, Tau, B,
// Delta0, FloatNoise).
type PTROptions struct {
	// Sigma is σ of both branches' Gaussian noise (> 0).
	Sigma float64
	// ClipNorm is R, the L2 bound of every gradient (> 0).
	ClipNorm float64
	// F is the trim level of TSUM_F (≥ 0).
	F int
	// Tau is the proposed local sensitivity τ, 0 < τ < R (gradient-norm
	// units).
	Tau float64
	// B and Delta0 are the Laplace scale b and δ₀ of the test.
	B, Delta0 float64
	// FloatNoise opts out of the floating-point-safe test and release:
	// float noise, whose guarantee does NOT hold against floating-point
	// attacks (see Config.FloatNoise).
	FloatNoise bool
}

func ptrOptions(c Config) PTROptions {
	return PTROptions{Sigma: c.Sigma, ClipNorm: c.ClipNorm, F: c.F, Tau: c.Tau, B: c.B, Delta0: c.Delta0, FloatNoise: c.FloatNoise}
}

// Mechanism is privacy.PTR{Sigma1: σ, Tau: τ/R, B: b, Delta0: δ₀}, not
// validated (see PTRMechanism).
func (o PTROptions) Mechanism() privacy.PTR {
	return privacy.PTR{Sigma1: o.Sigma, Tau: o.Tau / o.ClipNorm, B: o.B, Delta0: o.Delta0}
}

// SecureRequested reports !o.FloatNoise: ptr-tsum has a secure release
// (SecureOptions).
func (o PTROptions) SecureRequested() bool { return !o.FloatNoise }

// Validate checks σ > 0, R, F, 0 < τ < R (CheckPTRTau) and the mechanism
// (privacy.PTR.Validate).
func (o PTROptions) Validate() error {
	if err := checkNoise(o.Sigma, o.ClipNorm); err != nil {
		return err
	}
	if err := checkTrim(o.F); err != nil {
		return err
	}
	if !(o.Sigma > 0) {
		return fmt.Errorf("ptr-tsum is private and needs σ > 0 (use tsum with σ = 0 for non-private trimming)")
	}
	if err := CheckPTRTau(o.Tau, o.ClipNorm); err != nil {
		return err
	}
	return o.Mechanism().Validate()
}

// NewPTRTSum returns the ptr-tsum rule for validated options o.
func NewPTRTSum(o PTROptions) (*PTRTSum, error) {
	cfg := o
	a := &PTRTSum{clipNorm: clipNorm(cfg.ClipNorm), cfg: cfg, mech: cfg.Mechanism(), f: cfg.F, threshold: cfg.B * math.Log(1/(2*cfg.Delta0))}
	if !cfg.FloatNoise {
		var err error
		if a.sec, err = newSecure(cfg, true); err != nil {
			return nil, err
		}
		a.threshold = a.sec.threshold()
	}
	return a, nil
}

// Mechanism returns the step's mechanism.
func (a *PTRTSum) Mechanism() privacy.Mechanism {
	if a.sec != nil {
		return a.sec.Mechanism()
	}
	return a.mech
}

// Name returns "ptr-tsum".
func (a *PTRTSum) Name() string { return "ptr-tsum" }

// TrimLevel returns F.
func (a *PTRTSum) TrimLevel() int { return a.f }

// SetTrimLevel sets F (negative values become 0).
func (a *PTRTSum) SetTrimLevel(f int) { a.f = max(f, 0) }

// Threshold returns the test threshold B = b·log(1/(2δ₀)) (with the secure
// release, the default: that value rounded up to the dyadic rational the
// test uses, see secureRelease).
func (a *PTRTSum) Threshold() float64 { return a.threshold }

// SafetyMargin returns Δ(S) of TSUM_F for the ascending norms sorted, trim
// level f, proposed sensitivity tau and clip norm r (Theorem 5.1; see
// PTRTSum for the edge cases). It requires tau < r.
func SafetyMargin(sorted []float64, f int, tau, r float64) int {
	m := len(sorted)
	for k := 0; k < f; k++ {
		pos := m - f + 1 + k // 1-based order statistic
		ls := 0.0
		if pos >= 1 {
			ls = sorted[pos-1]
		}
		if ls > tau {
			return k
		}
	}
	return f // LS^(F) = R > τ
}

// Aggregate runs the test and writes the released branch into out.
func (a *PTRTSum) Aggregate(g Grads, rng *rand.Rand, out []float32) (Report, error) {
	R := a.cfg.ClipNorm
	if err := checkGrads(g, out, true, R); err != nil {
		return Report{}, fmt.Errorf("ptr-tsum: %w", err)
	}
	if err := needRNG(rng, 1); err != nil {
		return Report{}, fmt.Errorf("ptr-tsum: %w", err)
	}
	a.s.grow(g.M, g.P)
	if a.sec != nil {
		return a.secureAggregate(g, rng, out)
	}
	a.s.idx = sortByNorm(g.Norms, a.s.idx)
	a.sorted = a.sorted[:0]
	for _, i := range a.s.idx {
		a.sorted = append(a.sorted, g.Norms[i])
	}
	delta := SafetyMargin(a.sorted, a.f, a.cfg.Tau, R)
	dhat := float64(delta) + a.cfg.B*(rng.ExpFloat64()-rng.ExpFloat64())
	d := PTRDiagnostics{Delta: delta, DeltaHat: dhat, F: a.f}
	rep := Report{Mechanism: a.mech}
	var std float64
	if dhat <= a.threshold {
		d.Branch = PTRFailed
		sumRows(g, a.s.idx, a.s.acc, out)
		std = a.cfg.Sigma * R
	} else {
		d.Branch = PTRPassed
		kept := max(g.M-a.f, 0)
		rep.Trimmed = g.M - kept
		sumRows(g, a.s.idx[:kept], a.s.acc, out)
		std = a.cfg.Sigma * a.cfg.Tau
	}
	if err := checkFinite(out); err != nil {
		return Report{}, fmt.Errorf("ptr-tsum: %w", err)
	}
	addNoise(out, std, rng)
	rep.Diagnostics = d
	a.count(d.Branch)
	return rep, nil
}

// secureAggregate is Aggregate in secure mode: Δ on the exact grid norms,
// then only the test's bit, drawn exactly with probability
// P[Lap(b) > B − Δ]; the noisy margin Δ̂ is never formed (DeltaHat is 0).
func (a *PTRTSum) secureAggregate(g Grads, rng *rand.Rand, out []float32) (Report, error) {
	if err := a.sec.prepare(g); err != nil {
		return Report{}, fmt.Errorf("ptr-tsum: %w", err)
	}
	a.s.idx = a.sec.sortBySumSq(a.s.idx)
	delta := a.sec.safetyMargin(a.s.idx, a.f)
	d := PTRDiagnostics{Delta: delta, F: a.f}
	rep := Report{Mechanism: a.sec.Mechanism()}
	if !a.sec.ptrPasses(delta, rng) {
		d.Branch = PTRFailed
		rep.Diagnostics = d
		a.sec.release(g, nil, a.sec.noise, rng, out)
		a.count(d.Branch)
		return rep, nil
	}
	d.Branch = PTRPassed
	rep.Diagnostics = d
	kept := max(g.M-a.f, 0)
	rep.Trimmed = g.M - kept
	a.sec.release(g, a.s.idx[kept:], a.sec.pass, rng, out)
	a.count(d.Branch)
	return rep, nil
}
