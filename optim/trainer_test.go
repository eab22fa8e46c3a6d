package optim

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/privtrain/privtrain/aggregate"
	"github.com/privtrain/privtrain/datasets"
	"github.com/privtrain/privtrain/model"
	"github.com/privtrain/privtrain/privacy"
	"github.com/privtrain/privtrain/randstream"
)

// listSampler returns fixed batches: step s gets batches[s].
type listSampler struct {
	batches  [][]int
	expected float64
}

func (l listSampler) Batch(step int) []int       { return l.batches[step%len(l.batches)] }
func (l listSampler) ExpectedBatchSize() float64 { return l.expected }

func mnistSlice(t *testing.T, n int) *datasets.Dataset {
	t.Helper()
	d, err := datasets.Load("mnist", "train", "")
	if err != nil {
		t.Fatal(err)
	}
	return d.Subset(seq(n))
}

func logreg(t *testing.T) model.Model {
	t.Helper()
	m, err := model.New(model.Spec{Arch: "logreg", InputShape: []int{784}, Classes: 10}, 3)
	if err != nil {
		t.Fatal(err)
	}
	// Non-zero parameters, so gradients differ between examples.
	p := m.Params()
	rng := rand.New(rand.NewPCG(1, 1))
	for i := range p {
		p[i] = float32(0.01 * rng.NormFloat64())
	}
	if err := m.SetParams(p); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestStepUpdateIsSumOverExpectedBatch checks the update arithmetic without
// noise or clipping: θ ← θ − lr·Σ∇ℓ_i / E[batch], against the model's own
// batch gradient.
func TestStepUpdateIsSumOverExpectedBatch(t *testing.T) {
	data := mnistSlice(t, 64)
	m := logreg(t)
	before := m.Params()
	idx := []int{3, 5, 8, 13, 21, 34}
	agg, err := aggregate.New("sum", aggregate.Config{})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := NewTrainer(Config{Model: m, Data: data, Labels: true, Aggregator: agg, LR: 0.5,
		Sampler: listSampler{[][]int{idx}, 10}})
	if err != nil {
		t.Fatal(err)
	}
	ref := logreg(t)
	b := model.Batch{X: make([]float32, len(idx)*784), Labels: make([]int, len(idx)), M: len(idx)}
	if err := data.Gather(idx, b.X, b.Labels, nil); err != nil {
		t.Fatal(err)
	}
	grad := make([]float32, ref.NumParams())
	if _, err := ref.BatchGrad(b, grad); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Step(0); err != nil {
		t.Fatal(err)
	}
	after := m.Params()
	for j := range after {
		want := float64(before[j]) - 0.5*float64(grad[j])/10
		if math.Abs(float64(after[j])-want) > 1e-5 {
			t.Fatalf("parameter %d: %v, want %v", j, after[j], want)
		}
	}
}

// TestPrivateStepAccounting: every step is accounted, empty batches
// included; a mechanism other than the planned one and non-finite gradients
// are refused before anything is accounted.
func TestPrivateStepAccounting(t *testing.T) {
	data := mnistSlice(t, 64)
	// q = 0.02 on 64 examples: batches of mean 1.28, empty with probability
	// 0.27, so the first steps include empty batches.
	sampler, err := datasets.NewPoissonSampler(64, 0.02, 9)
	if err != nil {
		t.Fatal(err)
	}
	const steps = 12
	empty := 0
	for s := 0; s < steps; s++ {
		if len(sampler.Batch(s)) == 0 {
			empty++
		}
	}
	if empty == 0 || empty == steps {
		t.Fatalf("the test needs empty and non-empty batches among its %d steps, got %d empty", steps, empty)
	}
	newTrainer := func(aggSigma float64) (*Trainer, *privacy.RDPAccountant) {
		agg, err := aggregate.New("sum", aggregate.Config{Sigma: aggSigma, ClipNorm: 1, FloatNoise: true})
		if err != nil {
			t.Fatal(err)
		}
		acct, err := privacy.NewRDPAccountant(nil)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := NewTrainer(Config{Model: logreg(t), Data: data, Labels: true, Aggregator: agg, LR: 0.1,
			ClipNorm: 1, Delta: 1e-5, Accountant: &privacy.RDPAccounting{Acc: acct},
			Sampler: sampler, NoiseKey: randstream.FromSeed(9)})
		if err != nil {
			t.Fatal(err)
		}
		return tr, acct
	}
	tr, acct := newTrainer(1.1)
	var last float64
	for s := 0; s < steps; s++ {
		res, err := tr.Step(s)
		if err != nil {
			t.Fatal(err)
		}
		if !(res.Epsilon > last) {
			t.Errorf("step %d: ε %v did not grow from %v (empty batches cost privacy too)", s, res.Epsilon, last)
		}
		last = res.Epsilon
	}
	if acct.Steps() != steps {
		t.Errorf("accountant holds %d steps, want %d", acct.Steps(), steps)
	}

	// The accounted step is the aggregator's plan, subsampled at the
	// sampler's rate: nothing is stated twice.
	tr, _ = newTrainer(2.0)
	if got, want := tr.StepMechanism(), (privacy.PoissonSubsampled{Base: privacy.Gaussian{Sigma: 2}, Q: sampler.Rate(), Bound: privacy.SubsampleAuto}); got != want {
		t.Errorf("step mechanism %+v, want %+v", got, want)
	}

	// A NaN input makes every gradient of that example NaN.
	bad := mnistSlice(t, 8)
	bad.X[2*784+100] = float32(math.NaN())
	agg, _ := aggregate.New("sum", aggregate.Config{Sigma: 1.1, ClipNorm: 1, FloatNoise: true})
	acct, _ = privacy.NewRDPAccountant(nil)
	all, err := datasets.NewPoissonSampler(8, 1, 1) // q = 1: every example, NaN one included
	if err != nil {
		t.Fatal(err)
	}
	tr, err = NewTrainer(Config{Model: logreg(t), Data: bad, Labels: true, Aggregator: agg, LR: 0.1,
		ClipNorm: 1, Delta: 1e-5, Accountant: &privacy.RDPAccounting{Acc: acct},
		Sampler: all, NoiseKey: randstream.FromSeed(1)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Step(0); err == nil || !strings.Contains(err.Error(), "not finite") {
		t.Errorf("NaN gradient: got %v", err)
	}
	if acct.Steps() != 0 {
		t.Errorf("a step with NaN gradients was accounted")
	}
}

func TestNewTrainerRejectsBadConfig(t *testing.T) {
	data := mnistSlice(t, 8)
	agg, _ := aggregate.New("sum", aggregate.Config{Sigma: 1, ClipNorm: 1, FloatNoise: true})
	acct, _ := privacy.NewRDPAccountant(nil)
	poisson, err := datasets.NewPoissonSampler(8, 0.1, 1)
	if err != nil {
		t.Fatal(err)
	}
	ok := Config{Model: logreg(t), Data: data, Labels: true, Aggregator: agg, LR: 0.1, ClipNorm: 1, Q: 0.1,
		Delta: 1e-5, Accountant: &privacy.RDPAccounting{Acc: acct}, Sampler: poisson,
		NoiseKey: randstream.FromSeed(1)}
	if _, err := NewTrainer(ok); err != nil {
		t.Fatal(err)
	}
	shuffled, err := datasets.NewShuffleSampler(8, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	exact, _ := aggregate.New("sum", aggregate.Config{ClipNorm: 1})
	median, _ := aggregate.New("coord-median", aggregate.Config{ClipNorm: 1})
	tests := []struct {
		name   string
		mutate func(*Config)
	}{
		{"lr", func(c *Config) { c.LR = 0 }},
		{"q", func(c *Config) { c.Q = 1.5 }},
		{"delta", func(c *Config) { c.Delta = 1 }},
		// R is the rule's (aggregate.Clipping): another value is refused,
		// and a private rule that states no R needs one here.
		{"clip stated twice, differently", func(c *Config) { c.ClipNorm = 2 }},
		{"no clip anywhere", func(c *Config) {
			c.ClipNorm, c.Aggregator = 0, struct {
				aggregate.Aggregator
				aggregate.Planned
			}{agg, agg.(aggregate.Planned)}
		}},
		{"no noise in the rule", func(c *Config) { c.Aggregator = exact }},
		{"rule without a plan", func(c *Config) { c.Aggregator = median }},
		{"model", func(c *Config) { c.Model = nil }},
		// Only valid accounting: the accountant assumes Poisson subsampling,
		// so a shuffled-batch (or any other) sampler is refused by type.
		{"shuffled sampler", func(c *Config) { c.Sampler = shuffled }},
		{"fixed batches", func(c *Config) { c.Sampler = listSampler{[][]int{{0}}, 1} }},
		{"q below the sampler's rate", func(c *Config) { c.Q = 0.05 }},
		{"no noise key", func(c *Config) { c.NoiseKey = randstream.Key{} }},
	}
	for _, tc := range tests {
		c := ok
		tc.mutate(&c)
		if _, err := NewTrainer(c); err == nil {
			t.Errorf("%s: invalid config accepted", tc.name)
		}
	}
}
