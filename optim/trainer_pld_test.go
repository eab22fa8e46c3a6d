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
// as composing and querying), and the per-step ε is a certified bound that
// ends at the accountant's own ε.
func TestPLDAccountantBudget(t *testing.T) {
	data := mnistSlice(t, 64)
	agg, err := aggregate.New("sum", aggregate.Config{Sigma: 2, ClipNorm: 1, FloatNoise: true})
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
	var last StepResult
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
		// Per-step ε: a certified bound at a grid count between the steps
		// so far and the budget's allowance, never below the exact ε.
		if res.Accountant != privacy.KindPLD || res.EpsilonSteps < steps+1 || res.Epsilon > target {
			t.Fatalf("step %d: per-step ε %+v", steps, res)
		}
		if steps%10 == 0 {
			g, _ := acct.EpsilonFor(1e-5)
			if res.Epsilon < g.Epsilon {
				t.Fatalf("step %d: per-step ε %v below the exact %v", steps, res.Epsilon, g.Epsilon)
			}
		}
		last = res
	}
	if steps == 0 || steps == maxSteps || acct.Steps() != steps {
		t.Fatalf("ran %d steps, accountant holds %d", steps, acct.Steps())
	}
	g, _ := acct.EpsilonFor(1e-5)
	if last.EpsilonSteps != steps || last.Epsilon != g.Epsilon {
		t.Errorf("last step: per-step ε %v after %d steps, the accountant's %v after %d", last.Epsilon, last.EpsilonSteps, g.Epsilon, steps)
	}
	next := acct.CloneAccountant()
	next.Compose(tr.StepMechanism(), 1)
	gn, _ := next.EpsilonFor(1e-5)
	if !(g.Epsilon <= target && gn.Epsilon > target) {
		t.Errorf("after %d steps ε = %v, one more gives %v; target %v", steps, g.Epsilon, gn.Epsilon, target)
	}
	t.Logf("%d steps of σ=2, q=0.1 fit in ε = %v (PLD ε %.4f)", steps, target, g.Epsilon)
}
