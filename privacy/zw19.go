package privacy

import (
	"fmt"
	"math"
)

// Bound names of the Zhu & Wang (2019) amplification bounds.
const (
	boundZW19Upper       = "zw19-blackbox"
	boundZW19UpperInterp = "zw19-blackbox-interpolated"
	boundZW19Base        = "base-curve-no-amplification"
	boundZW19Lower       = "zw19-lower"
	boundZW19LowerFloor  = "zw19-lower-floor-order"
	zw19MaxOrder         = 1 << 16
)

// zw19BaseCurve returns ε_M(l) for l = 2..n and whether all are proven.
func zw19BaseCurve(base Mechanism, n int) ([]float64, bool, error) {
	eps := make([]float64, n+1)
	valid := true
	for l := 2; l <= n; l++ {
		v, err := base.RDP(float64(l))
		if err != nil {
			return nil, false, fmt.Errorf("base mechanism RDP at order %d: %w", l, err)
		}
		if math.IsNaN(v.Epsilon) || v.Epsilon < 0 {
			return nil, false, fmt.Errorf("base mechanism RDP at order %d is %v (bound %s)", l, v.Epsilon, v.Bound)
		}
		eps[l] = v.Epsilon
		valid = valid && v.Valid
	}
	return eps, valid, nil
}

// zw19LogTerm returns log C(n,l) + l log q + (n−l) log(1−q) for 0 < q < 1.
func zw19LogTerm(n, l int, q float64) float64 {
	ln, _ := math.Lgamma(float64(n + 1))
	ll, _ := math.Lgamma(float64(l + 1))
	lnl, _ := math.Lgamma(float64(n - l + 1))
	return ln - ll - lnl + float64(l)*math.Log(q) + float64(n-l)*math.Log1p(-q)
}

// logExpm1 returns log(e^x − 1) for x > 0 (−Inf at x = 0).
func logExpm1(x float64) float64 {
	if x > 0.5 {
		return x + math.Log1p(-math.Exp(-x))
	}
	return math.Log(math.Expm1(x))
}

// log1pExp returns log(1 + e^x).
func log1pExp(x float64) float64 {
	if x > 0 {
		return x + math.Log1p(math.Exp(-x))
	}
	return math.Log1p(math.Exp(x))
}

// zw19UpperLogMoment is Theorem 6 of Zhu & Wang (2019), "Poisson Subsampled
// Rényi Differential Privacy" (ICML), at an integer order n ≥ 2 and
// 0 < q < 1: with c_l = C(n,l) q^l (1−q)^{n−l},
//
//	e^{(n−1)ε(n)} ≤ (1−q)^{n−1}(nq−q+1) + c₂e^{ε_M(2)} + 3 Σ_{l=3..n} c_l e^{(l−1)ε_M(l)}.
//
// Since Σ_l c_l = 1, the right-hand side is rewritten as
// 1 + c₂(e^{ε_M(2)} − 1) + Σ_{l≥3} c_l (3e^{(l−1)ε_M(l)} − 1), a sum of
// non-negative terms, and evaluated in log space without cancellation.
func zw19UpperLogMoment(eps []float64, n int, q float64) float64 {
	logS := math.Inf(-1)
	for l := 2; l <= n; l++ {
		x := float64(l-1) * eps[l]
		var lt float64
		if l == 2 {
			lt = logExpm1(x)
		} else {
			lt = x + math.Log(3-math.Exp(-x)) // log(3e^x − 1)
		}
		logS = logAddExp(logS, zw19LogTerm(n, l, q)+lt)
	}
	return log1pExp(logS)
}

// zw19LowerLogMoment is the lower bound of Zhu & Wang (2019) at an integer
// order n ≥ 2 and 0 < q < 1:
//
//	e^{(n−1)ε(n)} ≥ (1−q)^{n−1}(nq−q+1) + Σ_{l=2..n} c_l e^{(l−1)ε_M(l)}
//	             = 1 + Σ_{l≥2} c_l (e^{(l−1)ε_M(l)} − 1),
//
// which is E_{P₀}[((1−q) + q P₁/P₀)^n] when one pair (P₁, P₀) of output
// distributions attains ε_M(l) = D_l(P₁‖P₀) at every order l (then it is the
// exact subsampled moment in that direction, e.g. for the Gaussian mechanism).
func zw19LowerLogMoment(eps []float64, n int, q float64) float64 {
	logS := math.Inf(-1)
	for l := 2; l <= n; l++ {
		if x := float64(l-1) * eps[l]; x > 0 {
			logS = logAddExp(logS, zw19LogTerm(n, l, q)+logExpm1(x))
		}
	}
	return log1pExp(logS)
}

// zw19Upper returns the black-box upper bound on the RDP of base Poisson-
// subsampled at rate 0 < q < 1, at any real order α > 1.
//
// At integer orders it is min(Theorem 6 of Zhu & Wang 2019, ε_M(α)): a
// subsampled mechanism is never less private than its base (joint convexity
// of the Rényi moment: E_α((1−q)P₀+qP₁ ‖ P₀) ≤ (1−q) + qE_α(P₁‖P₀), in both
// directions). At fractional α, with n = ⌊α⌋ and t = α−n, it interpolates
// the log-moment K(α) = (α−1)ε(α) linearly between the integer bounds,
// K(α) ≤ (1−t)K(n) + tK(n+1) (K(1) = 0): valid because K is convex in α for
// every pair of distributions (it is a cumulant generating function of the
// privacy loss), so the chord of the true K lies above it and the integer
// bounds lie above the true K at the endpoints. The result is again capped by
// the base curve at α.
func zw19Upper(base Mechanism, q, alpha float64) (RDPValue, error) {
	if alpha > zw19MaxOrder {
		return RDPValue{}, fmt.Errorf("zw19 black-box bound: order %v above the supported %d", alpha, zw19MaxOrder)
	}
	n := int(math.Floor(alpha))
	top := n
	if float64(n) != alpha {
		top = n + 1
	}
	eps, valid, err := zw19BaseCurve(base, top)
	if err != nil {
		return RDPValue{}, fmt.Errorf("zw19 black-box bound: %w", err)
	}
	k := func(m int) (float64, bool) { // integer-order log-moment bound, and whether the base curve won
		if m == 1 {
			return 0, false
		}
		zw := zw19UpperLogMoment(eps, m, q)
		if b := float64(m-1) * eps[m]; b < zw {
			return b, true
		}
		return zw, false
	}
	var (
		logK     float64
		fromBase bool
		bound    = boundZW19Upper
	)
	if top == n {
		logK, fromBase = k(n)
	} else {
		t := alpha - float64(n)
		k0, _ := k(n)
		k1, _ := k(n + 1)
		logK = (1-t)*k0 + t*k1
		bound = boundZW19UpperInterp
	}
	eps0 := logK / (alpha - 1)
	bv, err := base.RDP(alpha)
	if err != nil {
		return RDPValue{}, fmt.Errorf("zw19 black-box bound: base mechanism RDP at order %v: %w", alpha, err)
	}
	if bv.Epsilon < eps0 || fromBase {
		return RDPValue{Epsilon: bv.Epsilon, Bound: boundZW19Base + "(" + bv.Bound + ")", Valid: bv.Valid && valid}, nil
	}
	return RDPValue{Epsilon: math.Max(0, eps0), Bound: bound, Valid: valid}, nil
}

// zw19Lower returns the Zhu & Wang (2019) lower bound at order α for base
// subsampled at rate 0 < q < 1. It is NOT a privacy guarantee (Valid is
// always false): it is what the subsampled mechanism's RDP would be for a
// base whose RDP curve is attained by a single pair of neighbouring
// datasets, so no black-box amplification bound can be below it. At
// fractional α it returns the value at ⌊α⌋ (Rényi divergence is
// non-decreasing in the order), and 0 for α < 2.
func zw19Lower(base Mechanism, q, alpha float64) (RDPValue, error) {
	if alpha > zw19MaxOrder {
		return RDPValue{}, fmt.Errorf("zw19 lower bound: order %v above the supported %d", alpha, zw19MaxOrder)
	}
	n := int(math.Floor(alpha))
	bound := boundZW19Lower
	if float64(n) != alpha {
		bound = boundZW19LowerFloor
	}
	if n < 2 {
		return RDPValue{Epsilon: 0, Bound: bound, Valid: false}, nil
	}
	eps, _, err := zw19BaseCurve(base, n)
	if err != nil {
		return RDPValue{}, fmt.Errorf("zw19 lower bound: %w", err)
	}
	return RDPValue{Epsilon: math.Max(0, zw19LowerLogMoment(eps, n, q)/float64(n-1)), Bound: bound, Valid: false}, nil
}
