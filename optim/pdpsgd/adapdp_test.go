package pdpsgd

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/privtrain/privtrain/privacy"
)

// adaPDPLedgers are the paper's MNIST setting (60,000 examples, 20 budget
// groups in [0.5, 1], k = 0, δ = 1e-5) under RDP with the Balle et al. and
// the paper's (Mironov) conversion, and, unless short, PLD.
func adaPDPLedgers(t *testing.T) map[string]*Ledger {
	t.Helper()
	budgets, err := GroupSpec{Groups: 20, Min: 0.5, Max: 1}.Generate(60000, 1e-5, 1)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*Ledger{}
	for _, c := range []privacy.Conversion{privacy.ConversionBBG, privacy.ConversionMironov} {
		if out["rdp-"+string(c)], err = NewLedger(budgets, privacy.KindRDP, privacy.AccountantConfig{Conversion: c}); err != nil {
			t.Fatal(err)
		}
		// D_T drawn once per round, Theorem 4.2 (the paper's own argument
		// for Algorithm 2), 2 rounds as in the pdp-table: δ_R = δ/2.
		if out["paper-"+string(c)], err = NewPaperLedger(budgets, c, 2); err != nil {
			t.Fatal(err)
		}
	}
	if !testing.Short() {
		if out["pld"], err = NewLedger(budgets, privacy.KindPLD, privacy.AccountantConfig{Interval: 0}); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestAdaPDPRoundsReachThreshold plans AdaPDP's rounds (σ = 1.3, q =
// 64/60000, loss weights 0.2/0.8) with UntilCaps and checks Algorithm 2's
// stopping rule: after the round's n steps every class is within its cap
// (spent + min(remaining, τ_T)) and its budget, and one more step would take
// some class past its cap — so the largest spend reaches its cap within one
// step's increment. It logs the steps per round (the paper's Table 2:
// ≈ 38,961 AdaPDP iterations in all).
func TestAdaPDPRoundsReachThreshold(t *testing.T) {
	const sigma, q = 1.3, 64.0 / 60000
	rounds := 3
	if testing.Short() {
		rounds = 1
	}
	for name, l := range adaPDPLedgers(t) {
		total := 0
		for R := 0; R < rounds; R++ {
			t0 := time.Now()
			req := PlanRequest{Q: q, Steps: 10_000_000, Loss: Loss{W1: 0.2, W2: 0.8}, Sigma: sigma, UntilCaps: true}
			r, err := l.Plan(req)
			if errors.Is(err, ErrExhausted) {
				t.Logf("%s round %d: none (%v)", name, R+1, err)
				break
			}
			if err != nil {
				t.Fatalf("%s round %d: %v", name, R+1, err)
			}
			// n fits, n+1 does not.
			ok, err := l.fits(r, sigma, r.Steps)
			if err != nil || !ok {
				t.Fatalf("%s round %d: %d steps do not fit (%v)", name, R+1, r.Steps, err)
			}
			if ok, err := l.fits(r, sigma, r.Steps+1); err != nil || ok {
				t.Fatalf("%s round %d: %d steps fit too: the round stopped early (%v)", name, R+1, r.Steps+1, err)
			}
			// The binding class: its spend after n steps is within one
			// step's increment of its cap, and n+1 steps would pass it.
			var gap, maxSpend float64 = math.Inf(1), 0
			for k, c := range l.classes {
				if r.Rates[k] == 0 {
					continue
				}
				en, err := l.spendAfter(c, r, r.Rates[k], r.Steps)
				if err != nil {
					t.Fatal(err)
				}
				en1, err := l.spendAfter(c, r, r.Rates[k], r.Steps+1)
				if err != nil {
					t.Fatal(err)
				}
				if en > r.Caps[k] || en > c.budget.Epsilon {
					t.Fatalf("%s round %d class %v: spend %v past cap %v", name, R+1, c.budget.Epsilon, en, r.Caps[k])
				}
				if en1 > r.Caps[k] {
					if r.Caps[k]-en > en1-en {
						t.Errorf("%s round %d class %v: %v below its cap, more than one step's increment %v", name, R+1, c.budget.Epsilon, r.Caps[k]-en, en1-en)
					}
					gap = math.Min(gap, r.Caps[k]-en)
				}
				maxSpend = math.Max(maxSpend, en-c.spent)
			}
			if math.IsInf(gap, 1) {
				t.Fatalf("%s round %d: no class binds", name, R+1)
			}
			if err := l.Charge(r); err != nil {
				t.Fatalf("%s round %d: charge: %v", name, R+1, err)
			}
			total += r.Steps
			t.Logf("%s round %d: τ = %.4f, %d steps (total %d), largest round spend %.4f, binding class %.2g below its cap; planned in %v",
				name, R+1, r.Tau, r.Steps, total, maxSpend, gap, time.Since(t0).Round(time.Millisecond))
		}
		if err := l.Check(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		g, err := l.Guarantee()
		if err != nil || g.MinSlack < 0 {
			t.Fatalf("%s: guarantee %+v %v", name, g, err)
		}
	}
	// The safety bound: a bound below the steps that reach τ fails.
	l := adaPDPLedgers(t)["rdp-bbg"]
	if _, err := l.Plan(PlanRequest{Q: q, Steps: 1000, Loss: Loss{W1: 0.2, W2: 0.8}, Sigma: sigma, UntilCaps: true}); err == nil {
		t.Error("a round bounded at 1000 steps was planned as reaching τ")
	} else {
		t.Log(err)
	}
}
