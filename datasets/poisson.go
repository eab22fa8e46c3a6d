package datasets

import (
	"fmt"
	"math"
)

// PoissonSampler includes each of n examples in each batch independently
// with probability q (Poisson subsampling, as the DP-SGD privacy analysis
// assumes). Batch sizes vary and may be zero.
type PoissonSampler struct {
	n    int
	q    float64
	seed uint64
}

// NewPoissonSampler returns a Poisson sampler over n examples at rate
// q ∈ (0, 1].
func NewPoissonSampler(n int, q float64, seed uint64) (*PoissonSampler, error) {
	if n < 1 {
		return nil, fmt.Errorf("datasets: Poisson sampler needs n ≥ 1, got %d", n)
	}
	if !(q > 0 && q <= 1) {
		return nil, fmt.Errorf("datasets: Poisson sampling rate q = %v outside (0, 1]", q)
	}
	return &PoissonSampler{n: n, q: q, seed: seed}, nil
}

// Batch returns the sorted indices sampled at step.
func (s *PoissonSampler) Batch(step int) []int {
	if step < 0 {
		return []int{}
	}
	r := stepRand(s.seed, streamPoisson, uint64(step))
	// Reserve a little above the mean to avoid regrowth in most steps.
	mean := float64(s.n) * s.q
	return geometricSkip(make([]int, 0, int(mean+4*math.Sqrt(mean)+1)), s.n, s.q, r)
}

// ExpectedBatchSize returns n·q.
func (s *PoissonSampler) ExpectedBatchSize() float64 { return float64(s.n) * s.q }

// Rate returns q.
func (s *PoissonSampler) Rate() float64 { return s.q }

// N returns the number of examples.
func (s *PoissonSampler) N() int { return s.n }
