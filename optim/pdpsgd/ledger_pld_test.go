package pdpsgd

import (
	"encoding/json"
	"testing"

	"github.com/privtrain/privtrain/privacy"
)

// TestPLDLedger runs two rounds of PDP-SGD planning on the PLD accountant:
// Algorithm 4's σ is the smallest meeting every class's cap, no class
// exceeds its budget, the spend equals a fresh PLD accountant composing the
// class's rounds (bit for bit), the ledger survives JSON, and the first
// round needs less noise than on RDP.
func TestPLDLedger(t *testing.T) {
	if testing.Short() {
		t.Skip("calibrates σ on PLDs for every class")
	}
	budgets, err := GroupSpec{Groups: 2, Min: 0.5, Max: 1}.Generate(200, 1e-5, 3)
	if err != nil {
		t.Fatal(err)
	}
	// A coarse interval keeps the calibrations fast; the ε are still
	// certified upper bounds.
	const h = 1e-3
	l, err := NewLedger(budgets, privacy.KindPLD, privacy.AccountantConfig{Interval: h})
	if err != nil {
		t.Fatal(err)
	}
	rdp, _ := NewLedger(budgets, privacy.KindRDP, privacy.AccountantConfig{})
	q := 64.0 / 60000
	req := PlanRequest{Q: q, Steps: 200, Loss: Loss{W1: 0.7, W2: 0.3}}
	for round := 0; round < 2; round++ {
		r, err := l.Plan(req)
		if err != nil {
			t.Fatal(err)
		}
		if round == 0 {
			rr, err := rdp.Plan(req)
			if err != nil {
				t.Fatal(err)
			}
			if !(r.Sigma < rr.Sigma) {
				t.Errorf("PLD σ %v not below RDP σ %v", r.Sigma, rr.Sigma)
			}
			t.Logf("round 1: τ = %.4f, σ = %.5f on PLD, %.5f on RDP", r.Tau, r.Sigma, rr.Sigma)
		}
		if ok, err := l.fits(r, r.Sigma, r.Steps); err != nil || !ok {
			t.Fatalf("round %d: planned σ = %v does not meet the caps (%v)", round, r.Sigma, err)
		}
		if ok, _ := l.fits(r, r.Sigma-1e-4, r.Steps); ok {
			t.Errorf("round %d: σ = %v is not the smallest", round, r.Sigma)
		}
		if err := l.Charge(r); err != nil {
			t.Fatal(err)
		}
		for k, c := range l.classes {
			if c.spent > c.budget.Epsilon || c.spent > r.Caps[k] {
				t.Fatalf("round %d: class ε = %v spent %v (cap %v)", round, c.budget.Epsilon, c.spent, r.Caps[k])
			}
			a, _ := privacy.NewPLDAccountant(h)
			for _, rr := range l.rounds {
				if rr.Rates[k] > 0 {
					a.Compose(privacy.PoissonSubsampled{Base: privacy.Gaussian{Sigma: rr.Sigma}, Q: rr.Q * rr.Rates[k]}, rr.Steps)
				}
			}
			g, _ := a.EpsilonFor(c.budget.Delta)
			if g.Epsilon != c.spent {
				t.Fatalf("round %d: class ε = %v: ledger %v, recomputation %v", round, c.budget.Epsilon, c.spent, g.Epsilon)
			}
		}
	}
	if err := l.Check(); err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	var back Ledger
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if back.Accounting() != AccountingPLD || back.Spent(0) != l.Spent(0) {
		t.Errorf("restored ledger: %s, spent %v vs %v", back.Accounting(), back.Spent(0), l.Spent(0))
	}
	g, err := l.Guarantee()
	if err != nil {
		t.Fatal(err)
	}
	if g.SpentMax > g.BudgetMax || g.MinSlack < 0 {
		t.Errorf("guarantee %+v", g)
	}
}
