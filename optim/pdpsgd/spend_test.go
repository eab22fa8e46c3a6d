package pdpsgd

import (
	"fmt"
	"math"
	"testing"

	"github.com/privtrain/privtrain/privacy"
)

// freshSpend recomputes class k's ε after the charged rounds and t steps of
// round r on fresh accountants (no ledger caches, no dominance argument):
// the certified PLD ε on the ledger's grid h, the RDP ε, or the paper's
// spent + Theorem 4.2 increment.
func freshSpend(t *testing.T, l *Ledger, acc Accounting, h float64, r Round, k, steps int) float64 {
	t.Helper()
	c := l.classes[k]
	if r.Rates[k] == 0 {
		return c.spent
	}
	mech := func(r Round) privacy.Mechanism {
		return privacy.PoissonSubsampled{Base: privacy.Gaussian{Sigma: r.Sigma}, Q: r.Q * r.Rates[k]}
	}
	switch acc {
	case AccountingPaper:
		inc, err := paperIncrement(privacy.ConversionBBG, c.budget.Delta/float64(l.paperRounds), r.Sigma, r.Q, r.Rates[k], steps)
		if err != nil {
			t.Fatal(err)
		}
		return c.spent + inc
	case AccountingRDP:
		a, err := privacy.NewRDPAccountant(nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range append(l.Rounds(), Round{Sigma: r.Sigma, Q: r.Q, Rates: r.Rates, Steps: steps}) {
			if p.Rates[k] > 0 && p.Steps > 0 {
				if err := a.Compose(mech(p), p.Steps); err != nil {
					t.Fatal(err)
				}
			}
		}
		res, err := a.Epsilon(c.budget.Delta, privacy.ConversionBBG)
		if err != nil {
			t.Fatal(err)
		}
		return res.Epsilon
	}
	return pldEpsAfter(t, append(l.Rounds(), Round{Sigma: r.Sigma, Q: r.Q, Rates: r.Rates, Steps: steps}), k, h, c.budget.Delta)
}

// TestSpendTracker follows two rounds of each accounting step by step: the
// bound is never below any budget group's spend recomputed from scratch at
// the same step (certified PLD on the ledger's own grid; RDP and paper
// exactly equal to the largest), it equals the ledger's largest spend
// bit for bit after each round's last step (so the log's last line equals
// the guarantee), and a tracker started in the middle of a round (a resumed
// run) answers bit for bit as the uninterrupted one. Budgets mix four ε and
// two δ; the fixed-σ case (AdaPDP) keeps groups sampled at π < 1 eligible,
// so several groups are followed.
func TestSpendTracker(t *testing.T) {
	const n, h = 400, 5e-4
	budgets := make([]Budget, n)
	for i := range budgets {
		budgets[i] = Budget{Epsilon: []float64{0.5, 0.7, 0.9, 1}[i%4], Delta: []float64{1e-5, 1e-6}[i/4%2]}
	}
	for _, tc := range []struct {
		acc   Accounting
		sigma float64
	}{{AccountingPLD, 0}, {AccountingPLD, 1.3}, {AccountingRDP, 0}, {AccountingPaper, 0}} {
		t.Run(fmt.Sprintf("%s-sigma%v", tc.acc, tc.sigma), func(t *testing.T) {
			if testing.Short() && tc.sigma > 0 {
				t.Skip("fresh PLD compositions at many steps")
			}
			var l *Ledger
			var err error
			switch tc.acc {
			case AccountingPLD:
				l, err = NewLedger(budgets, privacy.KindPLD, privacy.AccountantConfig{Interval: h})
			case AccountingRDP:
				l, err = NewLedger(budgets, privacy.KindRDP, privacy.AccountantConfig{})
			case AccountingPaper:
				l, err = NewPaperLedger(budgets, "", 2)
			}
			if err != nil {
				t.Fatal(err)
			}
			checks := map[int]bool{1: true, 7: true, 17: true, 33: true}
			for round, steps := range []int{60, 48} {
				r, err := l.Plan(PlanRequest{Q: 0.02, Steps: steps, Loss: Loss{W1: 0.7, W2: 0.3}, Sigma: tc.sigma})
				if err != nil {
					t.Fatal(err)
				}
				tr, err := l.Tracker(r)
				if err != nil {
					t.Fatal(err)
				}
				var got []SpendBound
				for s := 1; s <= r.Steps; s++ {
					b, err := tr.After(s)
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, b)
					if !checks[s] && s != r.Steps {
						continue
					}
					want, arg := math.Inf(-1), 0
					for k := range l.classes {
						if e := freshSpend(t, l, tc.acc, h, r, k, s); e > want {
							want, arg = e, k
						}
					}
					switch {
					case b.Epsilon < want:
						t.Errorf("round %d step %d: bound %v below group ε = %v's spend %v", round+1, s, b.Epsilon, l.classes[arg].budget.Epsilon, want)
					case tc.acc != AccountingPLD && (b.Epsilon != want || b.Steps != s):
						t.Errorf("round %d step %d: %v (steps %d), exact largest spend %v", round+1, s, b.Epsilon, b.Steps, want)
					case b.Steps < s || b.Steps > r.Steps || b.Accounting != tc.acc:
						t.Errorf("round %d step %d: covers %d steps (%s)", round+1, s, b.Steps, b.Accounting)
					}
					if s == 7 {
						t.Logf("round %d step %d: bound %.6f (group %v, %d steps), largest spend %.6f", round+1, s, b.Epsilon, b.Group, b.Steps, want)
					}
				}
				// Resumed in the middle of the round.
				mid, err := l.Tracker(r)
				if err != nil {
					t.Fatal(err)
				}
				for s := r.Steps / 2; s <= r.Steps; s++ {
					b, err := mid.After(s)
					if err != nil {
						t.Fatal(err)
					}
					if b != got[s-1] {
						t.Fatalf("round %d step %d: resumed tracker %+v, uninterrupted %+v", round+1, s, b, got[s-1])
					}
				}
				if _, err := mid.After(r.Steps - 1); err == nil {
					t.Error("a decreasing step count was accepted")
				}
				if err := l.Charge(r); err != nil {
					t.Fatal(err)
				}
				g, err := l.Guarantee()
				if err != nil {
					t.Fatal(err)
				}
				if last := got[len(got)-1]; last.Epsilon != g.SpentMax {
					t.Errorf("round %d: last bound %v, ledger's largest spend %v", round+1, last.Epsilon, g.SpentMax)
				}
			}
		})
	}
}

// TestCalibrationOrderIrrelevant plans the same rounds on PLD ledgers whose
// budget groups come in opposite orders (so calibrate asks them in
// different orders, and with different floors): σ is the same bit for bit,
// which is what lets calibrationOrder ask the π = 1 groups first.
func TestCalibrationOrderIrrelevant(t *testing.T) {
	const n, h = 400, 1e-3
	up := make([]Budget, n)
	down := make([]Budget, n)
	for i := range up {
		e := []float64{0.5, 0.6, 0.7, 0.8, 0.9, 1}[i%6]
		up[i], down[n-1-i] = Budget{Epsilon: e, Delta: 1e-5}, Budget{Epsilon: e, Delta: 1e-5}
	}
	for _, loss := range []Loss{{W1: 0.7, W2: 0.3}, {Adaptive: true}} {
		a, err := NewLedger(up, privacy.KindPLD, privacy.AccountantConfig{Interval: h})
		if err != nil {
			t.Fatal(err)
		}
		b, err := NewLedger(down, privacy.KindPLD, privacy.AccountantConfig{Interval: h})
		if err != nil {
			t.Fatal(err)
		}
		for round := 0; round < 2; round++ {
			req := PlanRequest{Q: 0.02, Steps: 80, Loss: loss}
			ra, err := a.Plan(req)
			if err != nil {
				t.Fatal(err)
			}
			rb, err := b.Plan(req)
			if err != nil {
				t.Fatal(err)
			}
			if ra.Sigma != rb.Sigma || ra.Tau != rb.Tau {
				t.Errorf("%+v round %d: σ %v (τ %v) in one order, %v (τ %v) in the other", loss, round+1, ra.Sigma, ra.Tau, rb.Sigma, rb.Tau)
			}
			if err := a.Charge(ra); err != nil {
				t.Fatal(err)
			}
			if err := b.Charge(rb); err != nil {
				t.Fatal(err)
			}
		}
	}
}
