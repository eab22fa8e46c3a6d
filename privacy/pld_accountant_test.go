package privacy

import (
	"encoding/json"
	"math"
	"testing"
)

var (
	_ Accountant = (*PLDAccountant)(nil)
	_ Accountant = (*RDPAccounting)(nil)
)

// Heterogeneous Gaussians compose to one Gaussian: 1/σ² adds up.
func TestPLDAccountantHeterogeneousGaussians(t *testing.T) {
	a, err := NewPLDAccountant(0)
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		sigma float64
		n     int
	}{{3, 10}, {5, 40}, {2, 3}, {3, 7}}
	var prec float64
	for _, s := range steps {
		if err := a.Compose(Gaussian{Sigma: s.sigma}, s.n); err != nil {
			t.Fatal(err)
		}
		prec += float64(s.n) / (s.sigma * s.sigma)
	}
	sigma := 1 / math.Sqrt(prec)
	for _, delta := range []float64{1e-5, 1e-7} {
		exact := epsFromDelta(delta, func(e float64) float64 { return analyticGaussianDelta(sigma, e) })
		g, err := a.EpsilonFor(delta)
		if err != nil {
			t.Fatal(err)
		}
		checkBracket(t, "heterogeneous", g.Epsilon, exact, g.Optimistic, 0.01, 0)
		if g.Accountant != KindPLD || g.Steps != 60 || g.Interval != DefaultPLDInterval {
			t.Errorf("guarantee metadata %+v", g)
		}
	}
}

// The JSON history restores an accountant that answers bit for bit the
// same, also after further steps; bad histories are refused.
func TestPLDAccountantJSONResume(t *testing.T) {
	sg := SubsampledGaussian{Q: 0.01, Sigma: 1.1}
	a, _ := NewPLDAccountant(0)
	for _, c := range []struct {
		m Mechanism
		n int
	}{{sg, 300}, {Laplace{B: 20}, 2}, {PoissonSubsampled{Base: Gaussian{Sigma: 0.9}, Q: 0.02}, 50}, {sg, 200}} {
		if err := a.Compose(c.m, c.n); err != nil {
			t.Fatal(err)
		}
	}
	data, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	restored, err := LoadAccountant(data, AccountantConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if restored.Kind() != KindPLD || restored.Steps() != a.Steps() || len(restored.History()) != 4 {
		t.Fatalf("restored %v", restored)
	}
	for _, acc := range []Accountant{a, restored} {
		if err := acc.Compose(sg, 100); err != nil {
			t.Fatal(err)
		}
	}
	g1, _ := a.EpsilonFor(1e-5)
	g2, _ := restored.EpsilonFor(1e-5)
	if math.Float64bits(g1.Epsilon) != math.Float64bits(g2.Epsilon) || math.Float64bits(g1.Optimistic) != math.Float64bits(g2.Optimistic) {
		t.Errorf("resumed ε %v/%v differs from original %v/%v", g2.Epsilon, g2.Optimistic, g1.Epsilon, g1.Optimistic)
	}
	d1, _ := a.DeltaFor(1)
	d2, _ := restored.DeltaFor(1)
	if d1.Delta != d2.Delta || !(d1.Delta > 0) {
		t.Errorf("δ(1): %v vs %v", d1.Delta, d2.Delta)
	}
	c := a.CloneAccountant()
	if err := c.Compose(sg, 1); err != nil {
		t.Fatal(err)
	}
	if c.Steps() != a.Steps()+1 {
		t.Errorf("clone shares state")
	}
	for _, bad := range []string{
		`{"accountant":"pld","state":{"version":1,"interval":0.0001,"mechanisms":[{"spec":{"kind":"gaussian","params":{"sigma":1}},"count":3}],"history":[{"mechanism":0,"count":2}]}}`,
		`{"accountant":"pld","state":{"version":1,"interval":0.0001,"mechanisms":[{"spec":{"kind":"ptr-discrete","params":{"sigma1":1,"tau":1,"b":1,"delta0":1e-6,"k":1}},"count":1}],"history":[{"mechanism":0,"count":1}]}}`,
		`{"accountant":"pld","state":{"version":2}}`,
		`{"accountant":"pld","state":{"version":1,"interval":-1}}`,
		`{"accountant":"xyz","state":{}}`,
	} {
		if _, err := LoadAccountant([]byte(bad), AccountantConfig{}); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}

// Mechanisms without a proven PLD (the discrete-Laplace PTR release, RGM)
// are refused; PTR has one since docs/ptr-pld.md.
func TestPLDAccountantRefusesUnproven(t *testing.T) {
	a, _ := NewPLDAccountant(0)
	disc := PTRDiscrete{Sigma1: 1, Tau: 1, B: 1, Delta0: 1e-6, K: 1}
	rgm := RGM{Eta: 0.01, Gamma: 1e-3, Dim: 5}
	for _, m := range []Mechanism{disc, PoissonSubsampled{Base: disc, Q: 0.01}, rgm, PoissonSubsampled{Base: rgm, Q: 0.01}} {
		if err := a.Compose(m, 1); err == nil {
			t.Errorf("composed %s", m.Spec().Kind)
		}
		if HasPLD(m) {
			t.Errorf("HasPLD(%s)", m.Spec().Kind)
		}
	}
	if a.Steps() != 0 {
		t.Error("refused compositions were recorded")
	}
	ptr := PTR{Sigma1: 1, Tau: 1, B: 1, Delta0: 1e-6}
	for _, m := range []Mechanism{SubsampledGaussian{Q: 0.1, Sigma: 1}, PoissonSubsampled{Base: Gaussian{Sigma: 1}, Q: 0.1}, ptr, PoissonSubsampled{Base: ptr, Q: 0.01}} {
		if !HasPLD(m) {
			t.Errorf("HasPLD false for %s", m.Spec().Kind)
		}
	}
}

// MaxSteps: n steps fit and n+1 do not, for both accountants.
func TestMaxSteps(t *testing.T) {
	m := SubsampledGaussian{Q: 0.02, Sigma: 1.5}
	pld, _ := NewPLDAccountant(0)
	rdp, _ := NewRDPAccounting("", AccountantOptions{})
	for _, acc := range []Accountant{pld, rdp} {
		if err := acc.Compose(m, 5); err != nil {
			t.Fatal(err)
		}
		n, err := acc.MaxSteps(m, 1.0, 1e-5, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		if n < 1 {
			t.Fatalf("%s: no step fits", acc.Kind())
		}
		for _, k := range []int{n, n + 1} {
			c := acc.CloneAccountant()
			if err := c.Compose(m, k); err != nil {
				t.Fatal(err)
			}
			g, _ := c.EpsilonFor(1e-5)
			if (g.Epsilon <= 1.0) != (k == n) {
				t.Errorf("%s: %d more steps give ε = %v (max steps %d)", acc.Kind(), k, g.Epsilon, n)
			}
		}
		t.Logf("%s: %d more steps fit in ε = 1.0", acc.Kind(), n)
		// The answer MaxSteps confirmed (and caches) is bit for bit what a
		// fresh accountant with the same history reports.
		c := acc.CloneAccountant()
		c.Compose(m, n)
		fresh, _ := NewAccountant(acc.Kind(), AccountantConfig{})
		fresh.Compose(m, 5+n)
		g1, _ := c.EpsilonFor(1e-5)
		g2, _ := fresh.EpsilonFor(1e-5)
		if math.Float64bits(g1.Epsilon) != math.Float64bits(g2.Epsilon) {
			t.Errorf("%s: ε after MaxSteps %v, fresh %v", acc.Kind(), g1.Epsilon, g2.Epsilon)
		}
		if l, _ := acc.MaxSteps(m, 1.0, 1e-5, 10); l != 10 {
			t.Errorf("%s: limit not honoured: %d", acc.Kind(), l)
		}
	}
}

// σ calibration on the PLD accountant: the σ found meets the target and
// σ − tolerance does not; PLD needs less noise than RDP.
func TestCalibrateSigmaPLD(t *testing.T) {
	if testing.Short() {
		t.Skip("calibration composes ~25 PLDs")
	}
	req := CalibrationRequest{TargetEpsilon: 2, Delta: 1e-5, Q: 0.01, Steps: 500, Accountant: KindPLD, PLDInterval: 5e-4}
	s, err := CalibrateSigma(req)
	if err != nil {
		t.Fatal(err)
	}
	epsAt := func(sigma float64) float64 {
		a, _ := NewPLDAccountant(5e-4)
		a.Compose(SubsampledGaussian{Q: 0.01, Sigma: sigma}, 500)
		g, _ := a.EpsilonFor(1e-5)
		return g.Epsilon
	}
	if e := epsAt(s); e > 2 {
		t.Errorf("σ = %v gives ε = %v > 2", s, e)
	}
	if e := epsAt(s - CalibrationTolerance); e <= 2 {
		t.Errorf("σ − tol = %v already gives ε = %v ≤ 2", s-CalibrationTolerance, e)
	}
	rdp, _ := CalibrateSigma(CalibrationRequest{TargetEpsilon: 2, Delta: 1e-5, Q: 0.01, Steps: 500, Accountant: KindRDP})
	if !(s < rdp) {
		t.Errorf("PLD σ %v not below RDP σ %v", s, rdp)
	}
	t.Logf("σ for ε=2, δ=1e-5, q=0.01, 500 steps: PLD %.5f, RDP %.5f", s, rdp)
}

// TestOptimisticOmitted: a PLD guarantee's optimistic estimate is flagged
// once steps × interval passes OptimisticBiasLimit; an RDP guarantee (no
// interval) never is.
func TestOptimisticOmitted(t *testing.T) {
	step := PoissonSubsampled{Base: Gaussian{Sigma: 1.1}, Q: 0.01}
	for _, tc := range []struct {
		kind  string
		steps int
		want  string
	}{
		{KindPLD, 1000, ""},
		{KindPLD, 1001, "1001 steps × interval 0.0001 can bias it low by 0.1"},
		{KindRDP, 100000, ""},
	} {
		cfg := AccountantConfig{}
		if tc.kind == KindPLD {
			cfg.Interval = 1e-4
		}
		a, err := NewAccountant(tc.kind, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Compose(step, tc.steps); err != nil {
			t.Fatal(err)
		}
		g, err := a.EpsilonFor(1e-5)
		if err != nil {
			t.Fatal(err)
		}
		if got := g.OptimisticOmitted(); got != tc.want {
			t.Errorf("%s, %d steps: %q, want %q", tc.kind, tc.steps, got, tc.want)
		}
		if tc.kind == KindPLD && !(g.Optimistic <= g.Epsilon) {
			t.Errorf("%d steps: optimistic %v above certified %v", tc.steps, g.Optimistic, g.Epsilon)
		}
	}
}
