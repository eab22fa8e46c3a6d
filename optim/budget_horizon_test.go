package optim

import (
	"testing"

	"github.com/privtrain/privtrain/aggregate"
	"github.com/privtrain/privtrain/datasets"
	"github.com/privtrain/privtrain/privacy"
	"github.com/privtrain/privtrain/randstream"
)

// limitRecorder is an accountant that records the limits MaxSteps is asked
// for.
type limitRecorder struct {
	privacy.Accountant
	limits []int
}

func (r *limitRecorder) MaxSteps(m privacy.Mechanism, target, delta float64, limit int) (int, error) {
	r.limits = append(r.limits, limit)
	return r.Accountant.MaxSteps(m, target, delta, limit)
}

// TestNextStepFitsWithin: the budget check never asks the accountant past
// the run's horizon, gives the unbounded check's answers within it, and
// recomputes when the horizon grows past a capped answer (a resumed run
// given more steps), stopping at exactly the unbounded check's step.
func TestNextStepFitsWithin(t *testing.T) {
	data := mnistSlice(t, 64)
	newTrainer := func() (*Trainer, *limitRecorder) {
		agg, err := aggregate.New("sum", aggregate.Config{Sigma: 2, ClipNorm: 1, FloatNoise: true})
		if err != nil {
			t.Fatal(err)
		}
		a, err := privacy.NewRDPAccounting(privacy.ConversionBBG, privacy.AccountantOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rec := &limitRecorder{Accountant: a}
		sampler, err := datasets.NewPoissonSampler(data.N, 0.1, 3)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := NewTrainer(Config{Model: logreg(t), Data: data, Labels: true, Aggregator: agg, LR: 0.1,
			ClipNorm: 1, Q: 0.1, Delta: 1e-5, Accountant: rec, Sampler: sampler, NoiseKey: randstream.FromSeed(3)})
		if err != nil {
			t.Fatal(err)
		}
		return tr, rec
	}
	const target = 3.0
	// The unbounded reference: how many steps fit.
	ref, _ := newTrainer()
	fit := 0
	for ; ; fit++ {
		ok, err := ref.NextStepFits(target)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		if err := ref.cfg.Accountant.Compose(ref.StepMechanism(), 1); err != nil {
			t.Fatal(err)
		}
	}
	if fit < 20 {
		t.Fatalf("only %d steps fit; the test needs a longer budget", fit)
	}
	tr, rec := newTrainer()
	// A run of 5 steps, then extended to 10·fit steps.
	for _, until := range []int{5, 10 * fit} {
		for s := tr.cfg.Accountant.Steps(); s < until; s++ {
			ok, err := tr.NextStepFitsWithin(target, until-s)
			if err != nil {
				t.Fatal(err)
			}
			if ok != (s < fit) {
				t.Fatalf("step %d of %d: fits %v, want %v", s, until, ok, s < fit)
			}
			if !ok {
				break
			}
			if err := tr.cfg.Accountant.Compose(tr.StepMechanism(), 1); err != nil {
				t.Fatal(err)
			}
		}
	}
	if got := tr.cfg.Accountant.Steps(); got != fit {
		t.Errorf("stopped after %d steps, want %d", got, fit)
	}
	if len(rec.limits) != 2 || rec.limits[0] != 5 || rec.limits[1] != 10*fit-5 {
		t.Errorf("MaxSteps limits %v, want [5 %d]", rec.limits, 10*fit-5)
	}
}
