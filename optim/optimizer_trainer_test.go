package optim

import (
	"math"
	"slices"
	"testing"

	"github.com/privtrain/privtrain/aggregate"
	"github.com/privtrain/privtrain/privacy"
	"github.com/privtrain/privtrain/randstream"
)

// trainPrivate runs n steps of MakePrivate(cfg) on a fixed key and returns
// the trainer.
func trainPrivate(t *testing.T, cfg PrivateConfig, n int) *Private {
	t.Helper()
	if cfg.ClipNorm == 0 {
		cfg.ClipNorm = 1
	}
	cfg.Delta, cfg.LR, cfg.Key, cfg.Q = 1e-5, 0.1, randstream.FromSeed(11), 0.2
	p, err := MakePrivate(tinyModel(t), tinyData(60), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Train(n); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestOptimizerAccountingUnchanged: the optimizer, the schedule and the
// accumulation are post-processing of the releases, so the accountant
// composes the same mechanism the same number of times and reports the same
// ε, for DP-SGD and TSGD+PTR alike, while the models differ.
func TestOptimizerAccountingUnchanged(t *testing.T) {
	for _, base := range []PrivateConfig{
		{Sigma: 1.2},
		{Sigma: 1.2, Rule: "ptr-tsum", Tau: 0.5, LaplaceB: 1, Delta0: 1e-6, TrimLevel: 1},
	} {
		n := 12
		if base.Rule == "ptr-tsum" {
			n = 4 // each PTR step composes a PLD: keep it short
		}
		ref := trainPrivate(t, base, n)
		refEps, err := ref.Epsilon()
		if err != nil {
			t.Fatal(err)
		}
		opts := []struct {
			o   OptimizerConfig
			acc int
		}{
			{OptimizerConfig{Name: OptMomentum, Momentum: 0.9}, 0},
			{OptimizerConfig{Name: OptNesterov, Momentum: 0.9, WeightDecay: 1e-3}, 0},
			{OptimizerConfig{Name: OptAdam}, 0},
			{OptimizerConfig{Name: OptAdamW, WeightDecay: 0.01, Schedule: ScheduleCosine, DecaySteps: 12, WarmupSteps: 3}, 3},
			{OptimizerConfig{Schedule: ScheduleStep, StepSize: 4, Gamma: 0.5}, 4},
		}
		if base.Rule == "ptr-tsum" {
			opts = opts[2:4]
		}
		for _, opt := range opts {
			cfg := base
			cfg.Optimizer, cfg.Accumulate = opt.o, opt.acc
			p := trainPrivate(t, cfg, n)
			eps, err := p.Epsilon()
			if err != nil {
				t.Fatal(err)
			}
			if p.Accountant.Steps() != n || ref.Accountant.Steps() != n || eps != refEps {
				t.Fatalf("%s %+v: %d steps, ε %+v; plain SGD %d steps, ε %+v", base.Rule, opt, p.Accountant.Steps(), eps, ref.Accountant.Steps(), refEps)
			}
			if p.StepMechanism() != ref.StepMechanism() {
				t.Fatalf("%+v: step mechanism %+v, plain SGD %+v", opt, p.StepMechanism(), ref.StepMechanism())
			}
			if slices.Equal(p.Trainer.cfg.Model.Params(), ref.Trainer.cfg.Model.Params()) {
				t.Fatalf("%+v: the model is plain SGD's", opt)
			}
		}
	}
}

// TestAccumulateOneRelease: accumulating the logical batch over physical
// batches releases the same value as one pass. The secure sum adds exact
// integers, and ptr-tsum sees the same rows in the same matrix, so the
// trained models are bit-identical (the logistic model's per-example rows
// do not depend on the batch they are computed in); the float sum differs
// only by the order of float32 additions.
func TestAccumulateOneRelease(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cfg   PrivateConfig
		exact bool
	}{
		{"secure-sum", PrivateConfig{Sigma: 1}, true},
		{"secure-ptr", PrivateConfig{Sigma: 1, Rule: "ptr-tsum", Tau: 0.5, LaplaceB: 1, Delta0: 1e-6, TrimLevel: 2, Accountant: privacy.KindRDP}, true},
		{"float-sum", PrivateConfig{Sigma: 1, FloatNoise: true}, false},
		{"adam-secure-sum", PrivateConfig{Sigma: 1, Optimizer: OptimizerConfig{Name: OptAdam}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			one := trainPrivate(t, tc.cfg, 8).Trainer.cfg.Model.Params()
			for _, acc := range []int{2, 5} {
				cfg := tc.cfg
				cfg.Accumulate = acc
				got := trainPrivate(t, cfg, 8).Trainer.cfg.Model.Params()
				for j := range one {
					d := math.Abs(float64(got[j] - one[j]))
					if tc.exact && d != 0 || d > 1e-5 {
						t.Fatalf("accumulate %d: parameters %v, one pass %v", acc, got, one)
					}
				}
			}
		})
	}
}

// TestMakePrivatePTR trains TSGD+PTR through MakePrivate and checks that
// it reports the PLD ε of the rule's planned step, composed independently.
func TestMakePrivatePTR(t *testing.T) {
	cfg := PrivateConfig{Sigma: 2, Rule: "ptr-tsum", Tau: 0.5, LaplaceB: 1, Delta0: 1e-6, TrimLevel: 1, LRFail: 0.01, LRPass: 0.1}
	p := trainPrivate(t, cfg, 10)
	g, err := p.Epsilon()
	if err != nil {
		t.Fatal(err)
	}
	if g.Accountant != privacy.KindPLD || !(g.Epsilon > 0) || math.IsInf(g.Epsilon, 0) {
		t.Fatalf("guarantee %+v: want a finite PLD ε", g)
	}
	if _, ok := p.Aggregator.(*aggregate.PTRTSum); !ok || !p.Secure {
		t.Fatalf("rule %T (secure %v), want the secure ptr-tsum", p.Aggregator, p.Secure)
	}
	plan, err := aggregate.PlannedMechanism(p.Aggregator)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := privacy.NewPLDAccountant(0)
	if err != nil {
		t.Fatal(err)
	}
	if err := ref.Compose(privacy.PoissonSubsampled{Base: plan, Q: 0.2, Bound: privacy.SubsampleAuto}, 10); err != nil {
		t.Fatal(err)
	}
	want, err := ref.EpsilonFor(1e-5)
	if err != nil {
		t.Fatal(err)
	}
	if g.Epsilon != want.Epsilon {
		t.Fatalf("MakePrivate's ε %v, the plan composed 10 times: %v", g.Epsilon, want.Epsilon)
	}
	t.Logf("TSGD+PTR via MakePrivate: 10 steps, ε = %.4f (PLD, δ = 1e-5), plan %+v", g.Epsilon, plan.Spec())
	// A target ε instead of σ is calibrated on the PTR mechanism:
	// TestMakePrivatePTRTarget.
	if _, err := MakePrivate(tinyModel(t), tinyData(60), PrivateConfig{ClipNorm: 1, Delta: 1e-5, LR: 0.1, Q: 0.2, Sigma: 1, Tau: 0.5}); err == nil {
		t.Fatal("τ accepted for the sum rule")
	}
}

// TestOptimizerResumeBitIdentical: a trainer restored from the parameters
// and the optimizer state after k steps continues exactly as the one that
// never stopped.
func TestOptimizerResumeBitIdentical(t *testing.T) {
	cfg := PrivateConfig{Sigma: 1, Optimizer: OptimizerConfig{Name: OptAdamW, WeightDecay: 0.01, Schedule: ScheduleCosine, DecaySteps: 10, WarmupSteps: 2}}
	full := trainPrivate(t, cfg, 10)
	half := trainPrivate(t, cfg, 5)
	state, err := half.OptimizerState()
	if err != nil || len(state) == 0 {
		t.Fatalf("state %q, %v", state, err)
	}
	params := half.Trainer.cfg.Model.Params()
	resumed := trainPrivate(t, cfg, 0)
	if err := resumed.Trainer.cfg.Model.SetParams(params); err != nil {
		t.Fatal(err)
	}
	if err := resumed.RestoreOptimizerState(state); err != nil {
		t.Fatal(err)
	}
	for s := 5; s < 10; s++ {
		if _, err := resumed.Step(s); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := resumed.Trainer.cfg.Model.Params(), full.Trainer.cfg.Model.Params(); !slices.Equal(got, want) {
		t.Fatalf("resumed %v, uninterrupted %v", got, want)
	}
	plain := trainPrivate(t, PrivateConfig{Sigma: 1}, 0)
	if s, err := plain.OptimizerState(); s != nil || err != nil {
		t.Fatalf("plain SGD state %q, %v", s, err)
	}
	if err := plain.RestoreOptimizerState(state); err == nil {
		t.Fatal("an AdamW state restored into plain SGD")
	}
}

// TestPlainOptimizerUnchanged: naming sgd explicitly (or a constant
// schedule) is the default path, bit for bit.
func TestPlainOptimizerUnchanged(t *testing.T) {
	ref := trainPrivate(t, PrivateConfig{Sigma: 1}, 6).Trainer.cfg.Model.Params()
	got := trainPrivate(t, PrivateConfig{Sigma: 1, Optimizer: OptimizerConfig{Name: OptSGD, Schedule: ScheduleConstant}}, 6).Trainer.cfg.Model.Params()
	if !slices.Equal(got, ref) {
		t.Fatalf("explicit sgd %v, default %v", got, ref)
	}
}
