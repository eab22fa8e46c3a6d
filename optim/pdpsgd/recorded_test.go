package pdpsgd

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/privtrain/privtrain/privacy"
)

// TestRecordedRoundIsPlan: on a ledger this code wrote (the RDP ledger of
// main, which this code certifies unchanged), RecordedRound with the τ, σ
// and steps Plan chose returns Plan's round field for field, for a
// thresholded, a minimum-threshold and a fixed-σ request. On main's PLD
// ledger (re-certified on loading: spends raised by 4.9e-9 relative) its
// rates are Definition 4.1's π = expm1(ε_i − recorded spend)/expm1(τ)
// capped at 1, from the spends as recorded — the rates main's round ran
// at — and its caps recorded spend + min(remaining, τ).
func TestRecordedRoundIsPlan(t *testing.T) {
	load := func(name string) (Ledger, ledgerJSON) {
		data, err := os.ReadFile(filepath.Join("testdata", "main-ledger-"+name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var l Ledger
		var in ledgerJSON
		if err := json.Unmarshal(data, &l); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &in); err != nil {
			t.Fatal(err)
		}
		return l, in
	}
	for _, req := range []PlanRequest{
		{Q: 0.2, Steps: 20, Loss: Loss{W1: 0.7, W2: 0.3}},
		{Q: 0.2, Steps: 20, MinThreshold: true, Loss: Loss{W1: 1, W2: 1}},
		{Q: 0.2, Steps: 50, Sigma: 3, Loss: Loss{W1: 0.7, W2: 0.3}},
	} {
		l, _ := load("rdp")
		want, err := l.Plan(req)
		if err != nil {
			t.Fatal(err)
		}
		got, err := l.RecordedRound(req, want.Tau, want.Sigma, want.Steps)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("request %+v: recorded round\n%+v\nplan\n%+v", req, got, want)
		}
	}

	l, in := load("pld")
	if !l.Recertified() {
		t.Fatal("main's PLD ledger is not re-certified")
	}
	const tau, sigma = 0.75, 2.5
	r, err := l.RecordedRound(PlanRequest{Q: 0.2, Steps: 20}, tau, sigma, 20)
	if err != nil {
		t.Fatal(err)
	}
	if r.Index != 1 || r.Tau != tau || r.Sigma != sigma || r.Steps != 20 || r.Q != 0.2 {
		t.Fatalf("round %+v", r)
	}
	raised := false
	for k, c := range in.Classes {
		rem := c.Budget.Epsilon - c.Spent
		pi, capK := 1.0, c.Spent+math.Min(rem, tau)
		switch {
		case c.Retired || rem <= MinRemaining:
			pi, capK = 0, c.Spent
		case rem < tau:
			pi = math.Expm1(rem) / math.Expm1(tau)
		}
		if r.Rates[k] != pi || r.Caps[k] != capK {
			t.Errorf("class %d: rate %v cap %v, want %v and %v", k, r.Rates[k], r.Caps[k], pi, capK)
		}
		raised = raised || l.classes[k].spent > c.Spent
	}
	if !raised {
		t.Error("no spend was raised on loading: the rates do not test the recorded spends")
	}
	if _, err := l.RecordedRound(PlanRequest{Q: 0.2, Steps: 20}, tau, 0, 20); err == nil {
		t.Error("σ = 0 accepted")
	}
}

// TestChargeRecorded: a round charged above its caps and a budget by a
// relative 5e-4 (here: σ lowered until the binding class's certified ε is
// budget·(1 + 5e-4), on RDP and PLD ledgers) is refused by Charge and
// accepted by ChargeRecorded, which retires the class above its budget;
// the ledger checks, reloads unchanged, and the Guarantee states the
// excess exactly. At 2e-3 above (beyond SpendTolerance) ChargeRecorded
// refuses too, leaving the ledger unchanged.
func TestChargeRecorded(t *testing.T) {
	budgets := []Budget{{1, 1e-5}, {1, 1e-5}, {1, 1e-5}, {2, 1e-5}, {2, 1e-5}}
	for _, acc := range []string{privacy.KindRDP, privacy.KindPLD} {
		for _, over := range []float64{5e-4, 2e-3} {
			t.Run(fmt.Sprintf("%s %g", acc, over), func(t *testing.T) {
				l, err := NewLedger(budgets, acc, privacy.AccountantConfig{})
				if err != nil {
					t.Fatal(err)
				}
				req := PlanRequest{Q: 0.1, Steps: 30, MinThreshold: true}
				r, err := l.Plan(req)
				if err != nil {
					t.Fatal(err)
				}
				if r.Tau != 1 || !r.Retires[0] || r.Retires[1] {
					t.Fatalf("plan τ %v, retires %v", r.Tau, r.Retires)
				}
				// σ at which class 0 (budget 1) spends 1 + over.
				target := 1 + over
				eps := func(s float64) float64 {
					g, _, err := l.after(l.classes[0], s, r.Q, 1, r.Steps)
					if err != nil {
						t.Fatal(err)
					}
					return g.Epsilon
				}
				lo, hi := r.Sigma*0.9, r.Sigma
				for i := 0; i < 60; i++ {
					if mid := (lo + hi) / 2; eps(mid) > target {
						lo = mid
					} else {
						hi = mid
					}
				}
				low := r
				low.Sigma = lo // ε(lo) > target ≥ ε(hi), within 1e-9 relative
				spent := eps(lo)
				if math.Abs(spent/target-1) > 1e-6 {
					t.Fatalf("bisection: ε %v, want %v", spent, target)
				}
				if err := l.Charge(low); err == nil || !strings.Contains(err.Error(), "OVERSPEND") {
					t.Fatalf("Charge accepted a round above the budget: %v", err)
				}
				err = l.ChargeRecorded(low)
				if over > SpendTolerance {
					if err == nil || !strings.Contains(err.Error(), "OVERSPEND") || !strings.Contains(err.Error(), "SpendTolerance") {
						t.Fatalf("ChargeRecorded %g above the budget: %v", over, err)
					}
					if len(l.Rounds()) != 0 || l.Spent(0) != 0 {
						t.Fatal("a refused charge changed the ledger")
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				for i := range budgets {
					if l.Spent(i) != spent || l.Retired(i) != (i < 3) {
						t.Errorf("example %d: spent %v (want %v), retired %v", i, l.Spent(i), spent, l.Retired(i))
					}
				}
				if err := l.Check(); err != nil {
					t.Fatal(err)
				}
				g, err := l.Guarantee()
				if err != nil {
					t.Fatal(err)
				}
				want := fmt.Sprintf("except 3 retired examples at up to %v above it", spent-1)
				if !strings.Contains(g.Statement, want) || g.SpentMax != spent {
					t.Errorf("guarantee %q (spent max %v), want %q", g.Statement, g.SpentMax, want)
				}
				data, err := json.Marshal(&l)
				if err != nil {
					t.Fatal(err)
				}
				var back Ledger
				if err := json.Unmarshal(data, &back); err != nil {
					t.Fatal(err)
				}
				if back.Spent(0) != spent || !back.Retired(0) || back.Recertified() {
					t.Errorf("reloaded: spent %v, retired %v, re-certified %v", back.Spent(0), back.Retired(0), back.Recertified())
				}
			})
		}
	}
}
