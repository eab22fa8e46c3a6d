package datasets

import (
	"fmt"

	"github.com/privtrain/privtrain/randstream"
)

// ShuffleSampler draws fixed-size batches from a fresh random permutation
// of the n examples in every epoch; the permutation of epoch e depends only
// on the (public) seed and e: shuffled batches are for non-private training
// and are not a PoissonSubsampler.
//
// An epoch has ⌈n/b⌉ steps and visits every example once; when b does not
// divide n its last batch is smaller, holding the n mod b examples left.
// Set DropLast to skip those instead, giving ⌊n/b⌋ full batches per epoch.
//
// A ShuffleSampler caches the current epoch's permutation and is not safe
// for concurrent use.
type ShuffleSampler struct {
	// DropLast skips each epoch's final partial batch.
	DropLast bool

	n, b  int
	key   randstream.Key
	epoch int
	perm  []int
}

// NewShuffleSampler returns a sampler of batches of batchSize examples,
// 1 ≤ batchSize ≤ n.
func NewShuffleSampler(n, batchSize int, seed uint64) (*ShuffleSampler, error) {
	if n < 1 {
		return nil, fmt.Errorf("datasets: shuffle sampler needs n ≥ 1, got %d", n)
	}
	if batchSize < 1 || batchSize > n {
		return nil, fmt.Errorf("datasets: batch size %d outside [1, %d]", batchSize, n)
	}
	return &ShuffleSampler{n: n, b: batchSize, key: randstream.FromSeed(seed), epoch: -1}, nil
}

// StepsPerEpoch returns the number of batches in one epoch.
func (s *ShuffleSampler) StepsPerEpoch() int {
	if s.DropLast {
		return s.n / s.b
	}
	return (s.n + s.b - 1) / s.b
}

// Batch returns the indices of batch step mod StepsPerEpoch of epoch
// step / StepsPerEpoch, in permutation order.
func (s *ShuffleSampler) Batch(step int) []int {
	if step < 0 {
		return []int{}
	}
	spe := s.StepsPerEpoch()
	e, k := step/spe, step%spe
	if e != s.epoch || s.perm == nil {
		s.perm = s.permutation(e)
		s.epoch = e
	}
	lo, hi := k*s.b, min((k+1)*s.b, s.n)
	return append([]int(nil), s.perm[lo:hi]...)
}

func (s *ShuffleSampler) permutation(epoch int) []int {
	r := s.key.Stream(streamShuffle, uint64(epoch))
	p := make([]int, s.n)
	for i := range p {
		p[i] = i
	}
	r.Shuffle(len(p), func(i, j int) { p[i], p[j] = p[j], p[i] })
	return p
}

// ExpectedBatchSize returns the mean batch size over an epoch: b when
// DropLast is set or b divides n, else n/⌈n/b⌉.
func (s *ShuffleSampler) ExpectedBatchSize() float64 {
	if s.DropLast {
		return float64(s.b)
	}
	return float64(s.n) / float64(s.StepsPerEpoch())
}
