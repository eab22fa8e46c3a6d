package runner

import (
	"fmt"
	"time"

	"github.com/privtrain/privtrain/optim"
	"github.com/privtrain/privtrain/optim/pdpsgd"
)

// pdpStepRecord is a personalized run's step line in metrics.jsonl. Its ε
// is the ledger's (the accountant of the run's guarantee, pld by default),
// not the trainer's worst case (an example sampled at the full rate q in
// every step), which ignores the personalized rates and retirement.
type pdpStepRecord struct {
	Step int `json:"step"`
	// EpsilonSpentMax bounds the largest ε any example has spent so far
	// (each at its own δ_i; pdpsgd.SpendBound): certified under pld, exact
	// under rdp and paper, and after the last step exactly summary.json's
	// epsilon (the ledger's largest spend).
	EpsilonSpentMax float64 `json:"epsilon_spent_max"`
	// Group is the budget ε_i (and δ_i) of a budget group that spent it.
	Group      float64 `json:"epsilon_spent_max_group"`
	GroupDelta float64 `json:"epsilon_spent_max_group_delta"`
	// EpsilonSteps (pld only) is the run step count the bound was composed
	// at, ≥ step + 1: the bound is that of a longer prefix of the round,
	// so an upper bound on the spend so far.
	EpsilonSteps int    `json:"epsilon_steps,omitempty"`
	Accountant   string `json:"accountant"`
}

// pdpSpend follows the ledger's largest spend through a round for the
// per-step log, timing its work.
type pdpSpend struct {
	t     *pdpsgd.SpendTracker
	start int // the round's first step
	secs  *float64
}

// newPDPSpend starts the per-step ε of planned round plan, which begins at
// step start; its time is added to *secs.
func newPDPSpend(l *pdpsgd.Ledger, plan pdpsgd.Round, start int, secs *float64) (*pdpSpend, error) {
	t0 := time.Now()
	t, err := l.Tracker(plan)
	*secs += time.Since(t0).Seconds()
	if err != nil {
		return nil, err
	}
	return &pdpSpend{t: t, start: start, secs: secs}, nil
}

// logStep writes step res to metrics.jsonl with the ledger's ε after it,
// and the full record (the step's ε fields replaced by the ledger's) to
// private/diagnostics.jsonl.
func (s *pdpSpend) logStep(metrics *runLogs, res optim.StepResult) (pdpsgd.SpendBound, error) {
	t0 := time.Now()
	b, err := s.t.After(res.Step + 1 - s.start)
	*s.secs += time.Since(t0).Seconds()
	if err != nil {
		return b, fmt.Errorf("step %d: %w", res.Step, err)
	}
	rec := pdpStepRecord{Step: res.Step, EpsilonSpentMax: b.Epsilon, Group: b.Group.Epsilon, GroupDelta: b.Group.Delta,
		Accountant: string(b.Accounting)}
	if b.Ahead {
		rec.EpsilonSteps = s.start + b.Steps
	}
	res.Epsilon, res.Accountant, res.EpsilonSteps = rec.EpsilonSpentMax, rec.Accountant, rec.EpsilonSteps
	if err := metrics.public.Write(rec); err != nil {
		return b, err
	}
	return b, metrics.diag.Write(res)
}
