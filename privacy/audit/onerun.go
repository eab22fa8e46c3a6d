package audit

import (
	"fmt"
	"math"
	"slices"
)

// OneRunPValue is the p-value of the one-run audit of Steinke, Nasr &
// Jagielski ("Privacy Auditing with One (1) Training Run", NeurIPS 2023,
// Theorem 3.1 for δ = 0 and its δ > 0 extension, Section 5): m canaries are
// each included independently with probability ½, the auditor makes r
// guesses (abstaining on the other m − r) and v of them are correct. If the
// training algorithm is (ε, δ)-DP (add/remove of one canary), then
//
//	P[≥ v correct] ≤ P[Bin(r, q) ≥ v] + 2mδ · max_{1≤i≤v} P[v−i ≤ Bin(r, q) < v] / i,
//
// with q = e^ε/(1+e^ε) the accuracy of ε-DP randomized response. The value
// (capped at 1) is returned. Conditions (checked): 0 ≤ v ≤ r ≤ m, ε ≥ 0,
// 0 ≤ δ ≤ 1.
func OneRunPValue(m, r, v int, eps, delta float64) (float64, error) {
	if !(0 <= v && v <= r && r <= m) {
		return 0, fmt.Errorf("audit: one-run counts need 0 ≤ v ≤ r ≤ m, got v=%d r=%d m=%d", v, r, m)
	}
	if !(eps >= 0) || math.IsInf(eps, 0) {
		return 0, fmt.Errorf("audit: ε must be finite and ≥ 0, got %v", eps)
	}
	if !(delta >= 0 && delta <= 1) {
		return 0, fmt.Errorf("audit: δ must be in [0, 1], got %v", delta)
	}
	q := 1 / (1 + math.Exp(-eps))
	p := BinomialSF(v, r, q)
	if delta > 0 && v > 0 {
		// tail(i) = P[v−i ≤ Bin < v], accumulated from i = 1 upwards.
		var tail, worst float64
		for i := 1; i <= v; i++ {
			tail += math.Exp(binomialLogPMF(v-i, r, q))
			worst = math.Max(worst, tail/float64(i))
		}
		p += 2 * float64(m) * delta * worst
	}
	return math.Min(p, 1), nil
}

// maxAuditEpsilon caps the search: e^50 ≈ 5e21, far beyond anything the
// number of canaries of a real audit can certify.
const maxAuditEpsilon = 50

// OneRunEpsilon is the one-run audit's lower bound on ε at δ with confidence
// 1 − beta: the largest ε (found by bisection to 1e-6) whose OneRunPValue is
// ≤ beta. Any ε with p-value ≤ β is a valid bound — if the algorithm were
// (ε', δ)-DP for some ε' ≤ ε it would also be (ε, δ)-DP, and v correct
// guesses would have had probability ≤ β — so the returned value is always
// one at which the p-value was checked. 0 when even ε = 0 is not rejected.
func OneRunEpsilon(m, r, v int, delta, beta float64) (float64, error) {
	if !(beta > 0 && beta < 1) {
		return 0, fmt.Errorf("audit: β must be in (0, 1), got %v", beta)
	}
	ok := func(eps float64) (bool, error) {
		p, err := OneRunPValue(m, r, v, eps, delta)
		return p <= beta, err
	}
	if good, err := ok(0); err != nil || !good {
		return 0, err
	}
	lo, hi := 0.0, float64(maxAuditEpsilon)
	if good, err := ok(hi); err != nil {
		return 0, err
	} else if good {
		return hi, nil
	}
	for hi-lo > 1e-6 {
		mid := (lo + hi) / 2
		good, err := ok(mid)
		if err != nil {
			return 0, err
		}
		if good {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, nil
}

// OneRunResult is the outcome of a one-run audit.
type OneRunResult struct {
	// Epsilon is the ε lower bound at Delta with confidence 1 − Beta.
	Epsilon float64 `json:"empirical_epsilon"`
	Delta   float64 `json:"delta"`
	// Confidence is 1 − β for the reported bound (all guess counts tried).
	Confidence float64 `json:"confidence"`
	// Canaries m, Guesses r and Correct v of the guess count that gave the
	// best bound.
	Canaries int `json:"canaries"`
	Guesses  int `json:"guesses"`
	Correct  int `json:"correct"`
	// Included is how many canaries were included.
	Included int `json:"included"`
}

// OneRun scores a one-run audit: canary i had score scores[i] and was
// included iff included[i]. For each guess count k in guesses (each ≤ m,
// fixed before looking at the scores) the auditor guesses "included" for the
// ⌈k/2⌉ highest scores and "excluded" for the ⌊k/2⌋ lowest, abstaining on
// the rest; the best bound over the counts is returned. Each count is
// tested at β/len(guesses) (Bonferroni), so the reported bound holds with
// confidence 1 − beta.
func OneRun(scores []float64, included []bool, guesses []int, delta, beta float64) (OneRunResult, error) {
	m := len(scores)
	if m == 0 || len(included) != m {
		return OneRunResult{}, fmt.Errorf("audit: need one inclusion bit per canary score (%d scores, %d bits)", m, len(included))
	}
	if len(guesses) == 0 {
		return OneRunResult{}, fmt.Errorf("audit: no guess counts given")
	}
	for _, s := range scores {
		if math.IsNaN(s) {
			return OneRunResult{}, fmt.Errorf("audit: canary score is NaN")
		}
	}
	order := make([]int, m)
	for i := range order {
		order[i] = i
	}
	// Ascending score; ties by index, so the guesses never depend on the
	// inclusion bits through the sort.
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case scores[a] < scores[b]:
			return -1
		case scores[a] > scores[b]:
			return 1
		}
		return 0
	})
	res := OneRunResult{Delta: delta, Confidence: 1 - beta, Canaries: m}
	for _, in := range included {
		if in {
			res.Included++
		}
	}
	b := beta / float64(len(guesses))
	first := true
	for _, k := range guesses {
		if k < 1 || k > m {
			return OneRunResult{}, fmt.Errorf("audit: guess count %d is not in [1, %d]", k, m)
		}
		plus, minus := (k+1)/2, k/2
		v := 0
		for _, i := range order[m-plus:] {
			if included[i] {
				v++
			}
		}
		for _, i := range order[:minus] {
			if !included[i] {
				v++
			}
		}
		eps, err := OneRunEpsilon(m, k, v, delta, b)
		if err != nil {
			return OneRunResult{}, err
		}
		if first || eps > res.Epsilon {
			res.Epsilon, res.Guesses, res.Correct = eps, k, v
			first = false
		}
	}
	return res, nil
}
