package privacy

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// countingMechanism wraps a mechanism and counts RDP evaluations.
type countingMechanism struct {
	Mechanism
	calls *int
}

func (c countingMechanism) RDP(a float64) (RDPValue, error) {
	*c.calls++
	return c.Mechanism.RDP(a)
}

// fakeBound is a test mechanism whose RDP is a fixed value from a named
// bound, proven or not.
type fakeBound struct {
	eps   float64
	valid bool
}

func (f fakeBound) Validate() error { return nil }
func (f fakeBound) RDP(a float64) (RDPValue, error) {
	return RDPValue{Epsilon: f.eps, Bound: "fake-bound", Valid: f.valid}, nil
}
func (f fakeBound) Spec() Spec {
	if math.IsInf(f.eps, 1) {
		return Spec{Kind: "fake", Options: map[string]string{"eps": "+Inf"}}
	}
	return Spec{Kind: "fake", Params: map[string]float64{"eps": f.eps}}
}

// TestAccountantOpacusReference composes Opacus' test setting step by step
// (opacus/tests/accountants_test.py, test_rdp_accountant: q = 0.04, σ = 1.5,
// 2250 steps, δ = 1e-5 → ε = 7.32911117143 with the default orders and the
// BBG conversion).
func TestAccountantOpacusReference(t *testing.T) {
	acc, err := NewRDPAccountant(nil)
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	m := countingMechanism{SubsampledGaussian{Q: 0.04, Sigma: 1.5}, &calls}
	for range 2250 {
		if err := acc.Compose(m, 1); err != nil {
			t.Fatal(err)
		}
	}
	if calls != len(DefaultOrders()) {
		t.Errorf("RDP evaluated %d times for %d orders: cache not used", calls, len(DefaultOrders()))
	}
	if acc.Steps() != 2250 || len(acc.History()) != 1 || acc.History()[0].Count != 2250 {
		t.Errorf("steps %d, history %+v", acc.Steps(), acc.History())
	}
	r, err := acc.Epsilon(1e-5, ConversionBBG)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(r.Epsilon-7.32911117143) > 1e-9 || !r.Proven || r.Steps != 2250 {
		t.Errorf("ε = %.12f (α=%v, proven %v), Opacus 7.32911117143", r.Epsilon, r.Order, r.Proven)
	}
	d, err := acc.Delta(r.Epsilon, ConversionBBG)
	if err != nil || math.Abs(d.Delta-1e-5) > 1e-13 || d.Order != r.Order {
		t.Errorf("δ(ε) = %v at α=%v (%v), want 1e-5 at %v", d.Delta, d.Order, err, r.Order)
	}
}

func TestAccountantHeterogeneous(t *testing.T) {
	orders := []float64{1.5, 2, 3.5, 8, 16, 32}
	acc, err := NewRDPAccountant(orders)
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		m Mechanism
		n int
	}{
		{SubsampledGaussian{Q: 0.01, Sigma: 1.1}, 100},
		{Gaussian{Sigma: 5}, 3},
		{SubsampledGaussian{Q: 0.01, Sigma: 1.1}, 50},
		{Laplace{B: 10}, 2},
		{PTR{Sigma1: 4, Tau: 0.5, B: 1, Delta0: 1e-8}, 7},
	}
	want := make([]float64, len(orders))
	for _, s := range steps {
		if err := acc.Compose(s.m, s.n); err != nil {
			t.Fatal(err)
		}
		for i, a := range orders {
			v, _ := s.m.RDP(a)
			want[i] += float64(s.n) * v.Epsilon
		}
	}
	got := acc.RDP()
	for i := range orders {
		if math.Abs(got[i]-want[i]) > 1e-12*want[i] {
			t.Errorf("α=%v: composed %v, direct sum %v", orders[i], got[i], want[i])
		}
	}
	if acc.Steps() != 162 || len(acc.History()) != 5 || len(acc.Mechanisms()) != 4 {
		t.Errorf("steps %d, %d history entries, %d mechanisms", acc.Steps(), len(acc.History()), len(acc.Mechanisms()))
	}
	e, _, _ := EpsilonFromRDP(orders, want, 1e-6, ConversionMironov)
	r, err := acc.Epsilon(1e-6, ConversionMironov)
	if err != nil || math.Abs(r.Epsilon-e) > 1e-12*e {
		t.Errorf("accountant ε %v, direct %v (%v)", r.Epsilon, e, err)
	}
	// Composition is monotone: one more step never lowers ε.
	b := acc.Clone()
	if err := b.Compose(Gaussian{Sigma: 100}, 1); err != nil {
		t.Fatal(err)
	}
	r2, _ := b.Epsilon(1e-6, ConversionMironov)
	if r2.Epsilon <= r.Epsilon || acc.Steps() != 162 || b.Steps() != 163 {
		t.Errorf("clone: ε %v → %v, steps %d/%d", r.Epsilon, r2.Epsilon, acc.Steps(), b.Steps())
	}
}

func TestAccountantRefusesUnproven(t *testing.T) {
	acc, _ := NewRDPAccountant([]float64{2, 4})
	err := acc.Compose(fakeBound{eps: 0.1, valid: false}, 1)
	if err == nil || !strings.Contains(err.Error(), "fake-bound") {
		t.Fatalf("unproven bound accepted or unnamed: %v", err)
	}
	if acc.Steps() != 0 || len(acc.Mechanisms()) != 0 {
		t.Fatal("refused mechanism left a trace")
	}
	// +Inf from a bound outside its range is trivially true: accepted.
	if err := acc.Compose(fakeBound{eps: math.Inf(1), valid: false}, 1); err != nil {
		t.Fatalf("+Inf refused: %v", err)
	}
	r, err := acc.Epsilon(1e-5, ConversionBBG)
	if err != nil || !math.IsInf(r.Epsilon, 1) || !r.Proven {
		t.Errorf("all-Inf: %+v %v", r, err)
	}
	b, _ := NewRDPAccountantWithOptions([]float64{2, 4}, AccountantOptions{AllowUnproven: true})
	if err := b.Compose(fakeBound{eps: 0.1, valid: false}, 3); err != nil {
		t.Fatal(err)
	}
	r, err = b.Epsilon(1e-5, ConversionMironov)
	if err != nil || r.Proven || len(r.Unproven) != 1 || r.Unproven[0] != "fake-bound" {
		t.Errorf("allow-unproven result %+v %v", r, err)
	}
	if want := 0.3 + math.Log(1e5)/3; math.Abs(r.Epsilon-want) > 1e-12 {
		t.Errorf("ε %v, want %v", r.Epsilon, want)
	}
}

func TestAccountantErrors(t *testing.T) {
	if _, err := NewRDPAccountant([]float64{1, 2}); err == nil {
		t.Error("order 1 accepted")
	}
	acc, _ := NewRDPAccountant(nil)
	for _, c := range []struct {
		m Mechanism
		n int
	}{
		{nil, 1}, {Gaussian{Sigma: 1}, 0}, {Gaussian{Sigma: -1}, 1}, {SubsampledGaussian{Q: 2, Sigma: 1}, 1},
	} {
		if err := acc.Compose(c.m, c.n); err == nil {
			t.Errorf("Compose(%v, %d) accepted", c.m, c.n)
		}
	}
	if _, err := acc.Epsilon(0, ConversionBBG); err == nil {
		t.Error("δ=0 accepted")
	}
	if _, err := acc.Epsilon(1e-5, "x"); err == nil {
		t.Error("bad conversion accepted")
	}
	if _, err := acc.Delta(-1, ConversionBBG); err == nil {
		t.Error("ε<0 accepted")
	}
	if r, err := acc.Epsilon(1e-5, ConversionBBG); err != nil || r.Epsilon != 0 || r.Steps != 0 {
		t.Errorf("empty accountant: %+v %v", r, err)
	}
}

func TestAccountantJSONResume(t *testing.T) {
	orders := append(DefaultOrders(), 128, 256)
	acc, _ := NewRDPAccountant(orders)
	for i := range 30 {
		var m Mechanism = SubsampledGaussian{Q: 256.0 / 60000, Sigma: 1.1}
		if i%10 == 9 {
			m = PTR{Sigma1: 1.1, Tau: 0.5, B: 1, Delta0: 1e-8}
		}
		if err := acc.Compose(m, 1+i%3); err != nil {
			t.Fatal(err)
		}
	}
	data, err := json.Marshal(acc)
	if err != nil {
		t.Fatal(err)
	}
	var back RDPAccountant
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	// Continue both runs identically: results must agree bit for bit.
	for _, a := range []*RDPAccountant{acc, &back} {
		if err := a.Compose(SubsampledGaussian{Q: 256.0 / 60000, Sigma: 1.1}, 1000); err != nil {
			t.Fatal(err)
		}
		if err := a.Compose(Gaussian{Sigma: 7}, 2); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []Conversion{ConversionMironov, ConversionBBG} {
		r1, _ := acc.Epsilon(1e-5, c)
		r2, _ := back.Epsilon(1e-5, c)
		if r1.Epsilon != r2.Epsilon || r1.Order != r2.Order || r1.Steps != r2.Steps {
			t.Errorf("%s: original %+v, resumed %+v", c, r1, r2)
		}
	}
	again, _ := json.Marshal(&back)
	data2, _ := json.Marshal(acc)
	if string(again) != string(data2) {
		t.Error("re-serialized histories differ")
	}

	// Tampering is detected.
	var raw map[string]any
	_ = json.Unmarshal(data, &raw)
	mech := raw["mechanisms"].([]any)[0].(map[string]any)
	rdp := mech["rdp"].([]any)
	rdp[5] = rdp[5].(float64) * 0.9
	bad, _ := json.Marshal(raw)
	if err := json.Unmarshal(bad, new(RDPAccountant)); err == nil {
		t.Error("tampered RDP value accepted")
	}
	rdp[5] = rdp[5].(float64) / 0.9
	mech["count"] = mech["count"].(float64) + 1
	bad, _ = json.Marshal(raw)
	if err := json.Unmarshal(bad, new(RDPAccountant)); err == nil {
		t.Error("count inconsistent with history accepted")
	}
	mech["count"] = mech["count"].(float64) - 1
	mech["spec"].(map[string]any)["kind"] = "nonesuch"
	bad, _ = json.Marshal(raw)
	if err := json.Unmarshal(bad, new(RDPAccountant)); err == nil {
		t.Error("unknown kind accepted")
	}
}

func TestFromSpecRoundTrip(t *testing.T) {
	for _, m := range []Mechanism{
		Gaussian{Sigma: 1.3}, Laplace{B: 2}, PTR{Sigma1: 4, Tau: 0.5, B: 1, Delta0: 1e-8},
		SubsampledGaussian{Q: 0.01, Sigma: 1.1},
	} {
		back, err := FromSpec(m.Spec())
		if err != nil || back != m {
			t.Errorf("%+v → %+v (%v)", m, back, err)
		}
	}
	for _, s := range []Spec{
		{Kind: "gaussian"},
		{Kind: "gaussian", Params: map[string]float64{"sigma": -1}},
		{Kind: "gaussian", Params: map[string]float64{"sigma": 1, "sgma": 2}},
		{Kind: "laplace", Params: map[string]float64{"b": 1}, Options: map[string]string{"x": "y"}},
		{Kind: "subsampled-gaussian", Params: map[string]float64{"q": 0.1}},
		{Kind: "nonesuch"},
	} {
		if _, err := FromSpec(s); err == nil {
			t.Errorf("%+v accepted", s)
		}
	}
}

func BenchmarkAccountantComposeCached(b *testing.B) {
	acc, _ := NewRDPAccountant(nil)
	m := SubsampledGaussian{Q: 256.0 / 60000, Sigma: 1.1}
	_ = acc.Compose(m, 1)
	b.ResetTimer()
	for range b.N {
		if err := acc.Compose(m, 1); err != nil {
			b.Fatal(err)
		}
	}
}

// TestAccountantJSONAllKinds: every registered kind survives the JSON
// history (FromSpec rebuilds it and the recomputed curve matches).
func TestAccountantJSONAllKinds(t *testing.T) {
	acc, _ := NewRDPAccountantWithOptions([]float64{1.5, 2, 4, 8, 16}, AccountantOptions{AllowUnproven: true})
	for _, m := range []Mechanism{
		Gaussian{Sigma: 2}, Laplace{B: 3}, PTR{Sigma1: 4, Tau: 0.5, B: 1, Delta0: 1e-8},
		SubsampledGaussian{Q: 0.01, Sigma: 1.1},
		PoissonSubsampled{Base: Gaussian{Sigma: 1.1}, Q: 0.01},
		PoissonSubsampled{Base: PTR{Sigma1: 4, Tau: 0.5, B: 1, Delta0: 1e-8}, Q: 0.01, Bound: SubsampleBlackBox},
		PoissonSubsampled{Base: PTR{Sigma1: 1.1, Tau: 0.5, B: 1, Delta0: 1e-8}, Q: 0.01, Bound: SubsampleWhiteBox, AllowUnproven: true},
		RGM{Eta: 0.1, Gamma: 0.01, Dim: 5},
	} {
		if err := acc.Compose(m, 2); err != nil {
			t.Fatalf("%s: %v", m.Spec().Kind, err)
		}
	}
	data, err := json.Marshal(acc)
	if err != nil {
		t.Fatal(err)
	}
	var back RDPAccountant
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	r1, _ := acc.Epsilon(1e-5, ConversionBBG)
	r2, _ := back.Epsilon(1e-5, ConversionBBG)
	if r1.Epsilon != r2.Epsilon || r1.Proven || r2.Proven || len(back.Mechanisms()) != 8 {
		t.Errorf("original %+v, restored %+v", r1, r2)
	}
}
