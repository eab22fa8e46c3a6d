package datasets

import (
	"testing"

	"github.com/privtrain/privtrain/randstream"
)

// Only the Poisson samplers are PoissonSubsamplers; the nominal-batch
// wrapper keeps the type, the batches and the rate; keyed samplers with
// different keys draw different batches, equal keys equal ones.
func TestPoissonSubsamplerIsSealed(t *testing.T) {
	p, err := NewPoissonSamplerKey(1000, 0.05, randstream.FromSeed(1))
	if err != nil {
		t.Fatal(err)
	}
	pp, err := NewPersonalizedPoissonSamplerKey([]float64{0.1, 0.3, 0.2}, randstream.FromSeed(1))
	if err != nil {
		t.Fatal(err)
	}
	sh, err := NewShuffleSampler(1000, 50, 1)
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]Sampler{"poisson": p, "personalized": pp} {
		if _, ok := s.(PoissonSubsampler); !ok {
			t.Errorf("%s sampler is not a PoissonSubsampler", name)
		}
	}
	if _, ok := any(sh).(PoissonSubsampler); ok {
		t.Error("the shuffle sampler satisfies PoissonSubsampler")
	}
	if pp.Rate() != 0.3 || p.Rate() != 0.05 {
		t.Errorf("rates %v, %v", pp.Rate(), p.Rate())
	}
	w, err := WithExpectedBatchSize(p, 64)
	if err != nil {
		t.Fatal(err)
	}
	if w.ExpectedBatchSize() != 64 || w.Rate() != 0.05 || len(w.Batch(3)) != len(p.Batch(3)) {
		t.Errorf("wrapper: expected %v rate %v", w.ExpectedBatchSize(), w.Rate())
	}
	if _, err := WithExpectedBatchSize(p, 0); err == nil {
		t.Error("expected batch 0 accepted")
	}
	q, _ := NewPoissonSamplerKey(1000, 0.05, randstream.FromSeed(2))
	same, _ := NewPoissonSamplerKey(1000, 0.05, randstream.FromSeed(1))
	differ := false
	for step := 0; step < 5; step++ {
		a, b, c := p.Batch(step), q.Batch(step), same.Batch(step)
		if len(a) != len(c) {
			t.Fatal("equal keys, different batches")
		}
		for i := range a {
			if a[i] != c[i] {
				t.Fatal("equal keys, different batches")
			}
		}
		if len(a) != len(b) || len(a) > 0 && a[0] != b[0] {
			differ = true
		}
	}
	if !differ {
		t.Error("different keys drew the same batches")
	}
	if _, err := NewPoissonSamplerKey(10, 0.5, randstream.Key{}); err == nil {
		t.Error("zero key accepted")
	}
}
