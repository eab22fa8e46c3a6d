package privacy

import (
	"fmt"
	"math"
)

// PTRDirect is the direct (ε, δ)-DP analysis of PTR with Gaussian release,
// Theorem 4.2 of Wang et al., "Renyi Differential Privacy of Propose-Test-
// Release and Applications to Private and Robust Machine Learning" (NeurIPS
// 2022): with GS_{f₁} = GS_{f₂} = 1 and σ₁ = σ₂/τ, one run of PTR is
// (ε_Lap + ε_N(δ), δ₀ + δ)-DP with
//
//	ε_Lap  = 1/b                       (Laplace mechanism on Δ, sensitivity 1),
//	ε_N(δ) = √(2 log(1.25/δ)) / σ₁     (classic Gaussian mechanism).
//
// The paper writes ε_Lap = e^{1/b} and ε_N = σ₁√(2 log(1.25/δ)); the Laplace
// mechanism with noise-to-sensitivity ratio b is (1/b, 0)-DP and the Gaussian
// mechanism with ratio σ₁ is (√(2 log(1.25/δ))/σ₁, δ)-DP, which is what the
// proof (appendix A.1) uses, so those are typos and are corrected here.
//
// Validity, checked at run time: σ₁ > 0, b > 0, 0 < δ < 1 and 0 < δ₀ ≤ 1/2
// (the test threshold b·log(1/(2δ₀)) has Pr[Lap(0,b) > threshold] = δ₀
// only for δ₀ ≤ 1/2), δ₀ + δ < 1, and ε_N(δ) < 1: the classic Gaussian
// mechanism bound (Dwork & Roth 2014, Theorem A.1) is proven only for
// ε ∈ (0, 1), so σ₁ must exceed √(2 log(1.25/δ)).
func PTRDirect(sigma1, b, delta0, delta float64) (eps, deltaTotal float64, err error) {
	switch {
	case !(sigma1 > 0) || math.IsInf(sigma1, 0):
		return 0, 0, fmt.Errorf("ptr direct analysis (theorem 4.2): σ₁ must be finite and > 0, got %v", sigma1)
	case !(b > 0) || math.IsInf(b, 0):
		return 0, 0, fmt.Errorf("ptr direct analysis (theorem 4.2): Laplace scale b must be finite and > 0, got %v", b)
	case !(delta > 0 && delta < 1):
		return 0, 0, fmt.Errorf("ptr direct analysis (theorem 4.2): δ must be in (0, 1), got %v", delta)
	case !(delta0 > 0 && delta0 <= 0.5):
		return 0, 0, fmt.Errorf("ptr direct analysis (theorem 4.2): δ₀ must be in (0, 1/2], got %v", delta0)
	case !(delta0+delta < 1):
		return 0, 0, fmt.Errorf("ptr direct analysis (theorem 4.2): δ₀ + δ = %v must be < 1", delta0+delta)
	}
	c := math.Sqrt(2 * math.Log(1.25/delta))
	epsN := c / sigma1
	if !(epsN < 1) {
		return 0, 0, fmt.Errorf("ptr direct analysis (theorem 4.2): the Gaussian part ε_N = √(2 log(1.25/δ))/σ₁ = %.4g is ≥ 1, outside the classic Gaussian mechanism theorem (needs σ₁ > %.4g for δ = %v)", epsN, c, delta)
	}
	return 1/b + epsN, delta0 + delta, nil
}
