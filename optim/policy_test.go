package optim

import (
	"testing"

	"github.com/privtrain/privtrain/aggregate"
)

// trimRule is a Trimmer for policy tests.
type trimRule struct{ f int }

func (r *trimRule) TrimLevel() int     { return r.f }
func (r *trimRule) SetTrimLevel(f int) { r.f = max(f, 0) }

func TestPTRPolicy(t *testing.T) {
	rule := &trimRule{f: 64}
	p := &PTRPolicy{LRFail: 0.1, LRPass: 0.2, Trim: &TrimController{Rate: 0.02, Batch: 256}, Rule: rule}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	fail, pass := aggregate.PTRDiagnostics{Branch: aggregate.PTRFailed}, aggregate.PTRDiagnostics{Branch: aggregate.PTRPassed}
	for _, c := range []struct {
		d      aggregate.Diagnostics
		lr     float64
		wantF  int
		wantLR float64
	}{
		{fail, 0.15, 69, 0.1},                             // failed: η_A, F up by round(0.02·256) = 5
		{pass, 0.15, 64, 0.2},                             // passed: η_B, F down
		{aggregate.TrimDiagnostics{F: 3}, 0.15, 64, 0.15}, // no test: nothing changes
		{nil, 0.3, 64, 0.3},
		{aggregate.PTRDiagnostics{}, 0.3, 64, 0.3},
	} {
		if got := p.LearningRate(c.d, c.lr); got != c.wantLR {
			t.Errorf("%+v: learning rate %v, want %v", c.d, got, c.wantLR)
		}
		p.Observe(c.d)
		if rule.f != c.wantF {
			t.Errorf("%+v: F = %d, want %d", c.d, rule.f, c.wantF)
		}
	}
	// Without branch rates the base rate stays; without a controller F stays.
	q := &PTRPolicy{}
	if q.LearningRate(fail, 0.15) != 0.15 {
		t.Error("zero LRFail replaced the learning rate")
	}
	q.Observe(fail)
	for _, bad := range []*PTRPolicy{{LRFail: -1}, {LRPass: 1 / zero()}, {Trim: &TrimController{Rate: 0.02, Batch: 256}}, {Trim: &TrimController{}, Rule: rule}} {
		if bad.Validate() == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

func zero() float64 { return 0 }

// The per-step records keep the run directory's formats: diagnostics.jsonl
// (MarshalJSON) and metrics.jsonl (PublicJSON) have the fields, order and
// omissions they had before rules reported their own diagnostics.
func TestStepResultJSON(t *testing.T) {
	for _, c := range []struct {
		r            StepResult
		full, public string
	}{
		{StepResult{Step: 3, BatchSize: 276, Loss: 2.5, Epsilon: 1.25, Accountant: "rdp", LR: 0.1,
			Rule: aggregate.PTRDiagnostics{Branch: aggregate.PTRPassed, Delta: 2, DeltaHat: 3.5, F: 64}, Trimmed: 64, Corrupted: 7},
			`{"step":3,"batch_size":276,"loss":2.5,"epsilon":1.25,"accountant":"rdp","branch":"-","delta":2,"delta_hat":3.5,"f":64,"trimmed":64,"corrupted":7}`,
			`{"step":3,"epsilon":1.25,"branch":"-","f":64}`},
		{StepResult{Step: 0, BatchSize: 250, Loss: 2, Rule: aggregate.PTRDiagnostics{Branch: aggregate.PTRFailed, DeltaHat: 0.5, F: 64}},
			`{"step":0,"batch_size":250,"loss":2,"branch":"+","delta_hat":0.5,"f":64}`,
			`{"step":0,"branch":"+","f":64}`},
		{StepResult{Step: 1, BatchSize: 9, Loss: 1, Rule: aggregate.TrimDiagnostics{F: 2}, Trimmed: 2},
			`{"step":1,"batch_size":9,"loss":1,"f":2,"trimmed":2}`, `{"step":1,"f":2}`},
		{StepResult{Step: 2, BatchSize: 0, Loss: 0},
			`{"step":2,"batch_size":0,"loss":0}`, `{"step":2}`},
	} {
		full, err := c.r.MarshalJSON()
		if err != nil || string(full) != c.full {
			t.Errorf("full record %s, %v\nwant %s", full, err, c.full)
		}
		pub, err := c.r.PublicJSON()
		if err != nil || string(pub) != c.public {
			t.Errorf("public record %s, %v\nwant %s", pub, err, c.public)
		}
	}
}

// TestPTRPolicyBind: NewTrainer binds a dynamic-F policy to the trainer's
// rule, refuses a rule without a trim level, and leaves a policy without a
// controller or with its own rule as it is.
func TestPTRPolicyBind(t *testing.T) {
	tsum, err := aggregate.New("tsum", aggregate.Config{F: 3})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := aggregate.New("sum", aggregate.Config{})
	if err != nil {
		t.Fatal(err)
	}
	p := &PTRPolicy{Trim: &TrimController{Rate: 0.02, Batch: 256}}
	if err := p.Bind(tsum); err != nil || p.Rule != tsum.(aggregate.Trimmer) {
		t.Fatalf("bound to %v, %v", p.Rule, err)
	}
	p.Observe(aggregate.PTRDiagnostics{Branch: aggregate.PTRFailed})
	if f := tsum.(aggregate.Trimmer).TrimLevel(); f != 8 {
		t.Errorf("after a failed test the bound rule has F = %d, want 3 + round(0.02·256) = 8", f)
	}
	if err := (&PTRPolicy{Trim: &TrimController{Rate: 0.02, Batch: 256}}).Bind(sum); err == nil {
		t.Error("dynamic F bound to sum, which has no trim level")
	}
	own := &trimRule{f: 1}
	q := &PTRPolicy{Trim: &TrimController{Rate: 0.02, Batch: 256}, Rule: own}
	if err := q.Bind(tsum); err != nil || q.Rule != own {
		t.Errorf("a set Rule was replaced: %v, %v", q.Rule, err)
	}
	if err := (&PTRPolicy{LRFail: 0.1}).Bind(sum); err != nil {
		t.Errorf("a policy without dynamic F refused sum: %v", err)
	}
}
