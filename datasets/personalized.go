package datasets

import (
	"fmt"
	"math"

	"github.com/privtrain/privtrain/randstream"
)

// PersonalizedPoissonSampler includes example i in each batch independently
// with its own probability rates[i] ∈ [0, 1] (as in personalized DP-SGD).
// An example with rate 0 is never sampled. Rates may be changed between
// steps with SetRates; Batch(step) depends on the seed, step and the rates
// in force when it is called.
//
// It is not safe for concurrent use with SetRates.
type PersonalizedPoissonSampler struct {
	rates []float64
	max   float64
	sum   float64
	key   randstream.Key
}

// NewPersonalizedPoissonSampler returns a sampler with per-example rates
// (copied) whose batches are a public function of seed (tests, reproducible
// research); private runs use NewPersonalizedPoissonSamplerKey.
func NewPersonalizedPoissonSampler(rates []float64, seed uint64) (*PersonalizedPoissonSampler, error) {
	return NewPersonalizedPoissonSamplerKey(rates, randstream.FromSeed(seed))
}

// NewPersonalizedPoissonSamplerKey returns a sampler with per-example rates
// (copied) drawing batch t from key's stream ("personalized-poisson", t).
func NewPersonalizedPoissonSamplerKey(rates []float64, key randstream.Key) (*PersonalizedPoissonSampler, error) {
	if key.IsZero() {
		return nil, fmt.Errorf("datasets: personalized Poisson sampler needs a non-zero key")
	}
	s := &PersonalizedPoissonSampler{key: key}
	if err := s.SetRates(rates); err != nil {
		return nil, err
	}
	return s, nil
}

// SetRates replaces the per-example rates (copied). The number of examples
// may not change.
func (s *PersonalizedPoissonSampler) SetRates(rates []float64) error {
	if len(rates) == 0 {
		return fmt.Errorf("datasets: personalized Poisson sampler needs at least one rate")
	}
	if s.rates != nil && len(rates) != len(s.rates) {
		return fmt.Errorf("datasets: SetRates got %d rates for %d examples", len(rates), len(s.rates))
	}
	var max, sum float64
	for i, r := range rates {
		if !(r >= 0 && r <= 1) {
			return fmt.Errorf("datasets: sampling rate %v of example %d outside [0, 1]", r, i)
		}
		max = math.Max(max, r)
		sum += r
	}
	s.rates = append(s.rates[:0], rates...)
	s.max, s.sum = max, sum
	return nil
}

// Rates returns a copy of the per-example rates.
func (s *PersonalizedPoissonSampler) Rates() []float64 { return append([]float64(nil), s.rates...) }

// Batch returns the sorted indices sampled at step. It draws candidates at
// the largest rate m by geometric skipping and keeps candidate i with
// probability rates[i]/m (thinning), so P(i sampled) = rates[i] exactly.
func (s *PersonalizedPoissonSampler) Batch(step int) []int {
	if step < 0 || s.max == 0 {
		return []int{}
	}
	r := s.key.Stream(streamPersonalized, uint64(step))
	cand := geometricSkip(nil, len(s.rates), s.max, r)
	out := cand[:0]
	for _, i := range cand {
		ri := s.rates[i]
		if ri == s.max || r.Float64()*s.max < ri {
			out = append(out, i)
		}
	}
	return out
}

// Rate returns the largest per-example rate: every example enters a batch
// independently with probability at most Rate() (see PoissonSubsampler).
func (s *PersonalizedPoissonSampler) Rate() float64 { return s.max }

func (s *PersonalizedPoissonSampler) poissonSubsampling() {}

// ExpectedBatchSize returns the sum of the rates.
func (s *PersonalizedPoissonSampler) ExpectedBatchSize() float64 { return s.sum }
