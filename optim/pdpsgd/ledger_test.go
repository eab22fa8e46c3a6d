package pdpsgd

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/privtrain/privtrain/privacy"
)

// paperBudgets is the paper's k = 0 setting at a small scale: 20 groups in
// [0.5, 1], n examples.
func paperBudgets(t *testing.T, n int) []Budget {
	t.Helper()
	b, err := GroupSpec{Groups: 20, Min: 0.5, Max: 1}.Generate(n, 1e-5, 3)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// epsAfter is an independent recomputation of one example's ε: a fresh
// accountant composing its rounds.
func epsAfter(t *testing.T, rounds []Round, k int, delta float64) float64 {
	t.Helper()
	a, _ := privacy.NewRDPAccountant(nil)
	for _, r := range rounds {
		if r.Rates[k] > 0 && r.Steps > 0 {
			if err := a.Compose(privacy.PoissonSubsampled{Base: privacy.Gaussian{Sigma: r.Sigma}, Q: r.Q * r.Rates[k]}, r.Steps); err != nil {
				t.Fatal(err)
			}
		}
	}
	res, err := a.Epsilon(delta, privacy.ConversionBBG)
	if err != nil {
		t.Fatal(err)
	}
	return res.Epsilon
}

// TestLedgerRoundsNeverOverspend runs four rounds of PDP-SGD planning on the
// paper's budgets: every round's σ is the smallest meeting the caps (σ − 1e-4
// breaks one), no example ever exceeds its budget, exhausted examples get
// rate 0, and the spend agrees with an independent recomputation.
func TestLedgerRoundsNeverOverspend(t *testing.T) {
	const n = 2000
	budgets := paperBudgets(t, n)
	l, err := NewLedger(budgets, privacy.KindRDP, privacy.AccountantConfig{})
	if err != nil {
		t.Fatal(err)
	}
	q := 64.0 / 60000
	steps := 300
	for round := 0; round < 4; round++ {
		r, err := l.Plan(PlanRequest{Q: q, Steps: steps, Loss: Loss{W1: 0.7, W2: 0.3}})
		if err != nil {
			t.Fatal(err)
		}
		ok, err := l.fits(r, r.Sigma, r.Steps)
		if err != nil || !ok {
			t.Fatalf("round %d: planned σ = %v does not meet the caps (%v)", round, r.Sigma, err)
		}
		if ok, _ := l.fits(r, r.Sigma-1e-4, r.Steps); ok {
			t.Errorf("round %d: σ = %v is not the smallest: σ − 1e-4 also fits", round, r.Sigma)
		}
		rates, _ := l.SampleRates(r)
		for i := range budgets {
			rem := l.Remaining(i)
			switch {
			case rem <= MinRemaining && rates[i] != 0:
				t.Fatalf("round %d: exhausted example %d sampled at %v", round, i, rates[i])
			case rem > MinRemaining && math.Abs(rates[i]-q*Rate(rem, r.Tau)) > 1e-18:
				t.Fatalf("round %d: example %d rate %v, want q·π = %v", round, i, rates[i], q*Rate(rem, r.Tau))
			}
		}
		if err := l.Charge(r); err != nil {
			t.Fatal(err)
		}
		if err := l.Charge(r); err == nil {
			t.Fatal("charging the same round twice was accepted")
		}
		for k, c := range l.classes {
			if c.spent > c.budget.Epsilon || c.spent > r.Caps[k] {
				t.Fatalf("round %d: class ε = %v spent %v (cap %v)", round, c.budget.Epsilon, c.spent, r.Caps[k])
			}
			if want := epsAfter(t, l.rounds, k, c.budget.Delta); math.Abs(want-c.spent) > 1e-12 {
				t.Fatalf("round %d: class ε = %v: ledger %v, recomputation %v", round, c.budget.Epsilon, c.spent, want)
			}
		}
	}
	if err := l.Check(); err != nil {
		t.Fatal(err)
	}
	g, err := l.Guarantee()
	if err != nil {
		t.Fatal(err)
	}
	if g.SpentMax > g.BudgetMax || g.MinSlack < 0 || g.Rounds != 4 || g.Theorem45Delta != 4e-5 || g.DeltaMax != 1e-5 {
		t.Errorf("guarantee %+v", g)
	}
	if g.MeanUse < 0.5 {
		t.Errorf("four rounds used only %.0f%% of the budgets", 100*g.MeanUse)
	}
}

// TestPlanDPSGDAtMinEpsilon: with MinThreshold every example has π = 1 and
// σ is the DP-SGD σ for min ε_i, equal to the calibrator's answer directly.
func TestPlanDPSGDAtMinEpsilon(t *testing.T) {
	l, _ := NewLedger(paperBudgets(t, 500), privacy.KindRDP, privacy.AccountantConfig{})
	q := 0.01
	r, err := l.Plan(PlanRequest{Q: q, Steps: 200, MinThreshold: true, Loss: Loss{W1: 1, W2: 1}})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range r.Rates {
		if p != 1 {
			t.Fatalf("rate %v, want 1", p)
		}
	}
	want, _ := privacy.CalibrateSigma(privacy.CalibrationRequest{TargetEpsilon: 0.5, Delta: 1e-5, Q: q, Steps: 200, Accountant: privacy.KindRDP})
	if r.Tau != 0.5 || math.Abs(r.Sigma-want) > 2*privacy.CalibrationTolerance {
		t.Errorf("τ = %v, σ = %v; want 0.5, %v", r.Tau, r.Sigma, want)
	}
	if err := l.Charge(r); err != nil {
		t.Fatal(err)
	}
	g, _ := l.Guarantee()
	if g.SpentMax > 0.5 || g.SpentMin != g.SpentMax || g.SpentMax < 0.5-1e-3 {
		t.Errorf("every example should spend just under 0.5: %+v", g)
	}
}

// TestPlanFixedSigma checks AdaPDP's loop: with σ fixed, the round runs the
// most steps that fit (one more does not).
func TestPlanFixedSigma(t *testing.T) {
	l, _ := NewLedger(paperBudgets(t, 500), privacy.KindRDP, privacy.AccountantConfig{})
	r, err := l.Plan(PlanRequest{Q: 64.0 / 60000, Steps: 100000, Sigma: 1.3, Loss: Loss{W1: 0.2, W2: 0.8}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Steps < 1 || r.Steps >= 100000 {
		t.Fatalf("steps %d", r.Steps)
	}
	if ok, _ := l.fits(r, 1.3, r.Steps); !ok {
		t.Error("planned steps do not fit")
	}
	if ok, _ := l.fits(r, 1.3, r.Steps+1); ok {
		t.Error("one more step also fits")
	}
	small, _ := l.Plan(PlanRequest{Q: 64.0 / 60000, Steps: 3, Sigma: 1.3, Loss: Loss{W1: 0.2, W2: 0.8}})
	if small.Steps != 3 {
		t.Errorf("the step limit is not respected: %d", small.Steps)
	}
	// A budget-bound round retires the classes below τ; a round ended by
	// its step limit retires nobody (they keep their unspent budget).
	if !slices.Contains(r.Retires, true) || slices.Contains(small.Retires, true) {
		t.Errorf("retirements: budget-bound round %v, length-bound round %v", r.Retires, small.Retires)
	}
}

// TestLedgerOverspendFailsLoudly charges a round whose σ is too small.
func TestLedgerOverspendFailsLoudly(t *testing.T) {
	l, _ := NewLedger(paperBudgets(t, 300), privacy.KindRDP, privacy.AccountantConfig{})
	r, err := l.Plan(PlanRequest{Q: 0.01, Steps: 100, Loss: Loss{Adaptive: true}})
	if err != nil {
		t.Fatal(err)
	}
	bad := r
	bad.Sigma = r.Sigma / 3
	err = l.Charge(bad)
	if err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("overspending round accepted: %v", err)
	}
	if len(l.rounds) != 0 || l.Spent(0) != 0 {
		t.Fatal("a refused charge changed the ledger")
	}
	if err := l.Charge(r); err != nil {
		t.Fatal(err)
	}
	// A ledger whose record says less than its history is refused on load.
	data, _ := json.Marshal(l)
	var raw map[string]any
	json.Unmarshal(data, &raw)
	raw["classes"].([]any)[0].(map[string]any)["spent"] = 0.01
	tampered, _ := json.Marshal(raw)
	var back Ledger
	if err := json.Unmarshal(tampered, &back); err == nil {
		t.Fatal("tampered ledger accepted")
	}
	// A budget lowered below what was spent fails Check loudly.
	c := l.classes[0]
	c.budget.Epsilon = c.spent / 2
	if err := l.Check(); err == nil || !strings.Contains(err.Error(), "OVERSPEND") {
		t.Fatalf("overspent ledger passed Check: %v", err)
	}
}

// TestLedgerJSONAndCSV: a restored ledger plans the next round exactly as
// the original; the CSV has one row per example with consistent totals.
func TestLedgerJSONAndCSV(t *testing.T) {
	budgets := paperBudgets(t, 400)
	l, _ := NewLedger(budgets, privacy.KindRDP, privacy.AccountantConfig{})
	r, _ := l.Plan(PlanRequest{Q: 0.01, Steps: 50, Loss: Loss{W1: 0.7, W2: 0.3}})
	if err := l.Charge(r); err != nil {
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
	if !back.SameBudgets(budgets) {
		t.Fatal("budgets changed in the round trip")
	}
	retired := 0
	for i := range budgets {
		if back.Retired(i) != l.Retired(i) || back.Remaining(i) != l.Remaining(i) {
			t.Fatalf("example %d: retirement not kept in the round trip", i)
		}
		if l.Retired(i) {
			retired++
		}
	}
	if retired == 0 {
		t.Fatal("no example below τ_1 was retired")
	}
	req := PlanRequest{Q: 0.01, Steps: 50, Loss: Loss{W1: 0.7, W2: 0.3}}
	a, _ := l.Plan(req)
	b, _ := back.Plan(req)
	if a.Tau != b.Tau || a.Sigma != b.Sigma {
		t.Errorf("restored ledger plans τ %v σ %v, original τ %v σ %v", b.Tau, b.Sigma, a.Tau, a.Sigma)
	}
	var buf bytes.Buffer
	if err := l.WriteCSV(&buf); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(budgets)+1 || strings.Join(rows[0], ",") != "index,epsilon,delta,round_1,spent,unused,retired" {
		t.Fatalf("csv header %v, %d rows", rows[0], len(rows))
	}
	for i, row := range rows[1:] {
		eps, _ := strconv.ParseFloat(row[1], 64)
		r1, _ := strconv.ParseFloat(row[3], 64)
		spent, _ := strconv.ParseFloat(row[4], 64)
		if row[0] != strconv.Itoa(i) || eps != budgets[i].Epsilon || r1 != spent || spent > eps || spent != l.Spent(i) {
			t.Fatalf("row %d: %v", i, row)
		}
	}
}

// TestAdaptiveThresholdDoesNotCollapse reproduces the MNIST setting in
// which loss_a collapsed (60000 examples, k = 0 budgets in [0.5, 1],
// δ = 1e-5, q = 64/60000, one epoch per round): without retirement, every
// class sampled at π < 1 kept a small leftover, loss_a chose τ_2 ≈ 0.006
// and τ_3 ≈ 1e-5, and σ rose to 1.4 and then 31. With retirement, the
// classes allotted their whole remaining budget are never sampled again,
// every τ_R is a real budget level, σ stays near the first round's, and no
// example overspends.
func TestAdaptiveThresholdDoesNotCollapse(t *testing.T) {
	for _, tc := range []struct {
		name string
		loss Loss
	}{
		{"adaptive", Loss{Adaptive: true}},
		{"fixed", Loss{W1: 0.7, W2: 0.3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			budgets, err := GroupSpec{Groups: 20, Min: 0.5, Max: 1}.Generate(60000, 1e-5, 1)
			if err != nil {
				t.Fatal(err)
			}
			l, err := NewLedger(budgets, privacy.KindRDP, privacy.AccountantConfig{})
			if err != nil {
				t.Fatal(err)
			}
			var sigma0 float64
			for round := 0; round < 3; round++ {
				r, err := l.Plan(PlanRequest{Q: 64.0 / 60000, Steps: 938, Loss: tc.loss})
				if errors.Is(err, ErrExhausted) && round > 0 {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if round == 0 {
					sigma0 = r.Sigma
				}
				// A gap between two of the 20 budget levels is 0.026; the
				// collapse put τ at 0.006 and 1e-5.
				if r.Tau < 0.02 || r.Sigma > 1.2*sigma0 {
					t.Fatalf("round %d: τ = %v, σ = %v (round 1: σ = %v): the threshold collapsed", round+1, r.Tau, r.Sigma, sigma0)
				}
				if err := l.Charge(r); err != nil {
					t.Fatal(err)
				}
				for k, c := range l.classes {
					if r.Rates[k] > 0 && r.Rates[k] < 1 && (!c.retired || c.remaining() != 0) {
						t.Fatalf("round %d: class ε = %v sampled at π = %v was not retired", round+1, c.budget.Epsilon, r.Rates[k])
					}
				}
			}
			if err := l.Check(); err != nil {
				t.Fatal(err)
			}
			for i := range budgets {
				if l.Spent(i) > budgets[i].Epsilon || l.Unused(i) < 0 {
					t.Fatalf("example %d: spent %v, unused %v of %v", i, l.Spent(i), l.Unused(i), budgets[i].Epsilon)
				}
			}
		})
	}
}
