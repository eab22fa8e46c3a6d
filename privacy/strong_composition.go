package privacy

import (
	"fmt"
	"math"
)

// StrongComposition returns an (epsTotal, deltaTotal)-DP guarantee for the
// k-fold adaptive composition of (eps, delta)-DP mechanisms, given a slack
// deltaSlack = δ' ∈ (0, 1); deltaTotal = 1 − (1−δ)^k (1−δ'). epsTotal is the
// smallest of three valid bounds (see StrongCompositionBound for which one):
//
//   - "kov15-thm3.3" — the optimal composition theorem of Kairouz, Oh &
//     Viswanath (2015), "The Composition Theorem for Differential Privacy",
//     Theorem 3.3: for every i ∈ {0, …, ⌊k/2⌋} the composition is
//     ((k−2i)ε, 1 − (1−δ)^k (1−δ_i))-DP with
//     δ_i = Σ_{ℓ<i} C(k,ℓ) (e^{(k−ℓ)ε} − e^{(k−2i+ℓ)ε}) / (1+e^ε)^k;
//     the smallest (k−2i)ε with δ_i ≤ δ' is used (computed in O(k), log space;
//     for k ≤ 10⁷).
//   - "kov15-thm3.4" — its closed-form relaxation (Theorem 3.4):
//     min{ kε, (e^ε−1)εk/(e^ε+1) + ε√(2k log(e + √(kε²)/δ')),
//     (e^ε−1)εk/(e^ε+1) + ε√(2k log(1/δ')) }, which is never worse than
//     Dwork, Rothblum & Vadhan (2010): ε√(2k log(1/δ')) + kε(e^ε−1) with
//     δ_total = kδ + δ'.
//   - "basic" — kε (with total δ at most kδ ≤ deltaTotal).
//
// So epsTotal ≤ k·eps always. Requires eps ≥ 0 finite, delta ∈ [0, 1),
// k ≥ 1 and deltaSlack ∈ (0, 1).
func StrongComposition(eps, delta float64, k int, deltaSlack float64) (epsTotal, deltaTotal float64, err error) {
	epsTotal, deltaTotal, _, err = StrongCompositionBound(eps, delta, k, deltaSlack)
	return epsTotal, deltaTotal, err
}

// strongCompositionMaxK bounds the O(k) optimal computation.
const strongCompositionMaxK = 10_000_000

// StrongCompositionBound is StrongComposition that also names the bound
// that gave epsTotal ("kov15-thm3.3", "kov15-thm3.4" or "basic").
func StrongCompositionBound(eps, delta float64, k int, deltaSlack float64) (epsTotal, deltaTotal float64, bound string, err error) {
	switch {
	case !(eps >= 0) || math.IsInf(eps, 0):
		return 0, 0, "", fmt.Errorf("strong composition: ε must be finite and ≥ 0, got %v", eps)
	case !(delta >= 0 && delta < 1):
		return 0, 0, "", fmt.Errorf("strong composition: δ must be in [0, 1), got %v", delta)
	case k < 1:
		return 0, 0, "", fmt.Errorf("strong composition: k must be ≥ 1, got %d", k)
	case !(deltaSlack > 0 && deltaSlack < 1):
		return 0, 0, "", fmt.Errorf("strong composition: slack δ' must be in (0, 1), got %v", deltaSlack)
	}
	kf := float64(k)
	// 1 − (1−δ)^k (1−δ') without cancellation.
	deltaTotal = -math.Expm1(kf*math.Log1p(-delta) + math.Log1p(-deltaSlack))
	epsTotal, bound = kf*eps, "basic"
	if eps == 0 {
		return 0, deltaTotal, bound, nil
	}
	if e := kov15Closed(eps, kf, deltaSlack); e < epsTotal {
		epsTotal, bound = e, "kov15-thm3.4"
	}
	if k <= strongCompositionMaxK {
		if e := kov15Optimal(eps, k, deltaSlack); e < epsTotal {
			epsTotal, bound = e, "kov15-thm3.3"
		}
	}
	return epsTotal, deltaTotal, bound, nil
}

// kov15Closed is the closed form of KOV15 Theorem 3.4 (without the kε term).
func kov15Closed(eps, k, slack float64) float64 {
	head := math.Expm1(eps) * eps * k / (math.Exp(eps) + 1)
	a := head + eps*math.Sqrt(2*k*math.Log(math.E+math.Sqrt(k*eps*eps)/slack))
	b := head + eps*math.Sqrt(2*k*math.Log(1/slack))
	return math.Min(a, b)
}

// kov15Optimal returns the smallest (k−2i)ε, i ≤ ⌊k/2⌋, whose δ_i (KOV15
// Theorem 3.3) is ≤ slack. δ_i = (P₁(i) − e^{(k−2i)ε} P₂(i))/(1+e^ε)^k with
// the prefix sums P₁(i) = Σ_{ℓ<i} C(k,ℓ)e^{(k−ℓ)ε}, P₂(i) = Σ_{ℓ<i} C(k,ℓ)e^{ℓε}.
func kov15Optimal(eps float64, k int, slack float64) float64 {
	kf := float64(k)
	norm := kf * logAddExp(0, eps) // log (1+e^ε)^k
	ls := math.Log(slack)
	p1, p2 := math.Inf(-1), math.Inf(-1)
	best := kf * eps // i = 0: δ_0 = 0
	for i := 1; i <= k/2; i++ {
		l := float64(i - 1)
		lb, _ := logAbsBinom(kf, i-1)
		p1 = logAddExp(p1, lb+(kf-l)*eps)
		p2 = logAddExp(p2, lb+l*eps)
		e := (kf - 2*float64(i)) * eps
		ld := logSubExp(p1, e+p2)
		if math.IsNaN(ld) { // rounding when δ_i ≈ 0
			ld = math.Inf(-1)
		}
		if ld-norm > ls {
			break // δ_i increases with i: no larger i can qualify
		}
		best = e
	}
	return best
}
