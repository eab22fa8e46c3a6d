package aggregate

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"

	"github.com/privtrain/privtrain/internal/vec"
)

// checkGrads validates sizes and norms. When private, every row must have
// been clipped to R: g.ClipNorm = R and every norm ≤ R, with no tolerance
// (the sensitivity of every private rule is R exactly; the trainer's
// clipping guarantees ‖g_i‖ ≤ R after float32 rounding).
func checkGrads(g Grads, out []float32, private bool, R float64) error {
	switch {
	case g.M < 0 || g.P <= 0:
		return fmt.Errorf("invalid batch shape M=%d, P=%d", g.M, g.P)
	case len(g.G) != g.M*g.P:
		return fmt.Errorf("gradient matrix has %d values, want M×P = %d×%d", len(g.G), g.M, g.P)
	case len(g.Norms) != g.M:
		return fmt.Errorf("got %d norms for %d gradients", len(g.Norms), g.M)
	case len(out) != g.P:
		return fmt.Errorf("output has length %d, want P = %d", len(out), g.P)
	}
	return checkNorms(g, private, R)
}

// checkNorms is checkGrads' check of g.ClipNorm and g.Norms.
func checkNorms(g Grads, private bool, R float64) error {
	if private && math.Abs(g.ClipNorm-R) > 1e-9*R {
		return fmt.Errorf("gradients clipped to %v, but the rule is calibrated for R = %v", g.ClipNorm, R)
	}
	for i, n := range g.Norms {
		if !(n >= 0) || math.IsInf(n, 0) {
			return fmt.Errorf("gradient %d has invalid norm %v (NaN/Inf in gradients?)", i, n)
		}
		if private && n > R {
			return fmt.Errorf("gradient %d has norm %v > R = %v: clip before a private aggregation", i, n, R)
		}
	}
	return nil
}

// checkFinite reports a NaN or Inf in the released vector.
func checkFinite(out []float32) error {
	for j, v := range out {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return fmt.Errorf("aggregate coordinate %d is %v (NaN/Inf in gradients?)", j, v)
		}
	}
	return nil
}

// row returns gradient i.
func row(g Grads, i int) []float32 { return g.G[i*g.P : (i+1)*g.P] }

// sumRows writes Σ_{i∈idx} g_i into out (acc is unused scratch kept for the
// callers' buffers).
//
// The sum is on the hot path of every private step and memory-bound: the
// columns are cut into cache-sized blocks that GOMAXPROCS goroutines sum in
// parallel with SIMD float32 additions (vec.SumScaledRows with factor 1, as
// Opacus sums in float32; the first row is stored, so out needs no
// clearing). Each column is accumulated in the order of idx, element by
// element, so the result is bit-for-bit independent of the number of
// goroutines and of alignment.
func sumRows(g Grads, idx []int, acc []float64, out []float32) {
	vec.SumScaledRows(out, g.G, g.P, idx, nil, nil, runtime.GOMAXPROCS(0))
}

// addNoise adds N(0, std²) to every coordinate of out.
func addNoise(out []float32, std float64, rng *rand.Rand) {
	if std == 0 {
		return
	}
	for j := range out {
		out[j] += float32(std * rng.NormFloat64())
	}
}

// sortByNorm fills idx with 0..M−1 ordered by ascending norm, ties broken by
// index, and returns it.
func sortByNorm(norms []float64, idx []int) []int {
	idx = idx[:0]
	for i := range norms {
		idx = append(idx, i)
	}
	slices.SortFunc(idx, func(a, b int) int {
		if c := cmp.Compare(norms[a], norms[b]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	return idx
}

// scratch holds reusable buffers, grown on demand.
type scratch struct {
	idx []int
	acc []float64
}

func (s *scratch) grow(m, p int) {
	if cap(s.idx) < m {
		s.idx = make([]int, 0, m)
	}
	if len(s.acc) != p {
		s.acc = make([]float64, p)
	}
}

// needRNG rejects a nil generator when noise is due.
func needRNG(rng *rand.Rand, std float64) error {
	if rng == nil && std != 0 {
		return fmt.Errorf("nil random generator for a noisy rule")
	}
	return nil
}
