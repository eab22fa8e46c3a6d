package pdpsgd

import (
	"fmt"
	"math"

	"github.com/privtrain/privtrain/privacy"
)

// SpendBound is a bound on the largest ε any example has spent so far in a
// personalized run, from the ledger's own accountant.
type SpendBound struct {
	// Epsilon is an upper bound on max_i spent_i after the steps so far
	// (each example's ε at its own δ_i), certified under AccountingPLD and
	// exact under AccountingRDP and AccountingPaper. After the round's last
	// step it is exactly the largest spend the ledger records when the round
	// is charged (Guarantee.SpentMax after the last round).
	Epsilon float64
	// Group is the budget (ε_i, δ_i) of a budget group that attains
	// Epsilon.
	Group Budget
	// Steps is the number of the round's steps Epsilon covers: the steps so
	// far under AccountingRDP and AccountingPaper; under AccountingPLD a
	// count ≥ the steps so far (a bound on a longer prefix of the round,
	// see SpendTracker.After).
	Steps int
	// Accounting names the accountant.
	Accounting Accounting
	// Ahead is set when the accountant reports bounds composed ahead of
	// the steps so far (privacy.ReportsAhead: Steps may exceed them).
	Ahead bool
}

// SpendTracker follows the largest per-example spend through a planned
// round (Ledger.Tracker), for the per-step ε of a personalized run's log. It
// never changes the ledger.
//
// Which groups. Example i's ε after t steps of the round is that of its
// group's history followed by t steps of the round's mechanism at rate q·π_i.
// A group a whose rate is at most group b's in every round so far and in
// this one, with δ_a ≥ δ_b, never spends more than b: one step at rate
// p_a ≤ p_b is a garbling of the step at p_b (keep its output with
// probability p_a/p_b, else replace it with a fresh draw from the
// mechanism's output on the dataset without the example; this maps the
// dominating pair at p_b onto the one at p_a in both directions), garblings
// compose, and ε(δ) only falls as δ grows. So only the groups not
// dominated that way are followed step by step (one group when every group
// the round samples had π = 1 so far, as in PDP-SGD with retirement); the
// others enter at the round's end, where every group's exact spend is the
// one Charge records, and the groups the round does not sample keep their
// recorded spend throughout.
//
// Cost under AccountingPLD. After t steps, a followed group's bound is
// privacy.PLDAccountant.EpsilonBound of its history plus t steps (certified,
// composed at pldBoundPoints counts per doubling of the group's total count
// on a coarser certified grid, cached in between), capped at the round's
// end. It is also never above the group's exact spend at the round's end
// (also a certified bound on the spend so far: ε only grows with further
// steps), which the ledger computed when it planned the round.
type SpendTracker struct {
	l      *Ledger
	r      Round
	follow []int                  // followed groups (sampled, not dominated)
	end    []float64              // per group: its spend after the whole round (-1: not sampled)
	base   []int                  // per followed group: its history's step count
	acct   []privacy.Accountant   // per followed group: its accountant so far
	paper  *privacy.RDPAccountant // AccountingPaper: the round's DP-SGD at (σ, q)
	floor  int                    // the largest recorded spend among unsampled groups (-1: none)
	done   int
}

// Tracker returns a SpendTracker for round r, which must be the next round
// (planned, not yet charged).
func (l *Ledger) Tracker(r Round) (*SpendTracker, error) {
	if r.Index != len(l.rounds) {
		return nil, fmt.Errorf("ledger tracker: round %d, but %d rounds are recorded", r.Index, len(l.rounds))
	}
	if len(r.Rates) != len(l.classes) {
		return nil, fmt.Errorf("ledger tracker: round has %d class rates, ledger %d classes", len(r.Rates), len(l.classes))
	}
	t := &SpendTracker{l: l, r: r, end: make([]float64, len(l.classes)), floor: -1}
	for k, c := range l.classes {
		t.end[k] = -1
		if r.Rates[k] == 0 || r.Steps == 0 {
			if t.floor < 0 || c.spent > l.classes[t.floor].spent {
				t.floor = k
			}
			continue
		}
		e, err := l.spendAfter(c, r, r.Rates[k], r.Steps)
		if err != nil {
			return nil, fmt.Errorf("ledger tracker: %w", err)
		}
		t.end[k] = e
		if !l.dominated(k, r) {
			t.follow = append(t.follow, k)
		}
	}
	for _, k := range t.follow {
		if c := l.classes[k]; !l.paper() {
			t.acct = append(t.acct, c.acct.CloneAccountant())
			t.base = append(t.base, c.acct.Steps())
		}
	}
	if l.paper() {
		a, err := privacy.NewRDPAccountant(nil)
		if err != nil {
			return nil, fmt.Errorf("ledger tracker: %w", err)
		}
		t.paper = a
	}
	return t, nil
}

// spendAfter is class c's ε after steps more steps of round r at rate π:
// what Charge records when steps = r.Steps.
func (l *Ledger) spendAfter(c *class, r Round, pi float64, steps int) (float64, error) {
	if l.paper() {
		inc, err := l.paperCharge(c, r.Sigma, r.Q, pi, steps)
		return c.spent + inc, err
	}
	res, _, err := l.after(c, r.Sigma, r.Q, pi, steps)
	return res.Epsilon, err
}

// dominated reports whether another sampled class b dominates class a in
// round r: rates ≤ b's in every charged round and in r, δ_a ≥ δ_b. Of
// classes with the same rates and δ (the same spend), the one with the
// smallest budget ε_i (then the lowest index) is followed.
func (l *Ledger) dominated(a int, r Round) bool {
	for b := range l.classes {
		if b == a || r.Rates[b] == 0 || r.Rates[a] > r.Rates[b] || l.classes[a].budget.Delta < l.classes[b].budget.Delta {
			continue
		}
		equal := r.Rates[a] == r.Rates[b] && l.classes[a].budget.Delta == l.classes[b].budget.Delta
		ok := true
		for _, past := range l.rounds {
			if past.Rates[a] > past.Rates[b] {
				ok = false
				break
			}
			equal = equal && past.Rates[a] == past.Rates[b]
		}
		ea, eb := l.classes[a].budget.Epsilon, l.classes[b].budget.Epsilon
		if ok && (!equal || eb < ea || eb == ea && b < a) {
			return true
		}
	}
	return false
}

// After returns the bound after steps ∈ [1, r.Steps] steps of the round;
// steps must not decrease between calls. At steps = r.Steps it is the
// largest spend the ledger records when it charges the round.
func (t *SpendTracker) After(steps int) (SpendBound, error) {
	if steps < t.done || steps < 1 || steps > t.r.Steps {
		return SpendBound{}, fmt.Errorf("ledger tracker: %d steps after %d, round of %d steps", steps, t.done, t.r.Steps)
	}
	add := steps - t.done
	t.done = steps
	best := SpendBound{Epsilon: math.Inf(-1), Steps: steps, Accounting: t.l.acc, Ahead: !t.l.paper() && privacy.ReportsAhead(t.l.classes[0].acct)}
	consider := func(k int, eps float64, covered int) {
		// Ties go to the smallest budget: the group that used most of its
		// own.
		if eps > best.Epsilon || eps == best.Epsilon && t.l.classes[k].budget.Epsilon < best.Group.Epsilon {
			best.Epsilon, best.Group, best.Steps = eps, t.l.classes[k].budget, covered
		}
	}
	if t.floor >= 0 {
		consider(t.floor, t.l.classes[t.floor].spent, steps)
	}
	if steps == t.r.Steps {
		// The round's end: every sampled group's exact spend.
		for k, e := range t.end {
			if e >= 0 {
				consider(k, e, steps)
			}
		}
		return best, nil
	}
	var eps0 float64 // AccountingPaper: ε of the round's DP-SGD so far at the current δ_R
	var delta0 float64
	if t.paper != nil && add > 0 {
		if err := t.paper.Compose(mechanism(t.r.Sigma, t.r.Q, 1), add); err != nil {
			return SpendBound{}, fmt.Errorf("ledger tracker: %w", err)
		}
	}
	for i, k := range t.follow {
		c := t.l.classes[k]
		if t.l.paper() {
			// The same expression as paperCharge on a prefix of the
			// round (Theorem 4.2 for its first steps, which are a
			// DP-SGD run of their own).
			if d := t.l.paperDelta(c); d != delta0 || eps0 == 0 {
				res, err := t.paper.Epsilon(d, t.l.conv)
				if err != nil {
					return SpendBound{}, fmt.Errorf("ledger tracker: %w", err)
				}
				eps0, delta0 = res.Epsilon, d
			}
			consider(k, c.spent+math.Log1p(t.r.Rates[k]*math.Expm1(eps0)), steps)
			continue
		}
		a := t.acct[i]
		if add > 0 {
			if err := a.Compose(mechanism(t.r.Sigma, t.r.Q, t.r.Rates[k]), add); err != nil {
				return SpendBound{}, fmt.Errorf("ledger tracker: %w", err)
			}
		}
		// The accountant's ε so far: on PLD a cached certified bound
		// composed after g.Steps ≥ the steps so far (EpsilonSoFar).
		g, _, err := privacy.EpsilonSoFar(a, c.budget.Delta, t.base[i]+t.r.Steps)
		if err != nil {
			return SpendBound{}, fmt.Errorf("ledger tracker: %w", err)
		}
		if g.Epsilon >= t.end[k] {
			consider(k, t.end[k], t.r.Steps)
		} else {
			consider(k, g.Epsilon, g.Steps-t.base[i])
		}
	}
	return best, nil
}
