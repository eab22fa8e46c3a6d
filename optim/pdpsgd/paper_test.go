package pdpsgd

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/privtrain/privtrain/privacy"
	"github.com/privtrain/privtrain/randstream"
)

// roundEps is an independent recomputation of a round's DP-SGD ε at δ.
func roundEps(t *testing.T, sigma, q float64, steps int, delta float64) float64 {
	t.Helper()
	a, _ := privacy.NewRDPAccountant(nil)
	if err := a.Compose(privacy.PoissonSubsampled{Base: privacy.Gaussian{Sigma: sigma}, Q: q}, steps); err != nil {
		t.Fatal(err)
	}
	res, err := a.Epsilon(delta, privacy.ConversionBBG)
	if err != nil {
		t.Fatal(err)
	}
	return res.Epsilon
}

// TestPaperLedgerRounds plans and charges rounds under paper accounting on
// the MNIST-sized k = 0 budgets: σ_R is the smallest making the round's
// DP-SGD (τ_R, δ/k)-DP, every eligible example is charged
// log(1 + π(e^{ε_R} − 1)) ≤ min(remaining, τ_R) (Theorem 4.2), the examples
// below τ_R use up their budget and retire, δ spent stays ≤ δ_i, and the
// run ends when no remaining budget can pay for a certifiable round.
func TestPaperLedgerRounds(t *testing.T) {
	const k, steps, delta = 3, 938, 1e-5
	q := 64.0 / 60000
	budgets, err := GroupSpec{Groups: 20, Min: 0.5, Max: 1}.Generate(60000, delta, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, loss := range []Loss{{W1: 0.7, W2: 0.3}, {Adaptive: true}} {
		l, err := NewPaperLedger(budgets, "", k)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.SampleRates(Round{Rates: make([]float64, len(l.classes))}); err == nil {
			t.Fatal("per-step rates accepted under paper accounting")
		}
		rounds := 0
		for ; ; rounds++ {
			r, err := l.Plan(PlanRequest{Q: q, Steps: steps, Loss: loss})
			if errors.Is(err, ErrExhausted) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if rounds >= k {
				t.Fatalf("round %d planned beyond k = %d", rounds+1, k)
			}
			epsR := roundEps(t, r.Sigma, q, steps, delta/k)
			if epsR > r.Tau || roundEps(t, r.Sigma-1e-4, q, steps, delta/k) <= r.Tau {
				t.Fatalf("round %d: σ = %v gives ε_R = %v for τ = %v: not the smallest σ meeting τ", rounds+1, r.Sigma, epsR, r.Tau)
			}
			before := make([]float64, len(l.classes))
			for j, c := range l.classes {
				before[j] = c.remaining()
			}
			if err := l.Charge(r); err != nil {
				t.Fatal(err)
			}
			for j, c := range l.classes {
				inc, pi := c.rounds[rounds], r.Rates[j]
				want := math.Log1p(pi * math.Expm1(epsR))
				switch {
				case pi == 0 && inc != 0:
					t.Fatalf("round %d: class ε = %v not eligible but charged %v", rounds+1, c.budget.Epsilon, inc)
				case math.Abs(inc-want) > 1e-12:
					t.Fatalf("round %d: class ε = %v charged %v, Theorem 4.2 gives %v", rounds+1, c.budget.Epsilon, inc, want)
				case inc > math.Min(before[j], r.Tau):
					t.Fatalf("round %d: class ε = %v charged %v > min(remaining %v, τ %v)", rounds+1, c.budget.Epsilon, inc, before[j], r.Tau)
				case pi > 0 && before[j] <= r.Tau && (!c.retired || inc < before[j]*(1-1e-3)):
					t.Fatalf("round %d: class ε = %v below τ charged %v of its remaining %v (retired %v)", rounds+1, c.budget.Epsilon, inc, before[j], c.retired)
				case c.deltaSpent > c.budget.Delta:
					t.Fatalf("class ε = %v: δ spent %v", c.budget.Epsilon, c.deltaSpent)
				}
			}
		}
		if rounds == 0 {
			t.Fatal("no round")
		}
		g, err := l.Guarantee()
		if err != nil {
			t.Fatal(err)
		}
		if g.SpentMax > g.BudgetMax || g.MinSlack < 0 || g.DeltaMax > delta || g.MeanUse < 0.9 {
			t.Errorf("guarantee %+v", g)
		}
		// The JSON round trip keeps the accounting; a tampered charge is refused.
		data, _ := json.Marshal(l)
		var back Ledger
		if err := json.Unmarshal(data, &back); err != nil || back.Accounting() != AccountingPaper {
			t.Fatalf("round trip: %v, accounting %q", err, back.Accounting())
		}
		var raw map[string]any
		json.Unmarshal(data, &raw)
		cl := raw["classes"].([]any)[len(l.classes)-1].(map[string]any)
		cl["rounds"].([]any)[0] = cl["rounds"].([]any)[0].(float64) / 2
		tampered, _ := json.Marshal(raw)
		if err := json.Unmarshal(tampered, &back); err == nil || !strings.Contains(err.Error(), "recomputed") {
			t.Fatalf("tampered paper ledger accepted: %v", err)
		}
	}
}

// TestDrawRates: D_R contains each example with its class's π (checked
// per class within 6 binomial standard deviations), at rate q, reproducibly
// for a seed; exhausted examples are never drawn.
func TestDrawRates(t *testing.T) {
	budgets, _ := GroupSpec{Groups: 20, Min: 0.5, Max: 1}.Generate(60000, 1e-5, 2)
	l, _ := NewPaperLedger(budgets, "", 2)
	q := 64.0 / 60000
	r, err := l.Plan(PlanRequest{Q: q, Steps: 200, Loss: Loss{Adaptive: true}})
	if err != nil {
		t.Fatal(err)
	}
	rates, n, err := l.DrawRates(r, randstream.FromSeed(7))
	if err != nil {
		t.Fatal(err)
	}
	again, _, _ := l.DrawRates(r, randstream.FromSeed(7))
	other, _, _ := l.DrawRates(r, randstream.FromSeed(8))
	in := make([]float64, len(l.classes))
	same, diff, count := true, false, 0
	for i, v := range rates {
		if v != 0 && v != q {
			t.Fatalf("example %d: rate %v, want 0 or q", i, v)
		}
		if v == q {
			in[l.class[i]]++
			count++
		}
		same = same && again[i] == v
		diff = diff || other[i] != v
	}
	if !same || !diff || count != n {
		t.Fatalf("draw not reproducible (%v) or seed ignored (%v), |D_R| %d vs %d", same, diff, count, n)
	}
	for k, c := range l.classes {
		p, m := r.Rates[k], float64(c.count)
		if sd := math.Sqrt(m * p * (1 - p)); math.Abs(in[k]-m*p) > 6*sd+1e-9 {
			t.Errorf("class ε = %v: %v of %v drawn, π = %v", c.budget.Epsilon, in[k], m, p)
		}
	}
	rl, _ := NewLedger(budgets, privacy.KindRDP, privacy.AccountantConfig{})
	if _, _, err := rl.DrawRates(r, randstream.FromSeed(1)); err == nil {
		t.Error("DrawRates accepted under RDP accounting")
	}
}

// TestThresholdFrom: candidates below the smallest admissible τ are never
// chosen, and none left is ErrNoThreshold.
func TestThresholdFrom(t *testing.T) {
	values := []float64{0.05, 0.1, 0.3, 0.5, 0.7}
	counts := []float64{100, 100, 100, 100, 100}
	for _, tc := range []struct {
		loss   Loss
		minTau float64
	}{
		{Loss{W1: 0.7, W2: 0.3}, 0},
		{Loss{W1: 0.7, W2: 0.3}, 0.2},
		{Loss{W1: 0.1, W2: 0.9}, 0.2},
		{Loss{Adaptive: true}, 0.2},
		{Loss{Adaptive: true}, 0.6},
	} {
		tau, loss, err := tc.loss.ThresholdFrom(values, counts, tc.minTau)
		if err != nil {
			t.Fatal(err)
		}
		if tau < tc.minTau {
			t.Errorf("%+v from %v: τ = %v", tc.loss, tc.minTau, tau)
		}
		// Brute force over the admissible candidates.
		best := math.Inf(1)
		for j, v := range values {
			if v < tc.minTau || tc.loss.Adaptive && (j == 0 || j == len(values)-1) && len(values) > 2 && values[len(values)-2] >= tc.minTau {
				continue
			}
			best = math.Min(best, tc.loss.Value(values, counts, v))
		}
		if math.Abs(loss-best) > 1e-9*math.Max(1, best) {
			t.Errorf("%+v from %v: loss %v at τ %v, brute force %v", tc.loss, tc.minTau, loss, tau, best)
		}
	}
	if _, _, err := (Loss{W1: 1, W2: 1}).ThresholdFrom(values, counts, 0.8); !errors.Is(err, ErrNoThreshold) {
		t.Errorf("no admissible τ: %v", err)
	}
}
