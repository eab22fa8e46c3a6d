package datasets

import (
	"math"
	"math/rand/v2"
)

// Sampler yields the example indices of each training step's batch.
//
// Batch is a pure function of the sampler's seed, its configuration and
// step, so a run resumed at step t draws exactly the batches of an
// uninterrupted run. Negative steps yield an empty batch.
type Sampler interface {
	// Batch returns the indices of the batch at step. The caller owns the
	// returned slice.
	Batch(step int) []int
	// ExpectedBatchSize returns the mean batch size over steps.
	ExpectedBatchSize() float64
}

// Stream identifiers keep the random streams of different samplers apart.
const (
	streamPoisson      = 0x706f6973736f6e00 // "poisson"
	streamPersonalized = 0x7065727320706f69 // "pers poi"
	streamShuffle      = 0x73687566666c6500 // "shuffle"
)

// splitmix64 is the SplitMix64 finaliser, a bijective 64-bit mixer.
func splitmix64(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// stepRand returns a generator determined by (seed, stream, k): a PCG whose
// 128-bit state is derived through SplitMix64 so that neighbouring seeds and
// steps give unrelated streams.
func stepRand(seed, stream, k uint64) *rand.Rand {
	a := splitmix64(seed ^ splitmix64(stream))
	b := splitmix64(a ^ splitmix64(k^0x5851f42d4c957f2d))
	return rand.New(rand.NewPCG(a, b))
}

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
