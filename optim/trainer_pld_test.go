package optim

import (
	"testing"

	"github.com/privtrain/privtrain/aggregate"
	"github.com/privtrain/privtrain/datasets"
	"github.com/privtrain/privtrain/privacy"
	"github.com/privtrain/privtrain/randstream"
)

// With a PLD accountant the trainer composes every step, the budget check
// stops exactly when one more step would exceed the target (the same answer
// as composing and querying), and per-step ε is left to the RDP accountant.
func TestPLDAccountantBudget(t *testing.T) {
	data := mnistSlice(t, 64)
	agg, err := aggregate.New("sum", aggregate.Config{Sigma: 2, ClipNorm: 1})
	if err != nil {
		t.Fatal(err)
	}
	acct, err := privacy.NewPLDAccountant(0)
	if err != nil {
		t.Fatal(err)
	}
	const maxSteps = 200
	sampler, err := datasets.NewPoissonSampler(data.N, 0.1, 3)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := NewTrainer(Config{Model: logreg(t), Data: data, Labels: true, Aggregator: agg, LR: 0.1,
		ClipNorm: 1, Q: 0.1, Delta: 1e-5, Accountant: acct,
		Sampler: sampler, NoiseKey: randstream.FromSeed(3)})
	if err != nil {
		t.Fatal(err)
	}
	const target = 1.0
	steps := 0
	for ; steps < maxSteps; steps++ {
		ok, err := tr.NextStepFits(target)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		res, err := tr.Step(steps)
		if err != nil {
			t.Fatal(err)
		}
		if res.Epsilon != 0 || res.Accountant != "" {
			t.Fatalf("per-step ε from the PLD accountant: %+v", res)
		}
	}
	if steps == 0 || steps == maxSteps || acct.Steps() != steps {
		t.Fatalf("ran %d steps, accountant holds %d", steps, acct.Steps())
	}
	g, _ := acct.EpsilonFor(1e-5)
	next := acct.CloneAccountant()
	next.Compose(tr.StepMechanism(), 1)
	gn, _ := next.EpsilonFor(1e-5)
	if !(g.Epsilon <= target && gn.Epsilon > target) {
		t.Errorf("after %d steps ε = %v, one more gives %v; target %v", steps, g.Epsilon, gn.Epsilon, target)
	}
	t.Logf("%d steps of σ=2, q=0.1 fit in ε = %v (PLD ε %.4f)", steps, target, g.Epsilon)
}
