package privacy

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/integrate/quad"
)

// Bound names used by the white-box bound for Poisson-subsampled PTR.
const (
	boundPTRWhiteBox         = "ptr-whitebox-thm4.4"
	boundPTRWhiteBoxUnproven = "ptr-whitebox-thm4.4-unproven"
	boundPoissonSubsampledQ0 = "poisson-subsampled-q0"
	whiteBoxMinSigma2        = 4.0
	laplaceMixPanelVariation = 4.0  // max variation of the log-integrand per quadrature panel
	laplaceMixNodesPerPanel  = 20   // Gauss–Legendre nodes per panel
	laplaceMixMaxPanels      = 4096 // cap on panels (extreme b, α)
	laplaceMixMinPanels      = 2
)

// WhiteBoxConditionError reports which hypothesis of Theorem 4.4 (full
// version, appendix A.2, of Wang et al., NeurIPS 2022) fails.
type WhiteBoxConditionError struct {
	// Condition is a short identifier: "q", "sigma1>=sigma2", "sigma2>=4",
	// "alpha-range" (1 < α ≤ σ₂²L/2 − 2 ln σ₂) or "alpha-ratio"
	// (α ≤ (σ₂²L²/2 − ln 5 − 2 ln σ₂)/(L + ln(q'α) + 1/(2σ₂²))).
	Condition string
	// Detail states the violated inequality with the numbers plugged in.
	Detail string
}

func (e *WhiteBoxConditionError) Error() string {
	return fmt.Sprintf("theorem 4.4 (white-box subsampled PTR) condition %q fails: %s", e.Condition, e.Detail)
}

// WhiteBoxConditions checks every hypothesis of the full Theorem 4.4 of Wang
// et al. (NeurIPS 2022, appendix A.2) for the PTR mechanism p Poisson-
// subsampled at rate q, at order alpha. It returns nil when the white-box
// bound is proven there and a *WhiteBoxConditionError naming the first
// failed condition otherwise:
//
//	q ≤ e^{−1/b}/(4 + e^{−1/b})                                   ("q")
//	σ₁ ≥ σ₂                                                        ("sigma1>=sigma2")
//	σ₂ ≥ 4                                                         ("sigma2>=4")
//	1 < α ≤ σ₂²L/2 − 2 ln σ₂                                       ("alpha-range")
//	α ≤ (σ₂²L²/2 − ln 5 − 2 ln σ₂) / (L + ln(q'α) + 1/(2σ₂²))      ("alpha-ratio")
//
// with q' = q/(q + (1−q)e^{−1/b}) and L = ln(1 + 1/(q'(α−1))); σ₁ = Sigma1
// and σ₂ = Tau·Sigma1 are noise-to-sensitivity ratios. The conditions are
// those of Lemma A.1 (Mironov, Talwar & Zhang 2019, Theorem 11) at the
// sampling rate q' ≥ A(s), the effective rate of the Gaussian release given
// the noisy test value; they are stated at σ₂ and imply the same conditions
// at σ₁ ≥ σ₂ (both right-hand sides increase with σ once they exceed 1).
// q = 0 satisfies every condition (nothing is released about the data).
func WhiteBoxConditions(q float64, p PTR, alpha float64) error {
	if err := p.Validate(); err != nil {
		return err
	}
	if !(q >= 0 && q <= 1) {
		return fmt.Errorf("white-box conditions: sampling rate q must be in [0, 1], got %v", q)
	}
	if err := checkOrder(alpha); err != nil {
		return err
	}
	if q == 0 {
		return nil
	}
	eb := math.Exp(-1 / p.B)
	if qmax := eb / (4 + eb); q > qmax {
		return &WhiteBoxConditionError{"q", fmt.Sprintf("q = %v > e^{-1/b}/(4+e^{-1/b}) = %.6g (b = %v)", q, qmax, p.B)}
	}
	s1, s2 := p.Sigma1, p.Sigma2()
	if s1 < s2 {
		return &WhiteBoxConditionError{"sigma1>=sigma2", fmt.Sprintf("σ₁ = %v < σ₂ = %v", s1, s2)}
	}
	if s2 < whiteBoxMinSigma2 {
		return &WhiteBoxConditionError{"sigma2>=4", fmt.Sprintf("σ₂ = τ·σ₁ = %v·%v = %v < 4", p.Tau, s1, s2)}
	}
	qp := q / (q + (1-q)*eb)
	L := math.Log1p(1 / (qp * (alpha - 1)))
	ls2 := math.Log(s2)
	if hi := 0.5*s2*s2*L - 2*ls2; !(alpha <= hi) {
		return &WhiteBoxConditionError{"alpha-range", fmt.Sprintf("α = %v > σ₂²L/2 − 2 ln σ₂ = %.6g (σ₂ = %v, q' = %.6g, L = %.6g)", alpha, hi, s2, qp, L)}
	}
	num := 0.5*s2*s2*L*L - math.Log(5) - 2*ls2
	den := L + math.Log(qp*alpha) + 1/(2*s2*s2)
	if hi := num / den; !(alpha <= hi) {
		return &WhiteBoxConditionError{"alpha-ratio", fmt.Sprintf("α = %v > (σ₂²L²/2 − ln 5 − 2 ln σ₂)/(L + ln(q'α) + 1/(2σ₂²)) = %.6g (σ₂ = %v, q' = %.6g, L = %.6g)", alpha, hi, s2, qp, L)}
	}
	return nil
}

// ptrWhiteBoxRDP is the bound of Theorem 4.4 (full version, appendix A.2,
// eqs. (42)–(44)) at order alpha for p subsampled at rate 0 < q ≤ 1, without
// checking its conditions:
//
//	ε(α) = log max(B₀, B₁, B₂) / (α−1),
//	B₀ = 1 + 2q²α(α−1)((1−δ₀)/σ₁² + δ₀/σ₂²),
//	B₁ = R_q^(α) + 2α(α−1)/σ₁² · [R_q^(α) − 2(1−q)R_q^(α−1) + (1−q)²R_q^(α−2)],
//	B₂ = R̃_q^(α) + 2α(α−1)/σ₁² · [R̃_q^(α) − 2(1−q)R̃_q^(α+1) + (1−q)²R̃_q^(α+2)].
//
// The appendix has the factor 1/σ₁² in B₁ and B₂ that the main text's
// statement omits (the main-text version is looser; the proof, eq. (74),
// gives the appendix one). The brackets equal E_{μ₀}[r^α A²] and
// E_{μ₀}[r^{1−α} A²] with r = μ/μ₀ and A = qμ₁/μ (eqs. (77)–(80)); they
// are evaluated in that form, which has no cancellation for small q, and
// R̃_q^(λ) = R_q^(1−λ) (eq. (82)).
func ptrWhiteBoxRDP(q float64, p PTR, alpha float64) float64 {
	s1, s2 := p.Sigma1, p.Sigma2()
	am1 := alpha - 1
	logB0 := math.Log1p(2 * q * q * alpha * am1 * ((1-p.Delta0)/(s1*s1) + p.Delta0/(s2*s2)))
	logC := math.Log(2*alpha*am1) - 2*math.Log(s1)
	logB1 := logAddExp(laplaceMixLogMoment(q, p.B, alpha, 0), logC+laplaceMixLogMoment(q, p.B, alpha, 2))
	logB2 := logAddExp(laplaceMixLogMoment(q, p.B, 1-alpha, 0), logC+laplaceMixLogMoment(q, p.B, 1-alpha, 2))
	return math.Max(0, math.Max(logB0, math.Max(logB1, logB2))/am1)
}

// LaplaceMixMoment returns log E_{s∼μ₀}[(μ(s)/μ₀(s))^λ · A(s)^k] for real λ,
// k ∈ {0, 1, 2, …}, where μ₀ = Lap(0, b), μ₁ = Lap(1, b), μ = (1−q)μ₀ + qμ₁
// and A = qμ₁/μ. With k = 0 it is log R_q^(λ) of Theorem 4.4 of Wang et al.
// (NeurIPS 2022); log R̃_q^(λ) = LaplaceMixLogMoment(q, b, 1−λ, 0).
//
// The ratio r = μ/μ₀ is constant on (−∞, 0] (r = 1−q+qe^{−1/b}) and on
// [1, ∞) (r = 1−q+qe^{1/b}), whose μ₀-masses are 1/2 and e^{−1/b}/2; on
// [0, 1], r(s) = 1−q+qe^{(2s−1)/b} and the integral is computed by composite
// Gauss–Legendre quadrature in log space, with panels small enough that the
// log-integrand varies by at most 4 on each (relative error ~1e-14).
func LaplaceMixLogMoment(q, b, lambda float64, k int) (float64, error) {
	switch {
	case !(q >= 0 && q <= 1):
		return 0, fmt.Errorf("laplace mixture moment: q must be in [0, 1], got %v", q)
	case !(b > 0) || math.IsInf(b, 0):
		return 0, fmt.Errorf("laplace mixture moment: b must be finite and > 0, got %v", b)
	case math.IsNaN(lambda) || math.IsInf(lambda, 0):
		return 0, fmt.Errorf("laplace mixture moment: order must be finite, got %v", lambda)
	case k < 0:
		return 0, fmt.Errorf("laplace mixture moment: power of A must be ≥ 0, got %d", k)
	}
	return laplaceMixLogMoment(q, b, lambda, k), nil
}

// laplaceMixLogMoment is LaplaceMixLogMoment without argument checks.
func laplaceMixLogMoment(q, b, lambda float64, k int) float64 {
	if q == 0 {
		if k > 0 {
			return math.Inf(-1)
		}
		return 0
	}
	kf := float64(k)
	// log r and log A at exponent x = (|s|−|s−1|)/b ∈ [−1/b, 1/b].
	logR := func(x float64) float64 { return logAddExp(math.Log1p(-q), math.Log(q)+x) }
	piece := func(x float64) float64 {
		lr := logR(x)
		v := lambda * lr
		if k > 0 {
			v += kf * (math.Log(q) + x - lr)
		}
		return v
	}
	// s ≤ 0: mass 1/2; s ≥ 1: mass e^{−1/b}/2.
	left := math.Log(0.5) + piece(-1/b)
	right := math.Log(0.5) - 1/b + piece(1/b)

	// s ∈ [0, 1]: density e^{−s/b}/(2b).
	variation := (1 + 2*math.Abs(lambda) + 2*kf) / b
	panels := int(math.Ceil(variation / laplaceMixPanelVariation))
	panels = max(laplaceMixMinPanels, min(panels, laplaceMixMaxPanels))
	xs := make([]float64, laplaceMixNodesPerPanel)
	ws := make([]float64, laplaceMixNodesPerPanel)
	h := 1 / float64(panels)
	logf := make([]float64, 0, panels*laplaceMixNodesPerPanel)
	logw := make([]float64, 0, panels*laplaceMixNodesPerPanel)
	mx := math.Inf(-1)
	for i := 0; i < panels; i++ {
		quad.Legendre{}.FixedLocations(xs, ws, float64(i)*h, float64(i+1)*h)
		for j, s := range xs {
			v := -s/b - math.Log(2*b) + piece((2*s-1)/b)
			logf = append(logf, v)
			logw = append(logw, math.Log(ws[j]))
			mx = math.Max(mx, v)
		}
	}
	var sum float64
	for i, v := range logf {
		sum += math.Exp(v + logw[i] - mx)
	}
	mid := mx + math.Log(sum)
	return logAddExp(logAddExp(left, right), mid)
}
