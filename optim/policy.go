package optim

import (
	"errors"
	"fmt"
	"math"

	"github.com/privtrain/privtrain/aggregate"
)

// StepPolicy adapts a run to each step's aggregation report, so the step
// loop need not know which rule runs (Config.Policy). The diagnostics
// passed are the rule's Report.Diagnostics (nil when it has none). A
// policy may implement Bind(aggregate.Aggregator) error, which NewTrainer
// calls first with the trainer's rule (nil: none), and Validate() error,
// which it calls next.
type StepPolicy interface {
	// LearningRate returns the learning rate of the update that applies a
	// release whose rule reported d; lr is Config.LR.
	LearningRate(d aggregate.Diagnostics, lr float64) float64
	// Observe is called after each step's update with the rule's report.
	Observe(d aggregate.Diagnostics)
}

// PTRPolicy is TSGD+PTR's policy (Wang et al., NeurIPS 2022): the learning
// rates η_A / η_B after a failed / passed test (appendix A.4) and the
// dynamic trim level F (Algorithm 2, Remark 5.3). It reads the outcome from
// ptr-tsum's aggregate.PTRDiagnostics and ignores steps without a test.
type PTRPolicy struct {
	// LRFail / LRPass, when > 0, replace the learning rate after a failed /
	// passed test (0: Config.LR).
	LRFail, LRPass float64
	// Trim adjusts the trim level of Rule after each test (nil: fixed F).
	Trim *TrimController
	// Rule is the rule whose trim level Trim adjusts (required with Trim;
	// when nil, Bind takes the trainer's rule).
	Rule aggregate.Trimmer
}

// Bind makes a, the trainer's rule, the rule whose trim level Trim adjusts,
// unless Rule is already set. Dynamic F needs a rule with a trim level
// (aggregate.Trimmer); a policy without Trim binds to any rule.
func (p *PTRPolicy) Bind(a aggregate.Aggregator) error {
	if p.Trim == nil || p.Rule != nil {
		return nil
	}
	tr, ok := a.(aggregate.Trimmer)
	if !ok {
		name := "none"
		if a != nil {
			name = a.Name()
		}
		return fmt.Errorf("dynamic F needs a rule with a trim level (aggregate.Trimmer), got %s", name)
	}
	p.Rule = tr
	return nil
}

// Validate checks the learning rates and the controller.
func (p *PTRPolicy) Validate() error {
	for _, lr := range []float64{p.LRFail, p.LRPass} {
		if lr < 0 || math.IsNaN(lr) || math.IsInf(lr, 0) {
			return fmt.Errorf("branch learning rate must be finite and ≥ 0, got %v", lr)
		}
	}
	if p.Trim != nil {
		if p.Rule == nil {
			return errors.New("dynamic F needs the rule whose trim level it adjusts")
		}
		return p.Trim.Validate()
	}
	return nil
}

// outcome returns the PTR outcome in d (NoPTRTest for other diagnostics).
func outcome(d aggregate.Diagnostics) aggregate.PTROutcome {
	if pd, ok := d.(aggregate.PTRDiagnostics); ok {
		return pd.Branch
	}
	return aggregate.NoPTRTest
}

// LearningRate returns LRFail or LRPass after a failed or passed test when
// set, else lr.
func (p *PTRPolicy) LearningRate(d aggregate.Diagnostics, lr float64) float64 {
	switch o := outcome(d); {
	case o == aggregate.PTRFailed && p.LRFail > 0:
		return p.LRFail
	case o == aggregate.PTRPassed && p.LRPass > 0:
		return p.LRPass
	}
	return lr
}

// Observe moves the rule's trim level after a test (dynamic F).
func (p *PTRPolicy) Observe(d aggregate.Diagnostics) {
	if o := outcome(d); p.Trim != nil && o != aggregate.NoPTRTest {
		p.Rule.SetTrimLevel(p.Trim.Next(p.Rule.TrimLevel(), o))
	}
}
