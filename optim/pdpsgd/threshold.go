package pdpsgd

import (
	"errors"
	"fmt"
	"math"
	"sort"
)

// Loss selects the threshold objective of section 4.1.
type Loss struct {
	// Adaptive selects loss_a (Eq. 7); otherwise loss_f (Eq. 6) with W1, W2.
	Adaptive bool
	W1, W2   float64
}

// Validate checks the weights of loss_f (finite, ≥ 0, not both 0).
func (l Loss) Validate() error {
	if l.Adaptive {
		return nil
	}
	if !(l.W1 >= 0) || !(l.W2 >= 0) || math.IsInf(l.W1, 0) || math.IsInf(l.W2, 0) || l.W1+l.W2 == 0 {
		return fmt.Errorf("threshold loss_f: weights must be finite, ≥ 0 and not both 0, got w1 = %v, w2 = %v", l.W1, l.W2)
	}
	return nil
}

// Wastes returns the two budget wastes of Eq. 6 at threshold τ for budgets
// values[j] held by counts[j] examples:
//
//	waste_u = Σ_{ε<τ} ε·(1 − π(ε, τ))  (budget of examples left out)
//	waste_s = Σ_{ε>τ} (ε − τ)          (budget above the threshold).
func Wastes(values, counts []float64, tau float64) (u, s float64) {
	for j, e := range values {
		switch {
		case e < tau:
			u += counts[j] * e * (1 - Rate(e, tau))
		case e > tau:
			s += counts[j] * (e - tau)
		}
	}
	return u, s
}

// Value returns the loss at threshold τ: loss_f = w1·waste_u + w2·waste_s,
// or loss_a = 2·waste_u·waste_s/(waste_u + waste_s) (0 when both are 0).
func (l Loss) Value(values, counts []float64, tau float64) float64 {
	u, s := Wastes(values, counts, tau)
	return l.combine(u, s)
}

func (l Loss) combine(u, s float64) float64 {
	if !l.Adaptive {
		return l.W1*u + l.W2*s
	}
	if u+s == 0 {
		return 0
	}
	return 2 * u * s / (u + s)
}

// Threshold returns the τ ∈ [min Φ, max Φ] minimising the loss over the
// budgets values[j] with multiplicities counts[j] > 0, and the loss there.
//
// Exactness. Between two consecutive distinct budgets a < b, waste_u(τ) =
// A − B/(e^τ − 1) with B > 0 is concave and waste_s(τ) is affine, and both
// are continuous at the budgets; loss_f is then concave on [a, b], and so is
// loss_a (the harmonic mean is concave and nondecreasing in each argument).
// A concave function attains its minimum over an interval at an endpoint,
// so the minimum over [min Φ, max Φ] is attained at a budget value, and
// evaluating every distinct budget (O(m log m) with prefix sums) is exact.
//
// loss_a is degenerate: waste_u = 0 at τ = min Φ and waste_s = 0 at
// τ = max Φ, so loss_a = 0 there and a plain argmin would always return an
// end of the range (the spec's "known pitfall"). Following the paper's
// intent (balance two positive wastes), loss_a is minimised over the
// budgets strictly inside (min Φ, max Φ), where both wastes are positive;
// ties go to the smaller τ. With fewer than three distinct budgets there is
// no such τ and Threshold returns max Φ (no budget above the threshold is
// wasted; the smaller budgets are sampled at π < 1).
func (l Loss) Threshold(values, counts []float64) (tau, loss float64, err error) {
	return l.ThresholdFrom(values, counts, 0)
}

// ErrNoThreshold reports that no candidate threshold is at least the
// smallest admissible τ.
var ErrNoThreshold = errors.New("threshold: no budget is at least the smallest admissible τ")

// ThresholdFrom is Threshold restricted to the candidates τ ≥ minTau (the
// ends of the range count for loss_a only when both wastes are positive,
// as in Threshold). It fails with ErrNoThreshold when no candidate is left.
func (l Loss) ThresholdFrom(values, counts []float64, minTau float64) (tau, loss float64, err error) {
	if err := l.Validate(); err != nil {
		return 0, 0, err
	}
	if len(values) == 0 || len(values) != len(counts) {
		return 0, 0, fmt.Errorf("threshold: need as many counts as budgets (≥ 1), got %d and %d", len(values), len(counts))
	}
	type vc struct{ v, c float64 }
	vs := make([]vc, 0, len(values))
	for j, v := range values {
		if !(v > 0) || math.IsInf(v, 0) || !(counts[j] > 0) || math.IsInf(counts[j], 0) {
			return 0, 0, fmt.Errorf("threshold: budget %v with count %v: want finite budgets > 0 and counts > 0", v, counts[j])
		}
		vs = append(vs, vc{v, counts[j]})
	}
	sort.Slice(vs, func(a, b int) bool { return vs[a].v < vs[b].v })
	// Merge equal budgets.
	m := 0
	for _, x := range vs {
		if m > 0 && vs[m-1].v == x.v {
			vs[m-1].c += x.c
			continue
		}
		vs[m] = x
		m++
	}
	vs = vs[:m]
	if vs[m-1].v < minTau {
		return 0, 0, ErrNoThreshold
	}
	if m == 1 {
		return vs[0].v, 0, nil
	}
	// Suffix sums for waste_s: Σ_{j>k} c_j ε_j and Σ_{j>k} c_j.
	sufE, sufC := make([]float64, m+1), make([]float64, m+1)
	for k := m - 1; k >= 0; k-- {
		sufE[k] = sufE[k+1] + vs[k].c*vs[k].v
		sufC[k] = sufC[k+1] + vs[k].c
	}
	lo, hi := 0, m-1
	if l.Adaptive {
		if m < 3 || vs[m-2].v < minTau {
			tau := vs[m-1].v
			return tau, l.Value(values, counts, tau), nil
		}
		lo, hi = 1, m-2
	}
	// Prefix sums for waste_u: Σ_{j<k} c_j ε_j and Σ_{j<k} c_j ε_j (e^{ε_j} − 1).
	var preE, preB float64
	best, bestTau := math.Inf(1), 0.0
	for k := 0; k < m; k++ {
		if k >= lo && k <= hi && vs[k].v >= minTau {
			tau := vs[k].v
			u, s := wastesAt(tau, preE, preB, sufE[k+1], sufC[k+1])
			if v := l.combine(u, s); v < best {
				best, bestTau = v, tau
			}
		}
		preE += vs[k].c * vs[k].v
		preB += vs[k].c * vs[k].v * math.Expm1(vs[k].v)
	}
	return bestTau, best, nil
}

// wastesAt evaluates the wastes at τ from the prefix sums of the budgets
// below τ and the suffix sums of those above.
func wastesAt(tau, preE, preB, sufE, sufC float64) (u, s float64) {
	u = preE - preB/math.Expm1(tau)
	if u < 0 {
		u = 0 // rounding; waste_u ≥ 0 exactly
	}
	s = sufE - tau*sufC
	if s < 0 {
		s = 0
	}
	return u, s
}
