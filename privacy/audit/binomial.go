package audit

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mathext"
)

// checkCount validates k successes out of n trials and a one-sided error
// probability alpha.
func checkCount(k, n int, alpha float64) error {
	switch {
	case n < 1:
		return fmt.Errorf("audit: number of trials must be ≥ 1, got %d", n)
	case k < 0 || k > n:
		return fmt.Errorf("audit: successes must be in [0, %d], got %d", n, k)
	case !(alpha > 0 && alpha < 1):
		return fmt.Errorf("audit: error probability α must be in (0, 1), got %v", alpha)
	}
	return nil
}

// UpperCP is the one-sided Clopper–Pearson upper confidence bound on a
// binomial proportion p after k successes in n trials (Clopper & Pearson,
// Biometrika 1934): the p_U with P_{p_U}[Bin(n, p_U) ≤ k] = α, so that
// P[p > p_U] ≤ α for every p. It is the (1 − α)-quantile of
// Beta(k + 1, n − k), and 1 when k = n. Requires n ≥ 1, 0 ≤ k ≤ n,
// 0 < α < 1 (checked).
func UpperCP(k, n int, alpha float64) (float64, error) {
	if err := checkCount(k, n, alpha); err != nil {
		return 0, err
	}
	if k == n {
		return 1, nil
	}
	if k == 0 {
		// Closed form: (1 − p)^n = α.
		return -math.Expm1(math.Log(alpha) / float64(n)), nil
	}
	return mathext.InvRegIncBeta(float64(k+1), float64(n-k), 1-alpha), nil
}

// LowerCP is the one-sided Clopper–Pearson lower confidence bound: the p_L
// with P_{p_L}[Bin(n, p_L) ≥ k] = α, so P[p < p_L] ≤ α. It is the
// α-quantile of Beta(k, n − k + 1), and 0 when k = 0. Same conditions as
// UpperCP.
func LowerCP(k, n int, alpha float64) (float64, error) {
	if err := checkCount(k, n, alpha); err != nil {
		return 0, err
	}
	if k == 0 {
		return 0, nil
	}
	if k == n {
		return math.Exp(math.Log(alpha) / float64(n)), nil // p^n = α
	}
	return mathext.InvRegIncBeta(float64(k), float64(n-k+1), alpha), nil
}

// ClopperPearson is the two-sided exact interval at confidence 1 − alpha:
// [LowerCP(k, n, α/2), UpperCP(k, n, α/2)].
func ClopperPearson(k, n int, alpha float64) (lo, hi float64, err error) {
	if lo, err = LowerCP(k, n, alpha/2); err != nil {
		return 0, 0, err
	}
	if hi, err = UpperCP(k, n, alpha/2); err != nil {
		return 0, 0, err
	}
	return lo, hi, nil
}

// BinomialSF is P[Bin(n, p) ≥ k] for 0 ≤ p ≤ 1, computed as the
// regularized incomplete beta I_p(k, n − k + 1) (exact identity; 1 for
// k ≤ 0, 0 for k > n).
func BinomialSF(k, n int, p float64) float64 {
	switch {
	case k <= 0:
		return 1
	case k > n:
		return 0
	case p <= 0:
		return 0
	case p >= 1:
		return 1
	}
	return mathext.RegIncBeta(float64(k), float64(n-k+1), p)
}

// binomialLogPMF is log P[Bin(n, p) = k] for 0 < p < 1.
func binomialLogPMF(k, n int, p float64) float64 {
	lc, _ := math.Lgamma(float64(n + 1))
	lk, _ := math.Lgamma(float64(k + 1))
	lnk, _ := math.Lgamma(float64(n - k + 1))
	return lc - lk - lnk + float64(k)*math.Log(p) + float64(n-k)*math.Log1p(-p)
}
