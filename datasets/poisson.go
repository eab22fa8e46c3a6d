package datasets

import (
	"fmt"
	"math"

	"github.com/privtrain/privtrain/randstream"
)

// PoissonSubsampler is a sampler that draws every batch by Poisson
// subsampling: each example enters each batch independently with
// probability at most Rate() (exactly Rate() for PoissonSampler).
//
// It is the type, not a convention, that privacy accounting of Poisson-
// subsampled mechanisms relies on: the unexported method seals the
// interface, so only this package's Poisson samplers (and wrappers made by
// WithExpectedBatchSize) satisfy it, and a shuffled-batch sampler cannot be
// passed where Poisson subsampling is assumed.
//
// Accounting every step at rate Rate() is valid for an example included with
// any probability π ≤ Rate(): the subsampled output distribution at π is
// the mixture (1−λ)·P_q + λ·P_0 of those at q = Rate() and at 0, λ = 1−π/q,
// and Rényi divergence is jointly quasi-convex (van Erven & Harremoës 2014,
// Theorem 13), so its divergence is at most the one at rate q.
type PoissonSubsampler interface {
	Sampler
	// Rate is the (largest) inclusion probability q of an example.
	Rate() float64
	poissonSubsampling()
}

// PoissonSampler includes each of n examples in each batch independently
// with probability q (Poisson subsampling, as the DP-SGD privacy analysis
// assumes). Batch sizes vary and may be zero.
type PoissonSampler struct {
	n   int
	q   float64
	key randstream.Key
}

// NewPoissonSampler returns a Poisson sampler over n examples at rate
// q ∈ (0, 1] whose batches are a public function of seed: for tests and
// reproducible research. A private run must use NewPoissonSamplerKey with a
// secret key.
func NewPoissonSampler(n int, q float64, seed uint64) (*PoissonSampler, error) {
	return NewPoissonSamplerKey(n, q, randstream.FromSeed(seed))
}

// NewPoissonSamplerKey returns a Poisson sampler over n examples at rate
// q ∈ (0, 1] drawing batch t from key's stream ("poisson", t). The batches
// are secret exactly when the key is.
func NewPoissonSamplerKey(n int, q float64, key randstream.Key) (*PoissonSampler, error) {
	if n < 1 {
		return nil, fmt.Errorf("datasets: Poisson sampler needs n ≥ 1, got %d", n)
	}
	if !(q > 0 && q <= 1) {
		return nil, fmt.Errorf("datasets: Poisson sampling rate q = %v outside (0, 1]", q)
	}
	if key.IsZero() {
		return nil, fmt.Errorf("datasets: Poisson sampler needs a non-zero key")
	}
	return &PoissonSampler{n: n, q: q, key: key}, nil
}

// Batch returns the sorted indices sampled at step.
func (s *PoissonSampler) Batch(step int) []int {
	if step < 0 {
		return []int{}
	}
	r := s.key.Stream(streamPoisson, uint64(step))
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

func (s *PoissonSampler) poissonSubsampling() {}

// WithExpectedBatchSize returns p with ExpectedBatchSize replaced by size (a
// public constant by which a trainer divides the released sum, e.g. a
// nominal batch); the batches and Rate are p's, so it is still a
// PoissonSubsampler. size must be finite and > 0.
func WithExpectedBatchSize(p PoissonSubsampler, size float64) (PoissonSubsampler, error) {
	if !(size > 0) || math.IsInf(size, 0) {
		return nil, fmt.Errorf("datasets: expected batch size must be finite and > 0, got %v", size)
	}
	return nominal{p, size}, nil
}

type nominal struct {
	PoissonSubsampler
	size float64
}

func (n nominal) ExpectedBatchSize() float64 { return n.size }
