package finerdp_test

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/privtrain/privtrain/optim/pdpsgd"
	"github.com/privtrain/privtrain/privacy"

	"github.com/privtrain/privtrain/examples/custom-accountant/finerdp"
)

// bbgReference is ε over the grid computed here from the mechanism's RDP
// curve and Theorem 21 of Balle et al. (2020), independently of the
// accountant.
func bbgReference(t *testing.T, m privacy.Mechanism, n int, delta float64) float64 {
	best := math.Inf(1)
	for _, a := range finerdp.Orders() {
		v, err := m.RDP(a)
		if err != nil {
			t.Fatal(err)
		}
		e := float64(n)*v.Epsilon + math.Log((a-1)/a) - (math.Log(delta)+math.Log(a))/(a-1)
		best = math.Min(best, e)
	}
	return math.Max(best, 0)
}

func TestEpsilonAgainstReference(t *testing.T) {
	for _, c := range []struct {
		q, sigma float64
		n        int
		delta    float64
	}{
		{256.0 / 60000, 1.1, 14062, 1e-5},
		{0.01, 0.8, 1000, 1e-6},
		{1, 5, 10, 1e-5},
	} {
		m := privacy.SubsampledGaussian{Q: c.q, Sigma: c.sigma}
		a, err := privacy.NewAccountant(finerdp.Name, privacy.AccountantConfig{})
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Compose(m, c.n); err != nil {
			t.Fatal(err)
		}
		g, err := a.EpsilonFor(c.delta)
		if err != nil {
			t.Fatal(err)
		}
		want := bbgReference(t, m, c.n, c.delta)
		if math.Abs(g.Epsilon-want) > 1e-12*want || g.Accountant != finerdp.Name || g.Steps != c.n {
			t.Errorf("%+v: ε = %v (%s, %d steps), reference %v", c, g.Epsilon, g.Accountant, g.Steps, want)
		}
		// The RDP accountant on Opacus' grid gives nearly the same bound.
		r, _ := privacy.NewAccountant(privacy.KindRDP, privacy.AccountantConfig{})
		r.Compose(m, c.n)
		gr, _ := r.EpsilonFor(c.delta)
		if math.Abs(g.Epsilon-gr.Epsilon) > 0.01*gr.Epsilon {
			t.Errorf("%+v: rdp-fine ε = %v, rdp %v", c, g.Epsilon, gr.Epsilon)
		}
	}
}

// TestResume: the accountant's JSON, read back through the registry, answers
// bit for bit what the original does, also after more steps.
func TestResume(t *testing.T) {
	a, _ := privacy.NewAccountant(finerdp.Name, privacy.AccountantConfig{})
	a.Compose(privacy.SubsampledGaussian{Q: 0.02, Sigma: 1}, 300)
	data, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	b, err := privacy.LoadAccountant(data, privacy.AccountantConfig{})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []privacy.Accountant{a, b} {
		if err := x.Compose(privacy.Gaussian{Sigma: 20}, 7); err != nil {
			t.Fatal(err)
		}
	}
	ga, _ := a.EpsilonFor(1e-5)
	gb, _ := b.EpsilonFor(1e-5)
	if b.Kind() != finerdp.Name || math.Float64bits(ga.Epsilon) != math.Float64bits(gb.Epsilon) || len(b.History()) != 2 {
		t.Errorf("resumed %s: ε %v vs %v, history %v", b.Kind(), gb.Epsilon, ga.Epsilon, b.History())
	}
	bad, _ := json.Marshal(map[string]any{"accountant": finerdp.Name, "state": json.RawMessage(rdpState(t))})
	if _, err := privacy.LoadAccountant(bad, privacy.AccountantConfig{}); err == nil {
		t.Error("a history on another grid was accepted")
	}
	if _, err := privacy.NewAccountant(finerdp.Name, privacy.AccountantConfig{Conversion: privacy.ConversionMironov}); err == nil {
		t.Error("conversion mironov accepted")
	}
}

// rdpState is the state of an empty RDP accountant on Opacus' grid.
func rdpState(t *testing.T) []byte {
	a, err := privacy.NewRDPAccountant(nil)
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestMaxSteps against a linear scan.
func TestMaxSteps(t *testing.T) {
	a, _ := privacy.NewAccountant(finerdp.Name, privacy.AccountantConfig{})
	a.Compose(privacy.Gaussian{Sigma: 8}, 3)
	m := privacy.Gaussian{Sigma: 8}
	for _, c := range []struct {
		target float64
		limit  int
	}{{1, 100}, {2, 100}, {2, 5}, {0.1, 100}} {
		want := 0
		for n := 1; n <= c.limit; n++ {
			b := a.CloneAccountant()
			b.Compose(m, n)
			if g, _ := b.EpsilonFor(1e-5); g.Epsilon > c.target {
				break
			}
			want = n
		}
		got, err := a.MaxSteps(m, c.target, 1e-5, c.limit)
		if err != nil || got != want {
			t.Errorf("target %v limit %d: MaxSteps %d (%v), scan %d", c.target, c.limit, got, err, want)
		}
	}
	if a.Steps() != 3 {
		t.Error("MaxSteps changed the accountant")
	}
}

// TestCalibrate: privacy.CalibrateSigma's generic bisection on this
// accountant meets the target, and σ − 2·tolerance does not.
func TestCalibrate(t *testing.T) {
	const q, n, delta, target = 0.01, 500, 1e-5, 2.0
	s, err := privacy.CalibrateSigma(privacy.CalibrationRequest{TargetEpsilon: target, Delta: delta, Q: q, Steps: n, Accountant: finerdp.Name})
	if err != nil {
		t.Fatal(err)
	}
	eps := func(sigma float64) float64 {
		return bbgReference(t, privacy.SubsampledGaussian{Q: q, Sigma: sigma}, n, delta)
	}
	if !(eps(s) <= target && eps(s-2*privacy.CalibrationTolerance) > target) {
		t.Errorf("σ = %v: ε = %v, at σ − 2 tol: %v", s, eps(s), eps(s-2*privacy.CalibrationTolerance))
	}
}

// TestLedger: a PDP ledger accounts its budget classes on this accountant,
// and its JSON loads back.
func TestLedger(t *testing.T) {
	var budgets []pdpsgd.Budget
	for i := 0; i < 30; i++ {
		budgets = append(budgets, pdpsgd.Budget{Epsilon: []float64{1, 2, 3}[i%3], Delta: 1e-5})
	}
	l, err := pdpsgd.NewLedger(budgets, finerdp.Name, privacy.AccountantConfig{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := l.Plan(pdpsgd.PlanRequest{Q: 0.1, Steps: 50, Loss: pdpsgd.Loss{W1: 1, W2: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Charge(r); err != nil {
		t.Fatal(err)
	}
	g, err := l.Guarantee()
	if err != nil {
		t.Fatal(err)
	}
	if g.Accounting != pdpsgd.Accounting(finerdp.Name) || !(g.SpentMax > 0 && g.SpentMax <= 3) {
		t.Errorf("guarantee %+v", g)
	}
	data, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	var back pdpsgd.Ledger
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if back.Spent(0) != l.Spent(0) || back.Accounting() != l.Accounting() {
		t.Errorf("loaded ledger: spent %v (%s), want %v (%s)", back.Spent(0), back.Accounting(), l.Spent(0), l.Accounting())
	}
}
