package audit

import (
	"fmt"
	"math"
)

// EpsilonFromRates returns the smallest ε ≥ 0 that a test with false-positive
// rate fpr and false-negative rate fnr leaves possible under (ε, δ)-DP.
//
// Source: the hypothesis-testing characterization of DP (Wasserman & Zhou
// 2010; Kairouz, Oh & Viswanath, ICML 2015, Theorem 2.1): a mechanism is
// (ε, δ)-DP only if every test between neighbouring inputs satisfies
//
//	fpr + e^ε·fnr ≥ 1 − δ   and   fnr + e^ε·fpr ≥ 1 − δ,
//
// hence ε ≥ max{log((1−δ−fpr)/fnr), log((1−δ−fnr)/fpr), 0} — the bound used
// by Jagielski, Ullman & Oprea (NeurIPS 2020) and Nasr et al. (USENIX
// Security 2023). Both expressions decrease in fpr and fnr, so plugging in
// upper confidence bounds of the rates gives a lower confidence bound on ε.
// Conditions (checked): fpr, fnr ∈ [0, 1] and δ ∈ [0, 1). A zero rate with
// a positive numerator gives +Inf.
func EpsilonFromRates(fpr, fnr, delta float64) (float64, error) {
	if !(fpr >= 0 && fpr <= 1) || !(fnr >= 0 && fnr <= 1) {
		return 0, fmt.Errorf("audit: error rates must be in [0, 1], got fpr %v, fnr %v", fpr, fnr)
	}
	if !(delta >= 0 && delta < 1) {
		return 0, fmt.Errorf("audit: δ must be in [0, 1), got %v", delta)
	}
	eps := 0.0
	for _, pair := range [2][2]float64{{fpr, fnr}, {fnr, fpr}} {
		num := 1 - delta - pair[0]
		if num <= 0 {
			continue
		}
		if pair[1] == 0 {
			return math.Inf(1), nil
		}
		eps = math.Max(eps, math.Log(num/pair[1]))
	}
	return eps, nil
}

// Counts are the outcomes of a test "guess A when the event E occurs" run on
// independent releases: E occurred KA times in NA releases on input A and
// KB times in NB releases on input B.
type Counts struct {
	KA int `json:"k_a"`
	NA int `json:"n_a"`
	KB int `json:"k_b"`
	NB int `json:"n_b"`
}

// EmpiricalEpsilon is the lower confidence bound on ε at δ from the test
// counts c: with probability at least 1 − alpha (over the releases), the
// mechanism is not (ε, δ)-DP for any ε below the returned value.
//
// The false-negative rate 1 − P_A(E) and the false-positive rate P_B(E) are
// bounded above by one-sided Clopper–Pearson bounds at α/2 each (a union
// bound gives 1 − α jointly) and passed to EpsilonFromRates. The test must
// have been chosen without looking at these releases (e.g. on a disjoint
// half), or the confidence statement does not hold.
func EmpiricalEpsilon(c Counts, delta, alpha float64) (float64, error) {
	pA, err := LowerCP(c.KA, c.NA, alpha/2)
	if err != nil {
		return 0, fmt.Errorf("audit: releases on A: %w", err)
	}
	fpr, err := UpperCP(c.KB, c.NB, alpha/2)
	if err != nil {
		return 0, fmt.Errorf("audit: releases on B: %w", err)
	}
	return EpsilonFromRates(fpr, 1-pA, delta)
}
