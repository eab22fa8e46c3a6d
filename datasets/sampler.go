package datasets

import (
	"math"
	"math/rand/v2"
)

// Sampler yields the example indices of each training step's batch.
//
// Batch is a pure function of the sampler's key (package randstream), its configuration and
// step, so a run resumed at step t draws exactly the batches of an
// uninterrupted run. Negative steps yield an empty batch.
type Sampler interface {
	// Batch returns the indices of the batch at step. The caller owns the
	// returned slice.
	Batch(step int) []int
	// ExpectedBatchSize returns the mean batch size over steps.
	ExpectedBatchSize() float64
}

// Stream purposes keep the random streams of different samplers apart.
const (
	streamPoisson      = "poisson"
	streamPersonalized = "personalized-poisson"
	streamShuffle      = "shuffle"
)

// unitOpen returns a uniform variate in (0, 1].
func unitOpen(r *rand.Rand) float64 { return 1 - r.Float64() }

// geometricSkip appends to dst the indices in [0, n) of independent
// Bernoulli(q) trials, 0 < q ≤ 1, drawing one geometric gap per success
// rather than one uniform per trial. The gap G before the next success has
// P(G ≥ k) = (1-q)^k = P(U ≤ (1-q)^k) = P(⌊log U / log(1-q)⌋ ≥ k).
func geometricSkip(dst []int, n int, q float64, r *rand.Rand) []int {
	if q >= 1 {
		for i := 0; i < n; i++ {
			dst = append(dst, i)
		}
		return dst
	}
	lq := math.Log1p(-q)
	i := -1
	for {
		g := math.Floor(math.Log(unitOpen(r)) / lq)
		if g >= float64(n-1-i) {
			return dst
		}
		i += int(g) + 1
		dst = append(dst, i)
	}
}
