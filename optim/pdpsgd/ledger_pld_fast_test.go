package pdpsgd

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"

	"github.com/privtrain/privtrain/privacy"
)

// pldEpsAfter recomputes class k's certified PLD ε from the rounds alone on
// a fresh accountant (no shared cache, no calibrator shortcuts).
func pldEpsAfter(t *testing.T, rounds []Round, k int, h, delta float64) float64 {
	t.Helper()
	a, err := privacy.NewPLDAccountant(h)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rounds {
		if r.Rates[k] > 0 && r.Steps > 0 {
			if err := a.Compose(privacy.PoissonSubsampled{Base: privacy.Gaussian{Sigma: r.Sigma}, Q: r.Q * r.Rates[k]}, r.Steps); err != nil {
				t.Fatal(err)
			}
		}
	}
	g, err := a.EpsilonFor(delta)
	if err != nil {
		t.Fatal(err)
	}
	return g.Epsilon
}

// TestPLDLedgerBelowRDPLedger charges the same rounds (planned on the RDP
// ledger) to an RDP and a PLD ledger: per budget group the PLD spend is at
// most the RDP spend and equals a fresh recomputation; then a round planned
// on the PLD ledger needs a σ no larger than the RDP ledger's for the same
// caps, meets every cap (certified) and is the smallest to the tolerance.
func TestPLDLedgerBelowRDPLedger(t *testing.T) {
	const h, n = 1e-3, 400
	budgets, err := GroupSpec{Groups: 4, Min: 0.5, Max: 1}.Generate(n, 1e-5, 3)
	if err != nil {
		t.Fatal(err)
	}
	rdp, err := NewLedger(budgets, privacy.KindRDP, privacy.AccountantConfig{})
	if err != nil {
		t.Fatal(err)
	}
	pld, err := NewLedger(budgets, privacy.KindPLD, privacy.AccountantConfig{Interval: h})
	if err != nil {
		t.Fatal(err)
	}
	req := PlanRequest{Q: 0.01, Steps: 150, Loss: Loss{W1: 0.7, W2: 0.3}}
	r, err := rdp.Plan(req)
	if err != nil {
		t.Fatal(err)
	}
	if err := rdp.Charge(r); err != nil {
		t.Fatal(err)
	}
	if err := pld.Charge(r); err != nil {
		t.Fatalf("PLD ledger refused the RDP-planned round: %v", err)
	}
	for k, c := range pld.classes {
		rc := rdp.classes[k]
		if c.spent > rc.spent {
			t.Errorf("class ε = %v: PLD spent %v > RDP spent %v", c.budget.Epsilon, c.spent, rc.spent)
		}
		if want := pldEpsAfter(t, pld.rounds, k, h, c.budget.Delta); c.spent != want {
			t.Errorf("class ε = %v: PLD ledger %v, fresh recomputation %v", c.budget.Epsilon, c.spent, want)
		}
		t.Logf("class ε = %.4f, π = %.3f: spent RDP %.4f, PLD %.4f", c.budget.Epsilon, r.Rates[k], rc.spent, c.spent)
	}
	if err := pld.Check(); err != nil {
		t.Fatal(err)
	}
	// Second round, planned on each ledger from its own state; then the
	// PLD ledger's σ for the RDP ledger's caps.
	req.Steps = 100
	rr, err := rdp.Plan(req)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := pld.Plan(req)
	if err != nil {
		t.Fatal(err)
	}
	if !(pr.Sigma <= rr.Sigma) {
		t.Errorf("round 2: PLD σ %v above RDP σ %v", pr.Sigma, rr.Sigma)
	}
	for k := range pld.classes {
		if pr.Rates[k] == 0 {
			continue
		}
		rounds := append(pld.Rounds(), pr)
		if e := pldEpsAfter(t, rounds, k, h, budgets[0].Delta); e > pr.Caps[k] {
			t.Errorf("round 2: class %d spends %v > cap %v at σ = %v", k, e, pr.Caps[k], pr.Sigma)
		}
	}
	if ok, _ := pld.fits(pr, pr.Sigma-privacy.CalibrationTolerance, pr.Steps); ok {
		t.Errorf("round 2: σ = %v is not the smallest: σ − tol also fits", pr.Sigma)
	}
	t.Logf("round 2: τ = %.4f, σ PLD %.6f, RDP %.6f", pr.Tau, pr.Sigma, rr.Sigma)
	if err := pld.Charge(pr); err != nil {
		t.Fatal(err)
	}
	if err := pld.Check(); err != nil {
		t.Fatal(err)
	}
}

// TestPLDLedgerFinalCheckFails: the final check on PLD detects a recorded
// spend that its accountant does not reproduce, an overspend, and a JSON
// ledger whose spend was edited; Charge refuses a round whose σ is too small.
func TestPLDLedgerFinalCheckFails(t *testing.T) {
	const h = 1e-3
	budgets, err := GroupSpec{Groups: 2, Min: 0.5, Max: 1}.Generate(100, 1e-5, 3)
	if err != nil {
		t.Fatal(err)
	}
	l, err := NewLedger(budgets, privacy.KindPLD, privacy.AccountantConfig{Interval: h})
	if err != nil {
		t.Fatal(err)
	}
	r, err := l.Plan(PlanRequest{Q: 0.01, Steps: 100, Loss: Loss{W1: 0.7, W2: 0.3}})
	if err != nil {
		t.Fatal(err)
	}
	low := r
	low.Sigma = r.Sigma * 0.8
	if err := l.Charge(low); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("a round at σ = %v (planned %v) was charged: %v", low.Sigma, r.Sigma, err)
	}
	if err := l.Charge(r); err != nil {
		t.Fatal(err)
	}
	if err := l.Check(); err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}

	c := l.classes[0]
	saved := c.spent
	c.spent = saved * 0.99 // recorded spend 1% below what the PLD says (> SpendTolerance)
	if err := l.Check(); err == nil || !strings.Contains(err.Error(), "accountant says") {
		t.Errorf("an understated spend passed the check: %v", err)
	}
	c.spent = saved

	// An example above its budget: shrink the class's budget under its
	// (correct) spend.
	b := c.budget
	c.budget.Epsilon = saved / 2
	if err := l.Check(); err == nil || !strings.Contains(err.Error(), "OVERSPEND") {
		t.Errorf("an overspend passed the check: %v", err)
	}
	c.budget = b
	if err := l.Check(); err != nil {
		t.Fatal(err)
	}

	// The same through the checkpoint: an edited spend is refused on load.
	var raw map[string]any
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	classes := raw["classes"].([]any)
	classes[0].(map[string]any)["spent"] = saved / 2
	edited, _ := json.Marshal(raw)
	var back Ledger
	if err := json.Unmarshal(edited, &back); err == nil {
		t.Error("a ledger with an edited spend was loaded")
	}
	if err := json.Unmarshal(data, &back); err != nil || back.Accounting() != AccountingPLD || back.Spent(0) != l.Spent(0) {
		t.Errorf("the unedited ledger did not load back: %v", err)
	}
}

// A fixed-σ round (AdaPDP) on PLD whose budgets end it early: the steps come
// from each class's MaxSteps; they fit every cap (certified), and the plain
// search over fits finds at most one more.
func TestPLDLedgerFixedSigmaSteps(t *testing.T) {
	const h = 1e-3
	budgets, err := GroupSpec{Groups: 3, Min: 0.5, Max: 1}.Generate(300, 1e-5, 3)
	if err != nil {
		t.Fatal(err)
	}
	l, err := NewLedger(budgets, privacy.KindPLD, privacy.AccountantConfig{Interval: h})
	if err != nil {
		t.Fatal(err)
	}
	r, err := l.Plan(PlanRequest{Q: 0.02, Steps: 5000, Sigma: 1.2, Loss: Loss{W1: 0.2, W2: 0.8}})
	if err != nil {
		t.Fatal(err)
	}
	if !(r.Steps > 0 && r.Steps < 5000) {
		t.Fatalf("round of %d steps: the budgets should end it early", r.Steps)
	}
	if ok, err := l.fits(r, r.Sigma, r.Steps); err != nil || !ok {
		t.Fatalf("%d steps do not fit (%v)", r.Steps, err)
	}
	search := sort.Search(5000, func(k int) bool { ok, _ := l.fits(r, r.Sigma, k+1); return !ok })
	if !(r.Steps <= search && search <= r.Steps+1) {
		t.Errorf("planned %d steps, the search over fits finds %d", r.Steps, search)
	}
	t.Logf("τ = %.4f: %d steps (search %d)", r.Tau, r.Steps, search)
	if err := l.Charge(r); err != nil {
		t.Fatal(err)
	}
	if err := l.Check(); err != nil {
		t.Fatal(err)
	}
}
