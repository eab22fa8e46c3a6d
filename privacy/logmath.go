package privacy

import "math"

// logSubExp returns log(e^a − e^b) for a ≥ b; it returns −Inf when a == b and
// NaN when a < b.
func logSubExp(a, b float64) float64 {
	switch {
	case math.IsInf(b, -1):
		return a
	case a < b:
		return math.NaN()
	case a == b:
		return math.Inf(-1)
	}
	return a + math.Log(-math.Expm1(b-a))
}

// logAbsBinom returns log|C(a, k)| and the sign of C(a, k) for real a > −1
// and integer k ≥ 0. For integer a and k > a the coefficient is zero: it
// returns (−Inf, 0).
func logAbsBinom(a float64, k int) (float64, int) {
	if k == 0 {
		return 0, 1
	}
	kf := float64(k)
	if a == math.Trunc(a) && kf > a {
		return math.Inf(-1), 0
	}
	la, _ := math.Lgamma(a + 1)
	lk, _ := math.Lgamma(kf + 1)
	lr, sr := math.Lgamma(a - kf + 1)
	return la - lk - lr, sr
}

// logErfc returns log(erfc(x)) accurately for all x, including x large
// enough for erfc to underflow.
func logErfc(x float64) float64 {
	if x < 20 {
		return math.Log(math.Erfc(x))
	}
	// Asymptotic expansion erfc(x) = e^{−x²}/(x√π) · Σ_k (−1)^k (2k−1)!!/(2x²)^k;
	// at x ≥ 20 the terms fall below 1e-17 after 6 of them.
	inv := 1 / (2 * x * x)
	sum, term := 1.0, 1.0
	for k := 1; k <= 8; k++ {
		term *= -float64(2*k-1) * inv
		sum += term
	}
	return -x*x - math.Log(x) - 0.5*math.Log(math.Pi) + math.Log(sum)
}
