package privacy

import (
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/integrate/quad"
)

// TestRGMTheorem1Values compares eq. (5) with exact rational evaluations
// (Python fractions.Fraction of the same expression).
func TestRGMTheorem1Values(t *testing.T) {
	for _, tc := range []struct {
		alpha, eta, gamma float64
		dim               int
		want              float64
	}{
		{2, 1e-3, 1e-4, 22, 0.010108491377378155},
		{1.5, 0.1, 0.01, 1, 0.8827047486033519},
		{10, 0.01, 1e-3, 5, 0.623004840709315},
		{2, 1.5e-3, 37e-6, 22, 0.06119342120851169},
	} {
		m := RGM{Eta: tc.eta, Gamma: tc.gamma, Dim: tc.dim}
		v, err := m.RDP(tc.alpha)
		if err != nil {
			t.Fatalf("%+v: %v", tc, err)
		}
		if !v.Valid || v.Bound != "rgm-thm1" {
			t.Errorf("%+v: got bound %q valid %v, want rgm-thm1 valid", tc, v.Bound, v.Valid)
		}
		if math.Abs(v.Epsilon-tc.want) > 1e-14*tc.want {
			t.Errorf("%+v: ε = %.17g, want %.17g", tc, v.Epsilon, tc.want)
		}
	}
}

// TestRGMMonotone checks that ε grows with α, η and d and falls with γ.
func TestRGMMonotone(t *testing.T) {
	base := RGM{Eta: 0.01, Gamma: 1e-3, Dim: 5}
	eps := func(m RGM, a float64) float64 {
		v, err := m.RDP(a)
		if err != nil || !v.Valid {
			t.Fatalf("%+v at α=%v: %v %+v", m, a, err, v)
		}
		return v.Epsilon
	}
	prev := 0.0
	for a := 1.01; a < base.MaxOrder(); a *= 1.1 {
		e := eps(base, a)
		if !(e > prev) {
			t.Fatalf("ε not increasing in α at α=%v: %v ≤ %v", a, e, prev)
		}
		prev = e
	}
	for _, step := range []struct {
		name     string
		mod      func(RGM) RGM
		increase bool
	}{
		{"eta", func(m RGM) RGM { m.Eta *= 1.3; return m }, true},
		{"dim", func(m RGM) RGM { m.Dim++; return m }, true},
		{"gamma", func(m RGM) RGM { m.Gamma *= 1.3; return m }, false},
	} {
		m := base
		prev := eps(m, 2)
		for i := 0; i < 8; i++ {
			m = step.mod(m)
			e := eps(m, 2)
			if (e > prev) != step.increase {
				t.Fatalf("%s: ε went from %v to %v, want increase=%v", step.name, prev, e, step.increase)
			}
			prev = e
		}
	}
}

// TestRGMValidityEdges checks the α range and the σ² lower bound of Theorem 1.
func TestRGMValidityEdges(t *testing.T) {
	m := RGM{Eta: 0.1, RRel: 0.5, Gamma: 0.01, Dim: 3}
	amax := m.MaxOrder()
	if want := 1.21 / 0.21; math.Abs(amax-want) > 1e-14 {
		t.Fatalf("MaxOrder = %v, want %v", amax, want)
	}
	// σ² ≥ γη⁻²[1−η(α−1)]R_rel² at α = 2: 0.01·100·0.9·0.25 = 0.225.
	if got, want := m.MinSigma(2), math.Sqrt(0.225); math.Abs(got-want) > 1e-15 {
		t.Fatalf("MinSigma(2) = %v, want %v", got, want)
	}
	for _, tc := range []struct {
		name      string
		sigma     float64
		alpha     float64
		valid     bool
		bound     string
		finiteEps bool
	}{
		{"at min sigma", math.Sqrt(0.225), 2, true, "rgm-thm1", true},
		{"above min sigma", 1, 2, true, "rgm-thm1", true},
		{"just below min sigma", math.Sqrt(0.225) * (1 - 1e-9), 2, false, "rgm-thm1-sigma-too-small", false},
		{"sigma zero", 0, 2, false, "rgm-thm1-sigma-too-small", false},
		{"just below max order", 1, amax * (1 - 1e-12), true, "rgm-thm1", true},
		{"at max order", 1, amax, false, "rgm-thm1-alpha-out-of-range", false},
		{"above max order", 1, 64, false, "rgm-thm1-alpha-out-of-range", false},
		// For α ≥ 1 + 1/η the bracket 1−η(α−1) vanishes: no σ needed.
		// (Here 1+1/η = 11 > MaxOrder, so such orders are out of range.)
	} {
		mm := m
		mm.Sigma = tc.sigma
		v, err := mm.RDP(tc.alpha)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if v.Valid != tc.valid || v.Bound != tc.bound || math.IsInf(v.Epsilon, 1) == tc.finiteEps {
			t.Errorf("%s: got %+v, want valid=%v bound=%s finite=%v", tc.name, v, tc.valid, tc.bound, tc.finiteEps)
		}
	}
	// Near the top of the range the denominator 1 − η(α−1)(2+η) → 0 and ε → ∞.
	m.Sigma = 1
	v, _ := m.RDP(amax * (1 - 1e-12))
	if !(v.Epsilon > 1e9) {
		t.Errorf("ε just below MaxOrder = %v, want huge", v.Epsilon)
	}

	for _, bad := range []RGM{
		{Eta: 0, Gamma: 1, Dim: 1},
		{Eta: -1, Gamma: 1, Dim: 1},
		{Eta: math.NaN(), Gamma: 1, Dim: 1},
		{Eta: 0.1, Gamma: 0, Dim: 1},
		{Eta: 0.1, Gamma: math.Inf(1), Dim: 1},
		{Eta: 0.1, Gamma: 1, Dim: 0},
		{Eta: 0.1, Gamma: 1, Dim: 1, RRel: -1},
		{Eta: 0.1, Gamma: 1, Dim: 1, Sigma: -1},
	} {
		if err := bad.Validate(); err == nil {
			t.Errorf("Validate(%+v) = nil, want error", bad)
		}
		if _, err := bad.RDP(2); err == nil {
			t.Errorf("RDP on invalid %+v: nil error", bad)
		}
	}
	if _, err := m.RDP(1); err == nil {
		t.Errorf("RDP(1) should reject the order")
	}
}

// gaussRenyi1D is the closed-form Rényi divergence D_α(N(m1,v1) ‖ N(m2,v2))
// (Gil, Alajaji & Linder 2013, Table 2), +Inf when v_α = αv2+(1−α)v1 ≤ 0.
func gaussRenyi1D(alpha, m1, v1, m2, v2 float64) float64 {
	va := alpha*v2 + (1-alpha)*v1
	if va <= 0 {
		return math.Inf(1)
	}
	return 0.5*math.Log(v2/v1) + math.Log(v2/va)/(2*(alpha-1)) + alpha*(m1-m2)*(m1-m2)/(2*va)
}

// gaussRenyiQuad evaluates the same divergence by Gauss–Legendre quadrature of
// log ∫ p^α q^{1−α} / (α−1).
func gaussRenyiQuad(alpha, m1, v1, m2, v2 float64) float64 {
	logpdf := func(x, m, v float64) float64 {
		return -0.5*math.Log(2*math.Pi*v) - (x-m)*(x-m)/(2*v)
	}
	s := math.Sqrt(math.Max(v1, v2))
	lo := math.Min(m1, m2) - 40*s
	hi := math.Max(m1, m2) + 40*s
	f := func(x float64) float64 {
		return math.Exp(alpha*logpdf(x, m1, v1) + (1-alpha)*logpdf(x, m2, v2))
	}
	return math.Log(quad.Fixed(f, lo, hi, 4000, nil, 0)) / (alpha - 1)
}

// TestRGMRenyiDivergence1D computes the exact Rényi divergence between the
// outputs of the RGM on neighbouring 1-D queries that saturate Definition 2,
// over a grid of query values, and checks that Theorem 1's bound is never
// below it. The closed form is cross-checked by quadrature.
func TestRGMRenyiDivergence1D(t *testing.T) {
	for _, tc := range []struct {
		eta, rrel, gamma, alpha float64
	}{
		{0.05, 0.3, 0.02, 2},
		{0.05, 0.3, 0.02, 4},
		{0.2, 0, 0.05, 1.5},
		{0.01, 1, 1e-3, 8},
		{0.1, 2, 0.5, 2},
	} {
		m := RGM{Eta: tc.eta, RRel: tc.rrel, Gamma: tc.gamma, Dim: 1}
		m.Sigma = m.MinSigma(tc.alpha)
		bound, err := m.RDP(tc.alpha)
		if err != nil || !bound.Valid {
			t.Fatalf("%+v: bound %+v err %v", tc, bound, err)
		}
		variance := func(r float64) float64 { return m.Gamma*r*r + m.Sigma*m.Sigma }
		worst := 0.0
		checked := 0
		for i := -200; i <= 200; i++ {
			rx := float64(i) * 0.05 * math.Max(1, m.RRel/m.Eta) // spans |r| up to 10·max(1, R_rel/η)
			// Neighbours r_y = r_x + t on the boundary of Definition 2 in
			// both directions, and a few interior points.
			for _, sgn := range []float64{-1, 1} {
				for _, frac := range []float64{0.5, 0.9, 1} {
					ry, ok := boundaryNeighbour(rx, sgn, m.Eta, m.RRel)
					if !ok {
						continue
					}
					ry = rx + frac*(ry-rx)
					for _, pair := range [][2]float64{{rx, ry}, {ry, rx}} {
						d := gaussRenyi1D(tc.alpha, pair[0], variance(pair[0]), pair[1], variance(pair[1]))
						checked++
						if d > worst {
							worst = d
						}
					}
				}
			}
		}
		if checked == 0 || worst == 0 {
			t.Fatalf("%+v: no neighbouring pairs checked", tc)
		}
		if worst > bound.Epsilon {
			t.Errorf("%+v: exact divergence %v exceeds Theorem 1 bound %v", tc, worst, bound.Epsilon)
		}
		t.Logf("η=%v R_rel=%v γ=%v α=%v: max exact D_α = %.6g ≤ Theorem 1 ε = %.6g (%d pairs)",
			tc.eta, tc.rrel, tc.gamma, tc.alpha, worst, bound.Epsilon, checked)
	}

	// Closed form vs quadrature.
	for _, c := range [][5]float64{
		{2, 0, 1, 0.3, 1.2},
		{4, 1, 0.5, 1.1, 0.52},
		{1.5, -2, 3, -1.7, 2.5},
		{8, 10, 2.0, 10.2, 2.1},
	} {
		cf := gaussRenyi1D(c[0], c[1], c[2], c[3], c[4])
		q := gaussRenyiQuad(c[0], c[1], c[2], c[3], c[4])
		if math.Abs(cf-q) > 1e-9*math.Max(1, cf) {
			t.Errorf("Rényi closed form %v vs quadrature %v for %v", cf, q, c)
		}
	}
}

// boundaryNeighbour returns r_y = r_x + s·t with the largest t > 0 such that
// t² ≤ η² min(r_x², r_y²) + R_rel² (Definition 2 in both directions).
func boundaryNeighbour(rx, s, eta, rrel float64) (float64, bool) {
	ok := func(t float64) bool {
		ry := rx + s*t
		return t*t <= eta*eta*math.Min(rx*rx, ry*ry)+rrel*rrel
	}
	hi := math.Sqrt(eta*eta*rx*rx + rrel*rrel)
	if hi == 0 {
		return rx, false
	}
	if ok(hi) {
		return rx + s*hi, true
	}
	lo := 0.0
	for i := 0; i < 200; i++ {
		mid := (lo + hi) / 2
		if ok(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	if lo == 0 {
		return rx, false
	}
	return rx + s*lo, true
}

func TestCalibrateRGM(t *testing.T) {
	for _, tc := range []struct {
		eps, alpha, eta, rrel float64
		dim                   int
	}{
		{0.1, 2, 1.5e-3, 0.05, 22},
		{1e-3, 2, 1.5e-3, 0.05, 22},
		{1, 4, 0.02, 1, 3},
	} {
		m, err := CalibrateRGM(tc.eps, tc.alpha, tc.eta, tc.rrel, tc.dim)
		if err != nil {
			t.Fatalf("%+v: %v", tc, err)
		}
		v, err := m.RDP(tc.alpha)
		if err != nil || !v.Valid {
			t.Fatalf("%+v: %+v %v", tc, v, err)
		}
		if math.Abs(v.Epsilon-tc.eps) > 1e-12*tc.eps {
			t.Errorf("%+v: calibrated ε = %v", tc, v.Epsilon)
		}
		want := math.Sqrt(m.Gamma*(1-tc.eta*(tc.alpha-1))) * tc.rrel / tc.eta
		if math.Abs(m.Sigma-want) > 1e-14*want {
			t.Errorf("%+v: σ = %v, want %v", tc, m.Sigma, want)
		}
	}
	// Floor: ε ≤ αη²d(2+η)²(1+η)²/(2(1−η(α−1)(2+η))) is unreachable.
	eta, alpha, d := 0.01, 2.0, 10
	floor := alpha * eta * eta * float64(d) * math.Pow((2+eta)*(1+eta), 2) / (2 * (1 - eta*(alpha-1)*(2+eta)))
	if _, err := CalibrateRGM(floor*0.999, alpha, eta, 0, d); err == nil {
		t.Errorf("ε below the floor %v accepted", floor)
	}
	if _, err := CalibrateRGM(floor*1.01, alpha, eta, 0, d); err != nil {
		t.Errorf("ε above the floor rejected: %v", err)
	}
	if _, err := CalibrateRGM(1, 60, eta, 0, d); err == nil {
		t.Errorf("order outside range accepted")
	}
}

func TestRGMEpsilonDelta(t *testing.T) {
	// The paper's example after Corollary 1: η = 1e-3, d = 10, δ = 1e-8,
	// γ = 100η² gives ε ≈ 0.86 (0.8701 to four digits).
	m := RGM{Eta: 1e-3, Gamma: 100 * 1e-6, Dim: 10}
	eps, order, err := RGMEpsilonDelta(m, 1e-8)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(eps-0.8701467357231851) > 1e-12 || math.Abs(order-43.833482291610004) > 1e-9 {
		t.Errorf("Corollary 1: ε = %.16g at α* = %.16g", eps, order)
	}
	// Corollary 1 upper-bounds Mironov's conversion of Theorem 1 at α*.
	v, _ := m.RDP(order)
	if direct := v.Epsilon + math.Log(1e8)/(order-1); direct > eps {
		t.Errorf("Theorem 1 + conversion at α* = %v exceeds Corollary 1's %v", direct, eps)
	}
	// Neither condition holds: γ large and d small.
	if _, _, err := RGMEpsilonDelta(RGM{Eta: 1e-3, Gamma: 0.1, Dim: 2}, 1e-8); err == nil {
		t.Error("Corollary 1 conditions not checked")
	}
	// σ too small at α*.
	if _, _, err := RGMEpsilonDelta(RGM{Eta: 1e-3, Gamma: 1e-4, Dim: 10, RRel: 1}, 1e-8); err == nil {
		t.Error("σ condition not checked")
	}
	if _, _, err := RGMEpsilonDelta(m, 0); err == nil {
		t.Error("δ = 0 accepted")
	}
}

func TestRGMSpecRoundTrip(t *testing.T) {
	m := RGM{Eta: 0.01, RRel: 0.2, Gamma: 3e-3, Sigma: 0.5, Dim: 22}
	got, err := RGMFromSpec(m.Spec())
	if err != nil || got != m {
		t.Fatalf("round trip: %+v %v", got, err)
	}
	for _, s := range []Spec{
		{Kind: "gaussian"},
		{Kind: "rgm", Params: map[string]float64{"eta": 0.1, "gamma": 1}},
		{Kind: "rgm", Params: map[string]float64{"eta": 0.1, "gamma": 1, "dim": 2.5}},
		{Kind: "rgm", Params: map[string]float64{"eta": -1, "gamma": 1, "dim": 2}},
	} {
		if _, err := RGMFromSpec(s); err == nil {
			t.Errorf("RGMFromSpec(%+v) accepted", s)
		}
	}
}

func ExampleCalibrateRGM() {
	// Noise for a 22-dimensional gradient with relative sensitivity
	// η = 1.5e-3, R_rel = 0.05, at RDP order 2 and ε = 0.1.
	m, err := CalibrateRGM(0.1, 2, 1.5e-3, 0.05, 22)
	if err != nil {
		fmt.Println(err)
		return
	}
	v, _ := m.RDP(2)
	fmt.Printf("γ = %.4g, σ = %.4g, ε(2) = %.3g (%s)\n", m.Gamma, m.Sigma, v.Epsilon, v.Bound)
	// Output:
	// γ = 2.261e-05, σ = 0.1584, ε(2) = 0.1 (rgm-thm1)
}
