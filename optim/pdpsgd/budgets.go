package pdpsgd

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/privtrain/privtrain/internal/fileutil"
	"github.com/privtrain/privtrain/randstream"
)

// Budget is one example's privacy requirement (ε_i, δ_i) of
// (Φ, Δ)-personalized DP (Definition 2.3).
type Budget struct {
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
}

func checkBudget(b Budget) error {
	if !(b.Epsilon > 0) || math.IsInf(b.Epsilon, 0) {
		return fmt.Errorf("ε must be finite and > 0, got %v", b.Epsilon)
	}
	if !(b.Delta > 0 && b.Delta < 1) {
		return fmt.Errorf("δ must be in (0, 1), got %v", b.Delta)
	}
	return nil
}

// ReadBudgets reads per-example budgets for n examples from CSV rows
// "index,epsilon[,delta]" (an optional header row starting with "index" is
// skipped; blank lines and lines starting with '#' are ignored). Every index
// in [0, n) must appear exactly once; a row without δ gets defaultDelta.
func ReadBudgets(r io.Reader, n int, defaultDelta float64) ([]Budget, error) {
	if n < 1 {
		return nil, fmt.Errorf("budgets: need n ≥ 1 examples, got %d", n)
	}
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.Comment = '#'
	cr.TrimLeadingSpace = true
	out := make([]Budget, n)
	seen := make([]bool, n)
	count := 0
	for line := 1; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("budgets: %w", err)
		}
		if line == 1 && len(rec) > 0 && strings.EqualFold(strings.TrimSpace(rec[0]), "index") {
			continue
		}
		row, _ := cr.FieldPos(0)
		if len(rec) != 2 && len(rec) != 3 {
			return nil, fmt.Errorf("budgets: line %d: want index,epsilon[,delta], got %d fields", row, len(rec))
		}
		idx, err := strconv.Atoi(strings.TrimSpace(rec[0]))
		if err != nil || idx < 0 || idx >= n {
			return nil, fmt.Errorf("budgets: line %d: index %q is not in [0, %d)", row, rec[0], n)
		}
		if seen[idx] {
			return nil, fmt.Errorf("budgets: line %d: index %d listed twice", row, idx)
		}
		b := Budget{Delta: defaultDelta}
		if b.Epsilon, err = strconv.ParseFloat(strings.TrimSpace(rec[1]), 64); err != nil {
			return nil, fmt.Errorf("budgets: line %d: ε: %w", row, err)
		}
		if len(rec) == 3 {
			if b.Delta, err = strconv.ParseFloat(strings.TrimSpace(rec[2]), 64); err != nil {
				return nil, fmt.Errorf("budgets: line %d: δ: %w", row, err)
			}
		}
		if err := checkBudget(b); err != nil {
			return nil, fmt.Errorf("budgets: line %d (example %d): %w", row, idx, err)
		}
		out[idx], seen[idx] = b, true
		count++
	}
	if count != n {
		for i, ok := range seen {
			if !ok {
				return nil, fmt.Errorf("budgets: %d of %d examples have a budget (first missing: %d)", count, n, i)
			}
		}
	}
	if err := checkOutliers(out); err != nil {
		return nil, err
	}
	return out, nil
}

// MaxBudgetSpread bounds how far a budget may lie from the median budget:
// ε_i ≤ MaxBudgetSpread·median. A budget far above the rest (a typo such as
// 1e300) would otherwise dominate the threshold and σ of every round
// without any message.
const MaxBudgetSpread = 1000

// checkOutliers refuses budgets more than MaxBudgetSpread times the median.
func checkOutliers(b []Budget) error {
	eps := make([]float64, len(b))
	for i := range b {
		eps[i] = b[i].Epsilon
	}
	sort.Float64s(eps)
	median := eps[len(eps)/2]
	for i := range b {
		if b[i].Epsilon > MaxBudgetSpread*median {
			return fmt.Errorf("budgets: example %d has ε = %g, more than %d× the median budget %g: refusing a budget far outside the rest (a typo?)", i, b[i].Epsilon, MaxBudgetSpread, median)
		}
	}
	return nil
}

// LoadBudgets reads a budgets CSV file (see ReadBudgets).
func LoadBudgets(path string, n int, defaultDelta float64) ([]Budget, error) {
	f, err := fileutil.OpenRegular(path) // a FIFO would block forever
	if err != nil {
		return nil, fmt.Errorf("budgets: %w", err)
	}
	defer f.Close()
	b, err := ReadBudgets(f, n, defaultDelta)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}

// GroupSpec describes the paper's generated budgets (appendix C.1): Groups
// privacy groups with ε equally spaced in [Min, Max], the group with value ε
// holding a share of the examples proportional to c1·e^{Kε} + c2.
type GroupSpec struct {
	Groups   int
	Min, Max float64
	K        float64
}

// PaperConstants returns the (c1, c2) of appendix C.1: (2.098, −1.715) for
// k = −0.2, (1.554, −1.715) for k = 0.2. k = 0 is the uniform distribution
// (c1 = 1, c2 = 0); any other k uses the plain exponential (c1 = 1, c2 = 0).
// Only the ratio c2/c1 matters: counts are normalised to the dataset size.
// The paper's constants are meant for [0.5, 1] (they nearly cancel at the
// sparse end), so with another range they may give non-positive counts,
// which GroupCounts rejects.
func PaperConstants(k float64) (c1, c2 float64) {
	switch k {
	case -0.2:
		return 2.098, -1.715
	case 0.2:
		return 1.554, -1.715
	}
	return 1, 0
}

// GroupCounts returns the group values ε_g = Min + g·(Max−Min)/(Groups−1)
// and integer counts summing to n, proportional to c1·e^{Kε_g} + c2
// (PaperConstants) and rounded by the largest-remainder method (ties to the
// lower group). Groups = 1 puts everyone at Min (Min must equal Max).
func (s GroupSpec) GroupCounts(n int) (values []float64, counts []int, err error) {
	if n < 1 {
		return nil, nil, fmt.Errorf("budget groups: need n ≥ 1 examples, got %d", n)
	}
	if s.Groups < 1 {
		return nil, nil, fmt.Errorf("budget groups: need ≥ 1 group, got %d", s.Groups)
	}
	if s.Groups > n {
		// More groups than examples leaves groups empty and every example in
		// its own class: planning is linear in the classes, so bound them.
		return nil, nil, fmt.Errorf("budget groups: %d groups for %d examples: at most one group per example", s.Groups, n)
	}
	if !(s.Min > 0) || !(s.Max >= s.Min) || math.IsInf(s.Max, 0) {
		return nil, nil, fmt.Errorf("budget groups: need 0 < min ≤ max < ∞, got [%v, %v]", s.Min, s.Max)
	}
	if s.Groups == 1 && s.Min != s.Max {
		return nil, nil, fmt.Errorf("budget groups: one group needs min = max, got [%v, %v]", s.Min, s.Max)
	}
	if s.Groups > 1 && s.Min == s.Max {
		return nil, nil, fmt.Errorf("budget groups: %d groups need min < max", s.Groups)
	}
	if math.IsNaN(s.K) || math.IsInf(s.K, 0) {
		return nil, nil, fmt.Errorf("budget groups: k must be finite, got %v", s.K)
	}
	c1, c2 := PaperConstants(s.K)
	values = make([]float64, s.Groups)
	w := make([]float64, s.Groups)
	var total float64
	for g := range values {
		v := s.Min
		if s.Groups > 1 {
			v = s.Min + float64(g)*(s.Max-s.Min)/float64(s.Groups-1)
		}
		values[g] = v
		w[g] = c1*math.Exp(s.K*v) + c2
		if !(w[g] > 0) || math.IsInf(w[g], 0) {
			return nil, nil, fmt.Errorf("budget groups: c1·e^{kε}+c2 = %v ≤ 0 at ε = %v (k = %v, c1 = %v, c2 = %v): choose a range where every group is populated", w[g], v, s.K, c1, c2)
		}
		total += w[g]
	}
	counts = make([]int, s.Groups)
	rem := make([]float64, s.Groups)
	assigned := 0
	for g := range w {
		exact := w[g] / total * float64(n)
		counts[g] = int(math.Floor(exact))
		rem[g] = exact - float64(counts[g])
		assigned += counts[g]
	}
	order := make([]int, s.Groups)
	for g := range order {
		order[g] = g
	}
	sort.SliceStable(order, func(a, b int) bool { return rem[order[a]] > rem[order[b]] })
	for i := 0; assigned < n; i++ {
		counts[order[i]]++
		assigned++
	}
	return values, counts, nil
}

// Generate assigns the GroupCounts budgets to n examples in a random order
// drawn from seed, each with δ = delta.
func (s GroupSpec) Generate(n int, delta float64, seed uint64) ([]Budget, error) {
	values, counts, err := s.GroupCounts(n)
	if err != nil {
		return nil, err
	}
	if !(delta > 0 && delta < 1) {
		return nil, fmt.Errorf("budget groups: δ must be in (0, 1), got %v", delta)
	}
	out := make([]Budget, 0, n)
	for g, c := range counts {
		for range c {
			out = append(out, Budget{Epsilon: values[g], Delta: delta})
		}
	}
	r := randstream.FromSeed(seed).Stream("pdp-budgets", 0) // public: the budgets are not secret
	r.Shuffle(n, func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out, nil
}
