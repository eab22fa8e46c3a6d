package privacy

import (
	"math"
	"testing"
)

func TestConversionHandComputed(t *testing.T) {
	orders, rdp := []float64{2, 4}, []float64{1, 1.5}
	delta := math.Exp(-3)
	// Hand-computed: Mironov ε(α) = r + 3/(α−1): 4 (α=2), 2.5 (α=4);
	// BBG ε(α) = r + log((α−1)/α) − (−3 + log α)/(α−1): 2.6137056388801 (α=2),
	// 1.7502198071749 (α=4).
	for _, c := range []struct {
		conv       Conversion
		eps, order float64
	}{
		{ConversionMironov, 2.5, 4}, {ConversionBBG, 1.7502198071749224, 4},
	} {
		eps, order, err := EpsilonFromRDP(orders, rdp, delta, c.conv)
		if err != nil || math.Abs(eps-c.eps) > 1e-13 || order != c.order {
			t.Errorf("%s: ε=%v at α=%v (%v), want %v at %v", c.conv, eps, order, err, c.eps, c.order)
		}
	}
	// Inverse at ε = 2.5: Mironov δ = e^{(α−1)(r−ε)} = 0.2231 (α=2),
	// 0.049787 (α=4); BBG δ = e^{(α−1)(r−ε+log(1−1/α)) − log α}: 0.05578,
	// 0.0052509798669.
	for _, c := range []struct {
		conv         Conversion
		delta, order float64
	}{
		{ConversionMironov, 0.049787068367863944, 4}, {ConversionBBG, 0.0052509798669231516, 4},
	} {
		d, order, err := DeltaFromRDP(orders, rdp, 2.5, c.conv)
		if err != nil || math.Abs(d-c.delta) > 1e-15 || order != c.order {
			t.Errorf("%s: δ=%v at α=%v (%v), want %v at %v", c.conv, d, order, err, c.delta, c.order)
		}
	}
}

// gaussianExactDelta is the exact privacy profile of the Gaussian mechanism
// with noise multiplier σ (Balle & Wang 2018, Theorem 8):
// δ(ε) = Φ(−εσ + 1/(2σ)) − e^ε Φ(−εσ − 1/(2σ)).
func gaussianExactDelta(sigma, eps float64) float64 {
	phi := func(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }
	return phi(-eps*sigma+1/(2*sigma)) - math.Exp(eps)*phi(-eps*sigma-1/(2*sigma))
}

// TestConversionVsExactGaussian: a conversion is an upper bound, so for
// the Gaussian mechanism (RDP α/(2σ²), here as T compositions of σ√T) its
// δ(ε) can never be below the exact profile, and BBG is never looser than
// Mironov.
func TestConversionVsExactGaussian(t *testing.T) {
	orders := append(DefaultOrders(), 80, 100, 128, 256, 512)
	for _, sigma := range []float64{0.5, 1, 2, 5, 20} {
		const T = 100
		s := sigma * math.Sqrt(T)
		rdp := make([]float64, len(orders))
		for i, a := range orders {
			v, _ := Gaussian{Sigma: s}.RDP(a)
			rdp[i] = T * v.Epsilon
		}
		for _, eps := range []float64{0.1, 0.5, 1, 2, 4, 8} {
			exact := gaussianExactDelta(sigma, eps)
			dm, _, err := DeltaFromRDP(orders, rdp, eps, ConversionMironov)
			if err != nil {
				t.Fatal(err)
			}
			db, _, err := DeltaFromRDP(orders, rdp, eps, ConversionBBG)
			if err != nil {
				t.Fatal(err)
			}
			if db < exact*(1-1e-9) || dm < db*(1-1e-12) {
				t.Errorf("σ=%v ε=%v: exact δ %v, BBG %v, Mironov %v", sigma, eps, exact, db, dm)
			}
			// And the RDP route is not absurdly loose for the Gaussian.
			if exact > 1e-12 && db > 20*exact {
				t.Errorf("σ=%v ε=%v: BBG δ %v vs exact %v: too loose", sigma, eps, db, exact)
			}
		}
		for _, delta := range []float64{1e-3, 1e-5, 1e-8} {
			em, _, _ := EpsilonFromRDP(orders, rdp, delta, ConversionMironov)
			eb, ob, _ := EpsilonFromRDP(orders, rdp, delta, ConversionBBG)
			if eb > em {
				t.Errorf("σ=%v δ=%v: BBG ε %v > Mironov %v", sigma, delta, eb, em)
			}
			// Exact δ at the converted ε must be ≤ δ (the guarantee holds).
			if d := gaussianExactDelta(sigma, eb); d > delta*(1+1e-9) {
				t.Errorf("σ=%v δ=%v: BBG ε=%v (α=%v) but exact δ(ε) = %v", sigma, delta, eb, ob, d)
			}
			// Round trip: δ(ε(δ)) ≤ δ, with equality at the optimal order.
			for _, c := range []Conversion{ConversionMironov, ConversionBBG} {
				e, _, _ := EpsilonFromRDP(orders, rdp, delta, c)
				if e == 0 {
					continue
				}
				d, _, err := DeltaFromRDP(orders, rdp, e, c)
				if err != nil || math.Abs(d-delta) > 1e-9*delta {
					t.Errorf("%s σ=%v: δ(ε(%v)) = %v (%v)", c, sigma, delta, d, err)
				}
			}
		}
	}
}

func TestConversionErrors(t *testing.T) {
	good := []float64{2, 3}
	r := []float64{0.1, 0.2}
	for _, c := range []struct {
		name        string
		orders, rdp []float64
		delta, eps  float64
		conv        Conversion
	}{
		{"delta 0", good, r, 0, 1, ConversionBBG},
		{"delta 1", good, r, 1, 1, ConversionBBG},
		{"delta NaN", good, r, math.NaN(), 1, ConversionBBG},
		{"eps 0", good, r, 0.1, 0, ConversionBBG},
		{"eps Inf", good, r, 0.1, math.Inf(1), ConversionBBG},
		{"order 1", []float64{1, 3}, r, 0.1, 1, ConversionBBG},
		{"order NaN", []float64{math.NaN(), 3}, r, 0.1, 1, ConversionBBG},
		{"empty", nil, nil, 0.1, 1, ConversionBBG},
		{"lengths", good, []float64{0.1}, 0.1, 1, ConversionBBG},
		{"negative rdp", good, []float64{-0.1, 0.2}, 0.1, 1, ConversionBBG},
		{"NaN rdp", good, []float64{math.NaN(), 0.2}, 0.1, 1, ConversionBBG},
		{"conversion", good, r, 0.1, 1, Conversion("renyi")},
		{"empty conversion", good, r, 0.1, 1, Conversion("")},
	} {
		_, _, err1 := EpsilonFromRDP(c.orders, c.rdp, c.delta, c.conv)
		_, _, err2 := DeltaFromRDP(c.orders, c.rdp, c.eps, c.conv)
		if err1 == nil && err2 == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
	// +Inf RDP at some orders is allowed and never chosen.
	eps, order, err := EpsilonFromRDP([]float64{2, 3}, []float64{math.Inf(1), 0.5}, 1e-5, ConversionMironov)
	if err != nil || order != 3 || math.Abs(eps-(0.5+math.Log(1e5)/2)) > 1e-12 {
		t.Errorf("ε=%v α=%v err=%v", eps, order, err)
	}
	eps, _, err = EpsilonFromRDP([]float64{2}, []float64{math.Inf(1)}, 1e-5, ConversionBBG)
	if err != nil || !math.IsInf(eps, 1) {
		t.Errorf("all-Inf curve: ε=%v err=%v", eps, err)
	}
}

func TestDefaultOrders(t *testing.T) {
	o := DefaultOrders()
	if len(o) != 151 || o[0] != 1.1 || o[98] != 10.9 || o[99] != 12 || o[150] != 63 {
		t.Fatalf("DefaultOrders: len %d, %v…%v", len(o), o[:2], o[len(o)-2:])
	}
	for i := 1; i < len(o); i++ {
		if !(o[i] > o[i-1]) {
			t.Fatalf("not increasing at %d", i)
		}
	}
	o[0] = 99
	if DefaultOrders()[0] != 1.1 {
		t.Fatal("DefaultOrders shares its slice")
	}
}
