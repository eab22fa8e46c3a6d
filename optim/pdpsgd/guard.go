package pdpsgd

import (
	"fmt"
	"math"
)

// NoiseRatio returns the noise per expected participant of round r,
// σ_R/(q·Σ_i π_{i,R}): the standard deviation of the Gaussian noise added to
// the clipped sum (σ·C) over the expected number of clipped gradients in it
// (q·Σπ, each of norm at most C). It is the inverse signal-to-noise ratio
// of the round's averaged gradient in units of C, whatever the normalisation
// (the nominal batch scales signal and noise alike). +Inf for a round with
// no participants. Every quantity is public (a function of the budgets and
// of earlier public choices), so comparing rounds by it leaks nothing.
func (r Round) NoiseRatio() float64 {
	p := r.Q * r.Participants
	if !(p > 0) {
		return math.Inf(1)
	}
	return r.Sigma / p
}

// NoiseGuard is the utility guard of multi-round PDP-SGD: a planned round
// whose noise per expected participant (Round.NoiseRatio) exceeds Factor
// times the first round's is not trained, and the run ends there.
//
// Why. A later round can only use what earlier rounds left, and with a tight
// accountant that can be almost nothing for almost nobody: on MNIST with
// budgets in [0.5, 1] (20 groups) loss_a puts τ_1 at the second-largest
// budget 0.974, round 1 on the PLD accountant spends exactly τ_1 of every
// π = 1 group, so round 2 is left with the largest group alone (3,000 of
// 60,000 examples, 3.2 expected per step of the nominal batch 64) and 0.026
// of budget, calibrated to σ = 1.99 for 11,719 steps: a noise ratio 35× the
// first round's, which took the model from 92.6% to 60.4%. (On RDP the same
// round had 0.30 of budget, σ = 0.98, a ratio 12× the first round's, and
// still cost 4–7 points; the loss_f rounds of the same table are at 1.5–2×
// and change accuracy by less than a point either way.)
//
// Why it is safe. Skipping a round only stops spending: the ledger is not
// charged, every example keeps its unspent budget (reported as unused), and
// the guarantee of the rounds already charged is unchanged. The decision is
// a function of public values only (σ_R, q and Σπ of the plans).
type NoiseGuard struct {
	// Factor > 0 is the largest admitted ratio of a round's noise per
	// expected participant to the first round's; 0 disables the guard.
	Factor float64
}

// Validate checks that Factor is 0 (off) or finite and ≥ 1 (a round no
// noisier than the first always passes).
func (g NoiseGuard) Validate() error {
	if g.Factor != 0 && !(g.Factor >= 1 && !math.IsInf(g.Factor, 0)) {
		return fmt.Errorf("noise guard: factor must be 0 (off) or finite and ≥ 1, got %v", g.Factor)
	}
	return nil
}

// Skip reports whether the guard skips the planned round next, given the
// first charged round first, and why. The first round itself (no charged
// round yet: first.Steps == 0) is never skipped.
func (g NoiseGuard) Skip(first, next Round) (bool, string) {
	if g.Factor == 0 || first.Steps == 0 {
		return false, ""
	}
	r0, r := first.NoiseRatio(), next.NoiseRatio()
	if r > g.Factor*r0 {
		return true, fmt.Sprintf("round %d: noise per expected participant σ/(q·Σπ) = %.4g/(%.4g·%.6g) = %.4g is %.3g× round 1's %.4g (guard factor %g): not trained, the run ends (its budget stays unspent)",
			next.Index+1, next.Sigma, next.Q, next.Participants, r, r/r0, r0, g.Factor)
	}
	return false, ""
}
