package ridgegd

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"gonum.org/v1/gonum/mat"
)

// PTRResult is the outcome of Proposition 2's Propose-Test-Release check.
type PTRResult struct {
	// DeltaPlus is Δ₊, the lower bound on the number of rows to change
	// before Ã ⪰ ρC fails; DeltaHat = Δ₊ + Lap(1/ε).
	DeltaPlus int     `json:"delta_plus"`
	DeltaHat  float64 `json:"delta_hat"`
	// Threshold is −log(δ)/ε; the test passes when DeltaHat > Threshold.
	Threshold float64 `json:"threshold"`
	Passed    bool    `json:"passed"`
	Epsilon   float64 `json:"epsilon"`
	Delta     float64 `json:"delta"`
	Rho       float64 `json:"rho"`
}

// DeltaPlus returns Δ₊ of Proposition 2 from the scores
// s_i = x̃_iᵀ(Ã − ρC)⁻¹x̃_i: the smallest number of largest scores whose sum
// reaches n. If all n scores sum to less than n it returns n (Δ is then
// unbounded and n is still a lower bound). The comparison allows a relative
// rounding slack of 1e-12, which can only lower Δ₊ (the safe direction).
func DeltaPlus(scores []float64, n int) int {
	s := append([]float64(nil), scores...)
	sort.Sort(sort.Reverse(sort.Float64Slice(s)))
	var sum float64
	for i, v := range s {
		sum += v
		if sum >= float64(n)*(1-1e-12) {
			return i + 1
		}
	}
	return n
}

// PTRScores returns s_i = x̃_iᵀ(Ã − ρC)⁻¹x̃_i for the rows of the clipped data,
// and ok = false when Ã − ρC is not positive definite (then Δ = 0).
func PTRScores(clipped *Data, aTilde, c *mat.SymDense, rho float64) (scores []float64, ok bool, err error) {
	d := clipped.D
	if r, _ := aTilde.Dims(); r != d {
		return nil, false, fmt.Errorf("ridgegd: Ã is %d×%d, features have dimension %d", r, r, d)
	}
	if r, _ := c.Dims(); r != d {
		return nil, false, fmt.Errorf("ridgegd: C is %d×%d, features have dimension %d", r, r, d)
	}
	m := mat.NewSymDense(d, nil)
	for p := 0; p < d; p++ {
		for q := p; q < d; q++ {
			m.SetSym(p, q, aTilde.At(p, q)-rho*c.At(p, q))
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(m) {
		return nil, false, nil
	}
	scores = make([]float64, clipped.N)
	var v mat.VecDense
	for i := 0; i < clipped.N; i++ {
		x := clipped.Row(i)
		if err := ch.SolveVecTo(&v, mat.NewVecDense(d, append([]float64(nil), x...))); err != nil {
			return nil, false, fmt.Errorf("ridgegd: PTR solve: %w", err)
		}
		scores[i] = dot(x, v.RawVector().Data)
	}
	return scores, true, nil
}

// PTRTest runs Proposition 2 once: Δ̂ = Δ₊ + Lap(1/ε), and the proposal ρ
// is accepted iff Δ̂ > −log(δ)/ε. Accepting costs (ε, δ)-DP on top of the
// mechanisms that use ρ. aTilde is Ã = (1/n)Σx̃_ix̃_iᵀ + μI of the clipped
// data.
func PTRTest(clipped *Data, aTilde, c *mat.SymDense, rho, eps, delta float64, rng *rand.Rand) (PTRResult, error) {
	if !(rho > 0) || !(eps > 0) || math.IsInf(eps, 0) || !(delta > 0 && delta < 1) {
		return PTRResult{}, fmt.Errorf("ridgegd: PTR needs ρ > 0, finite ε > 0 and δ in (0, 1), got %v, %v, %v", rho, eps, delta)
	}
	if rng == nil {
		return PTRResult{}, fmt.Errorf("ridgegd: PTR needs a random source")
	}
	res := PTRResult{Epsilon: eps, Delta: delta, Rho: rho, Threshold: -math.Log(delta) / eps}
	scores, ok, err := PTRScores(clipped, aTilde, c, rho)
	if err != nil {
		return PTRResult{}, err
	}
	if ok {
		res.DeltaPlus = DeltaPlus(scores, clipped.N)
	}
	res.DeltaHat = float64(res.DeltaPlus) + (rng.ExpFloat64()-rng.ExpFloat64())/eps
	res.Passed = res.DeltaHat > res.Threshold
	return res, nil
}
