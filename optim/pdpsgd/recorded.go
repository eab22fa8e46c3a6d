package pdpsgd

import (
	"errors"
	"fmt"
	"math"
)

// loadedClass is a class's state as loaded (Ledger.loaded).
type loadedClass struct {
	spent   float64
	retired bool
}

// RecordedRound rebuilds the round a run began planning with an earlier
// accountant version and recorded by its threshold tau, noise multiplier
// sigma and steps (a checkpoint inside a round), for req (the request the
// run plans its rounds with): the rates π = Rate(remaining, τ), caps and
// retirements of Plan, computed from each class's spend and retirement as
// loaded — the state the earlier version planned from, before
// adoptRecomputed raised any spend — so the rates are those the round's
// steps ran at. Re-planning instead would re-calibrate with this version
// and can give another τ or σ (the PLD fast path's proven FFT charge moved
// ε by up to 1.4e-4 relative, privacy.RecertificationTolerance). Charge the
// round with ChargeRecorded. On a ledger written by this code and not yet
// charged since loading, RecordedRound with Plan's τ, σ and steps returns
// Plan's round.
func (l *Ledger) RecordedRound(req PlanRequest, tau, sigma float64, steps int) (Round, error) {
	switch {
	case l.paper():
		return Round{}, errors.New("ledger: paper accounting re-plans a round in progress (its calibration is on RDP, unchanged)")
	case !(req.Q > 0 && req.Q <= 1):
		return Round{}, fmt.Errorf("ledger: recorded round: sampling rate q must be in (0, 1], got %v", req.Q)
	case !(tau > 0) || math.IsInf(tau, 0) || !(sigma > 0) || math.IsInf(sigma, 0) || steps < 1:
		return Round{}, fmt.Errorf("ledger: recorded round: τ = %v, σ = %v, %d steps: want τ, σ finite and > 0 and ≥ 1 step", tau, sigma, steps)
	}
	r := Round{Index: len(l.rounds), Tau: tau, Sigma: sigma, Q: req.Q, Steps: steps,
		Rates: make([]float64, len(l.classes)), Caps: make([]float64, len(l.classes)),
		Retires: make([]bool, len(l.classes))}
	var values, counts []float64
	for k, c := range l.classes {
		st := loadedClass{spent: c.spent, retired: c.retired}
		if l.loaded != nil {
			st = l.loaded[k]
		}
		rem := 0.0
		if !st.retired {
			rem = math.Max(c.budget.Epsilon-st.spent, 0)
		}
		if !(rem > MinRemaining) {
			r.Caps[k] = st.spent
			continue
		}
		values = append(values, rem)
		counts = append(counts, float64(c.count))
		r.Eligible += c.count
		r.Rates[k] = Rate(rem, tau)
		r.Caps[k] = st.spent + math.Min(rem, tau)
		r.Retires[k] = rem <= tau
		r.Participants += float64(c.count) * r.Rates[k]
	}
	if r.Eligible == 0 {
		return Round{}, ErrExhausted
	}
	r.Loss = req.Loss.Value(values, counts, tau)
	if req.Sigma > 0 && steps == req.Steps {
		// Plan: the step limit ended the fixed-σ round, nobody retires.
		clear(r.Retires)
	}
	return r, nil
}

// ChargeRecorded charges round r like Charge, for a round planned by an
// earlier accountant version (RecordedRound) whose steps have run: each
// class is charged the ε this version certifies (never less than its
// spend so far). A class that lands above its round cap or its budget by
// at most SpendTolerance relative is accepted — the earlier version
// certified the same steps within them — and one above its budget is
// retired; the Guarantee then states the excess (Check accepts it as
// re-certified, class.inherited). Beyond the tolerance the charge is
// refused as by Charge (OVERSPEND). A class sampled by r is charged even if
// adoptRecomputed has retired it since.
func (l *Ledger) ChargeRecorded(r Round) error { return l.charge(r, true) }
