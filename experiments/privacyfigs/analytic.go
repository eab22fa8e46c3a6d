package privacyfigs

import (
	"fmt"
	"math"
)

// gaussianProfile is the exact privacy profile of the Gaussian mechanism with
// noise-to-sensitivity ratio σ (Balle & Wang, "Improving the Gaussian
// Mechanism for Differential Privacy: Analytical Calibration and Optimal
// Denoising", ICML 2018, Theorem 8): the smallest δ for which it is
// (ε, δ)-DP,
//
//	δ(ε) = Φ(1/(2σ) − εσ) − e^ε Φ(−1/(2σ) − εσ),
//
// decreasing in ε ≥ 0 from δ(0) = 2Φ(1/(2σ)) − 1 to 0. The second term is
// evaluated as exp(ε + log Φ(·)) so that it neither overflows nor loses the
// product when Φ underflows.
func gaussianProfile(sigma, eps float64) float64 {
	a := 1 / (2 * sigma)
	phi := func(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }
	logPhi := func(x float64) float64 { return math.Log(0.5) + math.Log(math.Erfc(-x/math.Sqrt2)) }
	return phi(a-eps*sigma) - math.Exp(eps+logPhi(-a-eps*sigma))
}

// analyticGaussianEpsilon is the analytic Gaussian mechanism of Balle & Wang
// (ICML 2018, Theorem 8 and Algorithm 1): the smallest ε ≥ 0 for which the
// Gaussian mechanism with noise-to-sensitivity ratio σ is (ε, δ)-DP, found by
// bisection on the exact profile gaussianProfile to an absolute 1e-12. It is
// exact (no condition ε < 1), hence never above the classic bound
// √(2 log(1.25/δ))/σ of Dwork & Roth (2014, Theorem A.1) where that applies.
func analyticGaussianEpsilon(sigma, delta float64) (float64, error) {
	if !(sigma > 0) || math.IsInf(sigma, 0) {
		return 0, fmt.Errorf("analytic Gaussian: σ must be finite and > 0, got %v", sigma)
	}
	if !(delta > 0 && delta < 1) {
		return 0, fmt.Errorf("analytic Gaussian: δ must be in (0, 1), got %v", delta)
	}
	if gaussianProfile(sigma, 0) <= delta {
		return 0, nil
	}
	lo, hi := 0.0, 1.0
	for gaussianProfile(sigma, hi) > delta {
		lo, hi = hi, 2*hi
		if hi > 1e6 {
			return 0, fmt.Errorf("analytic Gaussian: no ε below 1e6 for σ = %v, δ = %v", sigma, delta)
		}
	}
	for hi-lo > 1e-12 {
		mid := (lo + hi) / 2
		if gaussianProfile(sigma, mid) > delta {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi, nil
}

// ptrDirectAnalytic is Theorem 4.2's composition argument (appendix A.1 of
// Wang et al., NeurIPS 2022: the Laplace test is (1/b, 0)-DP, the Gaussian
// release (ε_N, δ)-DP, and the test's false pass costs δ₀) with the Gaussian
// part's ε_N taken from the analytic Gaussian mechanism instead of the
// classic √(2 log(1.25/δ))/σ₁: one PTR run is (1/b + ε_N, δ₀ + δ)-DP. It is
// NOT the theorem as written (privtrain/privacy.PTRDirect is); it is the same proof
// with a tight Gaussian (ε, δ) curve, shown as an extra curve of Figures 1
// and 4 because it reproduces the caption's claim (see the package doc).
func ptrDirectAnalytic(sigma1, b, delta0, delta float64) (float64, error) {
	// PTRDirect's parameter conditions, except its ε_N < 1, which belongs to
	// the classic Gaussian bound and which the analytic Gaussian does not need.
	if !(b > 0) || math.IsInf(b, 0) {
		return 0, fmt.Errorf("ptr direct analysis (analytic Gaussian): b must be finite and > 0, got %v", b)
	}
	if !(delta0 > 0 && delta0 <= 0.5) || !(delta0+delta < 1) {
		return 0, fmt.Errorf("ptr direct analysis (analytic Gaussian): need 0 < δ₀ ≤ 1/2 and δ₀ + δ < 1, got δ₀ = %v, δ = %v", delta0, delta)
	}
	epsN, err := analyticGaussianEpsilon(sigma1, delta)
	if err != nil {
		return 0, err
	}
	return 1/b + epsN, nil
}
