package privacy

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/integrate/quad"
)

// laplaceMixIntClosedForm is R_q^(n) for integer n ≥ 0 by the binomial
// expansion of ((1−q) + q e^{(2s−1)/b})^n on [0,1] (each term integrates in
// closed form), independent of the quadrature under test.
func laplaceMixIntClosedForm(q, b float64, n int) float64 {
	lo := 1 - q + q*math.Exp(-1/b)
	hi := 1 - q + q*math.Exp(1/b)
	sum := 0.5*math.Pow(lo, float64(n)) + 0.5*math.Exp(-1/b)*math.Pow(hi, float64(n))
	for j := 0; j <= n; j++ {
		lc, _ := math.Lgamma(float64(n + 1))
		l1, _ := math.Lgamma(float64(j + 1))
		l2, _ := math.Lgamma(float64(n - j + 1))
		c := math.Exp(lc - l1 - l2)
		x := float64(2*j-1) / b
		sum += c * math.Pow(1-q, float64(n-j)) * math.Pow(q, float64(j)) * math.Exp(-float64(j)/b) * math.Expm1(x) / (2 * float64(2*j-1))
	}
	return sum
}

func TestLaplaceMixMomentClosedForm(t *testing.T) {
	for _, b := range []float64{0.5, 1, 3} {
		for _, q := range []float64{1e-3, 0.01, 0.1, 0.5, 1} {
			for _, n := range []int{0, 1, 2, 3, 5, 10, 33, 64, 66} {
				want := math.Log(laplaceMixIntClosedForm(q, b, n))
				got, err := LaplaceMixLogMoment(q, b, float64(n), 0)
				if err != nil {
					t.Fatal(err)
				}
				if d := math.Abs(got - want); d > 1e-11*math.Max(1, math.Abs(want)) {
					t.Errorf("b=%v q=%v n=%d: log R = %.15g, closed form %.15g (diff %.2g)", b, q, n, got, want, d)
				}
			}
		}
	}
}

// laplaceMixDirect integrates μ₀ r^λ A^k over the real line from the Laplace
// densities themselves, split at the kinks 0 and 1, with plain Gauss–Legendre.
func laplaceMixDirect(q, b, lambda float64, k int) float64 {
	lap := func(s, m float64) float64 { return math.Exp(-math.Abs(s-m)/b) / (2 * b) }
	f := func(s float64) float64 {
		m0, m1 := lap(s, 0), lap(s, 1)
		mu := (1-q)*m0 + q*m1
		return m0 * math.Pow(mu/m0, lambda) * math.Pow(q*m1/mu, float64(k))
	}
	w := 60 * b
	return quad.Fixed(f, -w, 0, 3000, quad.Legendre{}, 0) + quad.Fixed(f, 0, 1, 200, quad.Legendre{}, 0) + quad.Fixed(f, 1, 1+w, 3000, quad.Legendre{}, 0)
}

func TestLaplaceMixMomentRealOrders(t *testing.T) {
	for _, tc := range []struct {
		q, b, lambda float64
		k            int
	}{
		{0.01, 1, -0.5, 0}, {0.01, 1, -1, 0}, {0.01, 1, -2.5, 2}, {0.3, 1, -20, 0}, {0.3, 1, -64, 2},
		{0.01, 1, 0.3, 0}, {0.05, 2, 1.7, 2}, {0.5, 0.7, 63.5, 0}, {0.01, 1, 10, 2}, {0.2, 1, 2, 1},
	} {
		want := math.Log(laplaceMixDirect(tc.q, tc.b, tc.lambda, tc.k))
		got, err := LaplaceMixLogMoment(tc.q, tc.b, tc.lambda, tc.k)
		if err != nil {
			t.Fatal(err)
		}
		if d := math.Abs(got - want); d > 1e-10*math.Max(1, math.Abs(want)) {
			t.Errorf("%+v: got %.15g, direct quadrature %.15g (diff %.2g)", tc, got, want, d)
		}
	}
}

// The bracket of eq. (43) evaluated as E[r^α A²] equals its expanded form
// R^(α) − 2(1−q)R^(α−1) + (1−q)²R^(α−2) (eq. (80)).
func TestLaplaceMixBracketIdentity(t *testing.T) {
	for _, q := range []float64{0.3, 0.8} {
		for _, a := range []float64{1.5, 2, 7.3, 30} {
			for _, lam := range []float64{a, 1 - a} {
				r := func(x float64) float64 { v, _ := LaplaceMixLogMoment(q, 1, x, 0); return math.Exp(v) }
				var want float64
				if lam == a {
					want = r(a) - 2*(1-q)*r(a-1) + (1-q)*(1-q)*r(a-2)
				} else { // R̃ at α, α+1, α+2 is R at 1−α, −α, −α−1
					want = r(1-a) - 2*(1-q)*r(-a) + (1-q)*(1-q)*r(-a-1)
				}
				lg, _ := LaplaceMixLogMoment(q, 1, lam, 2)
				if got := math.Exp(lg); math.Abs(got-want) > 1e-9*want {
					t.Errorf("q=%v λ=%v: E[r^λ A²] = %.12g, expanded %.12g", q, lam, got, want)
				}
			}
		}
	}
}

func TestLaplaceMixMomentMonteCarlo(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 200000
	q, b := 0.2, 1.0
	for _, lam := range []float64{2, -1, 5.5} {
		var sum, sum2 float64
		for i := 0; i < n; i++ {
			s := rng.ExpFloat64() * b
			if rng.IntN(2) == 0 {
				s = -s
			}
			r := 1 - q + q*math.Exp((math.Abs(s)-math.Abs(s-1))/b)
			v := math.Pow(r, lam)
			sum += v
			sum2 += v * v
		}
		mean := sum / n
		se := math.Sqrt((sum2/n - mean*mean) / n)
		lg, _ := LaplaceMixLogMoment(q, b, lam, 0)
		if got := math.Exp(lg); math.Abs(got-mean) > 5*se {
			t.Errorf("λ=%v: R = %.8g, Monte Carlo %.8g ± %.2g", lam, got, mean, se)
		}
	}
}

func TestLaplaceMixMomentErrors(t *testing.T) {
	for _, tc := range []struct{ q, b, l float64 }{{-0.1, 1, 2}, {1.5, 1, 2}, {0.1, 0, 2}, {0.1, math.Inf(1), 2}, {0.1, 1, math.NaN()}} {
		if _, err := LaplaceMixLogMoment(tc.q, tc.b, tc.l, 0); err == nil {
			t.Errorf("%+v: no error", tc)
		}
	}
}

func TestWhiteBoxConditions(t *testing.T) {
	for _, tc := range []struct {
		name  string
		q     float64
		p     PTR
		alpha float64
		fail  string // "" = all hold
	}{
		{"fig2 proven", 0.01, PTR{Sigma1: 16, Tau: 0.5, B: 1, Delta0: 1e-8}, 10, ""},
		{"q=0", 0, PTR{Sigma1: 1.1, Tau: 0.5, B: 1, Delta0: 1e-8}, 64, ""},
		{"paper MNIST sigma=1.1", 256.0 / 60000, PTR{Sigma1: 1.1, Tau: 0.5, B: 1, Delta0: 1e-8}, 2, "sigma2>=4"},
		{"sigma1=4 tau=0.5", 0.01, PTR{Sigma1: 4, Tau: 0.5, B: 1, Delta0: 1e-8}, 2, "sigma2>=4"},
		{"q too large", 0.09, PTR{Sigma1: 16, Tau: 0.5, B: 1, Delta0: 1e-8}, 2, "q"},
		{"q at limit b=1", math.Exp(-1) / (4 + math.Exp(-1)), PTR{Sigma1: 64, Tau: 0.5, B: 1, Delta0: 1e-8}, 2, ""},
		{"alpha too large", 0.01, PTR{Sigma1: 8, Tau: 0.5, B: 1, Delta0: 1e-8}, 16, "alpha-range"},
		{"alpha ratio", 0.01, PTR{Sigma1: 16, Tau: 1, B: 1, Delta0: 1e-8}, 50, "alpha-ratio"},
	} {
		err := WhiteBoxConditions(tc.q, tc.p, tc.alpha)
		var ce *WhiteBoxConditionError
		switch {
		case tc.fail == "" && err != nil:
			t.Errorf("%s: unexpected %v", tc.name, err)
		case tc.fail != "" && !errors.As(err, &ce):
			t.Errorf("%s: want failure %q, got %v", tc.name, tc.fail, err)
		case tc.fail != "" && ce.Condition != tc.fail:
			t.Errorf("%s: want failure %q, got %q (%v)", tc.name, tc.fail, ce.Condition, err)
		}
	}
	// MTZ19 Theorem 11's α-conditions, re-derived by hand at σ₂ = 4, q' for
	// q = 0.01, b = 1: the largest proven integer order is 10.
	p := PTR{Sigma1: 8, Tau: 0.5, B: 1, Delta0: 1e-8}
	if WhiteBoxConditions(0.01, p, 10) != nil || WhiteBoxConditions(0.01, p, 11) == nil {
		t.Errorf("largest proven order for σ₂=4, q=0.01, b=1 should be 10")
	}
	if err := WhiteBoxConditions(1.2, p, 2); err == nil {
		t.Errorf("q > 1 accepted")
	}
	if err := WhiteBoxConditions(0.01, PTR{}, 2); err == nil {
		t.Errorf("invalid PTR accepted")
	}
}

// subsampledPTRTrueLogMoments computes, by 2-D quadrature, the two Rényi
// moments between PTR on T (test value Δ = d, f₁ = f₂ = 0) and its Poisson
// subsample mixture with T' = T ∪ {x} (Δ = d1, f₁ = 1, f₂ = f2): one concrete
// pair of neighbouring inputs, whose divergence no valid bound may undercut.
func subsampledPTRTrueLogMoments(q float64, p PTR, d, d1, f2, alpha float64) (fwd, rev float64) {
	b := p.B
	thr := b * math.Log(1/(2*p.Delta0))
	s1, s2 := p.Sigma1, p.Sigma2()
	lap := func(s, m float64) float64 { return math.Exp(-math.Abs(s-m)/b) / (2 * b) }
	// inner(s) = (E_{P0(t|s)}[(μ/P0)^α], E_{μ(t|s)}[(P0/μ)^α]) times densities.
	inner := func(s float64) (float64, float64) {
		p0s, p1s := lap(s, d), lap(s, d1)
		sig, m1 := s1, 1.0
		if s > thr {
			sig, m1 = s2, f2
		}
		g := func(t, m float64) float64 {
			z := (t - m) / sig
			return math.Exp(-0.5*z*z) / (sig * math.Sqrt(2*math.Pi))
		}
		lo, hi := math.Min(0, m1)-14*sig, math.Max(0, m1)+14*sig
		ff := func(t float64) float64 {
			a0 := p0s * g(t, 0)
			mu := (1-q)*a0 + q*p1s*g(t, m1)
			return a0 * math.Pow(mu/a0, alpha)
		}
		fr := func(t float64) float64 {
			a0 := p0s * g(t, 0)
			mu := (1-q)*a0 + q*p1s*g(t, m1)
			return mu * math.Pow(a0/mu, alpha)
		}
		return quad.Fixed(ff, lo, hi, 400, quad.Legendre{}, 0), quad.Fixed(fr, lo, hi, 400, quad.Legendre{}, 0)
	}
	cuts := []float64{math.Min(d, d1) - 50*b, d, d1, thr, math.Max(d, d1) + 50*b}
	cuts = sortedUnique(cuts)
	var sf, sr float64
	for i := 0; i+1 < len(cuts); i++ {
		xs := make([]float64, 300)
		ws := make([]float64, 300)
		quad.Legendre{}.FixedLocations(xs, ws, cuts[i], cuts[i+1])
		for j, s := range xs {
			a, r := inner(s)
			sf += ws[j] * a
			sr += ws[j] * r
		}
	}
	return math.Log(sf), math.Log(sr)
}

func sortedUnique(x []float64) []float64 {
	out := []float64{}
	for len(x) > 0 {
		mi := 0
		for i := range x {
			if x[i] < x[mi] {
				mi = i
			}
		}
		if len(out) == 0 || x[mi] > out[len(out)-1] {
			out = append(out, x[mi])
		}
		x = append(x[:mi], x[mi+1:]...)
	}
	return out
}

func TestSubsampledPTRTrueDivergenceBelowBounds(t *testing.T) {
	if testing.Short() {
		t.Skip("2-D quadrature")
	}
	q := 0.05
	p := PTR{Sigma1: 8, Tau: 0.5, B: 1, Delta0: 1e-3}
	thr := p.B * math.Log(1/(2*p.Delta0))
	pairs := []struct{ d, d1, f2 float64 }{
		{0, 0, 1},                 // case 1: both local sensitivities > τ, f₂ moves by GS = 1
		{thr, thr + 1, p.Tau},     // case 2 around the threshold
		{thr + 1, thr, p.Tau},     // Δ decreases
		{thr - 2, thr - 1, p.Tau}, // below the threshold
	}
	for _, alpha := range []float64{2, 3.5, 5} {
		if err := WhiteBoxConditions(q, p, alpha); err != nil {
			t.Fatalf("test setting must satisfy theorem 4.4: %v", err)
		}
		wb := ptrWhiteBoxRDP(q, p, alpha)
		bb, err := zw19Upper(p, q, alpha)
		if err != nil {
			t.Fatal(err)
		}
		for _, pr := range pairs {
			fwd, rev := subsampledPTRTrueLogMoments(q, p, pr.d, pr.d1, pr.f2, alpha)
			trueEps := math.Max(fwd, rev) / (alpha - 1)
			if trueEps > wb*(1+1e-7) || trueEps > bb.Epsilon*(1+1e-7) {
				t.Errorf("α=%v pair %+v: true divergence %.6g exceeds white-box %.6g or black-box %.6g", alpha, pr, trueEps, wb, bb.Epsilon)
			}
			t.Logf("α=%v pair %+v: true %.6g white-box %.6g black-box %.6g", alpha, pr, trueEps, wb, bb.Epsilon)
			if trueEps <= 0 {
				t.Errorf("α=%v pair %+v: true divergence %.3g should be > 0", alpha, pr, trueEps)
			}
		}
	}
}
