package privacy

import (
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/integrate/quad"
)

// piecewiseQuad integrates f over [a, b] with a 40-point Gauss–Legendre rule
// on pieces no wider than w and split at the given break points.
func piecewiseQuad(f func(float64) float64, a, b, w float64, breaks ...float64) float64 {
	pts := []float64{a}
	for _, x := range breaks {
		if x > a && x < b {
			pts = append(pts, x)
		}
	}
	pts = append(pts, b)
	// breaks are given sorted by the callers.
	var s float64
	for i := 0; i+1 < len(pts); i++ {
		lo, hi := pts[i], pts[i+1]
		n := int(math.Ceil((hi - lo) / w))
		if n < 1 {
			n = 1
		}
		for k := 0; k < n; k++ {
			x0 := lo + (hi-lo)*float64(k)/float64(n)
			x1 := lo + (hi-lo)*float64(k+1)/float64(n)
			s += quad.Fixed(f, x0, x1, 40, quad.Legendre{}, 0)
		}
	}
	return s
}

// epsFromDelta inverts a decreasing δ(ε) by bisection on [0, 100].
func epsFromDelta(delta float64, d func(float64) float64) float64 {
	lo, hi := 0.0, 100.0
	for d(hi) > delta {
		hi *= 2
	}
	if d(0) <= delta {
		return 0
	}
	for i := 0; i < 200; i++ {
		mid := (lo + hi) / 2
		if d(mid) > delta {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// analyticGaussianDelta is Balle & Wang (2018) Theorem 8 written with the
// standard normal CDF Φ (computed independently of the package's pair):
// δ(ε) = Φ(1/(2σ) − εσ) − e^ε Φ(−1/(2σ) − εσ).
func analyticGaussianDelta(sigma, eps float64) float64 {
	phi := func(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }
	return phi(1/(2*sigma)-eps*sigma) - math.Exp(eps)*phi(-1/(2*sigma)-eps*sigma)
}

// checkBracket asserts optimistic ≤ exact ≤ upper ≤ exact·(1+rel) + abs.
func checkBracket(t *testing.T, name string, upper, exact, optimistic, rel, abs float64) {
	t.Helper()
	if !(upper >= exact) || !(exact >= optimistic) || upper > exact*(1+rel)+abs {
		t.Errorf("%s: want optimistic %.10g ≤ exact %.10g ≤ upper %.10g ≤ exact·(1+%g)+%g", name, optimistic, exact, upper, rel, abs)
	}
}

func TestPLDAnalyticGaussian(t *testing.T) {
	for _, sigma := range []float64{0.5, 1, 2, 5} {
		p, err := NewPLD(Gaussian{Sigma: sigma}, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, delta := range []float64{1e-3, 1e-5, 1e-8} {
			exact := epsFromDelta(delta, func(e float64) float64 { return analyticGaussianDelta(sigma, e) })
			g, err := p.Epsilon(delta)
			if err != nil {
				t.Fatal(err)
			}
			checkBracket(t, fmt.Sprintf("σ=%v δ=%v ε", sigma, delta), g.Epsilon, exact, g.Optimistic, 0.01, 0)
		}
		for _, eps := range []float64{0.1, 1, 3} {
			exact := analyticGaussianDelta(sigma, eps)
			g, _ := p.Delta(eps)
			checkBracket(t, fmt.Sprintf("σ=%v ε=%v δ", sigma, eps), g.Delta, exact, g.Optimistic, 0.01, 1e-14)
		}
	}
}

// N-fold composition of Gaussians with σ is one Gaussian with σ/√N.
func TestPLDGaussianComposition(t *testing.T) {
	for _, c := range []struct {
		sigma float64
		n     int
	}{{2, 10}, {5, 100}, {20, 3000}, {40, 20000}} {
		if testing.Short() && c.n > 3000 {
			continue
		}
		p, err := NewPLD(Gaussian{Sigma: c.sigma}, 0)
		if err != nil {
			t.Fatal(err)
		}
		pn, err := p.SelfCompose(c.n)
		if err != nil {
			t.Fatal(err)
		}
		s := c.sigma / math.Sqrt(float64(c.n))
		// δ ≥ 1e-7: below, the certified FFT round-off charge (≈ 1e-8 after
		// 2·10⁴ compositions) dominates δ.
		for _, delta := range []float64{1e-5, 1e-7} {
			exact := epsFromDelta(delta, func(e float64) float64 { return analyticGaussianDelta(s, e) })
			g, _ := pn.Epsilon(delta)
			checkBracket(t, fmt.Sprintf("σ=%v N=%d δ=%v", c.sigma, c.n, delta), g.Epsilon, exact, g.Optimistic, 0.01, 0)
		}
	}
}

// laplaceDeltaN is the exact δ(e) of N-fold Laplace(b), any real e: the
// closed form for N = 1 (1 − e^{(e−ε₀)/2} on |e| ≤ ε₀) and, for N > 1, the
// recursion δ_N(e) = E_L[δ_{N−1}(e − L)] over the single-step loss law
// (atoms 1/2 at ε₀ and e^{−ε₀}/2 at −ε₀, density e^{(l−ε₀)/2}/4), integrated
// with Gauss–Legendre split at the kinks.
func laplaceDeltaN(b float64, n int, e float64) float64 {
	e0 := 1 / b
	if n == 1 {
		switch {
		case e >= e0:
			return 0
		case e <= -e0:
			return -math.Expm1(e)
		}
		return -math.Expm1((e - e0) / 2)
	}
	prev := func(x float64) float64 { return laplaceDeltaN(b, n-1, x) }
	var breaks []float64
	for k := -n; k <= n; k++ {
		breaks = append(breaks, e-float64(k)*e0)
	}
	// sort ascending
	for i := range breaks {
		for j := i + 1; j < len(breaks); j++ {
			if breaks[j] < breaks[i] {
				breaks[i], breaks[j] = breaks[j], breaks[i]
			}
		}
	}
	cont := piecewiseQuad(func(l float64) float64 { return math.Exp((l-e0)/2) / 4 * prev(e-l) }, -e0, e0, 2*e0, breaks...)
	return 0.5*prev(e-e0) + 0.5*math.Exp(-e0)*prev(e+e0) + cont
}

func TestPLDLaplaceExact(t *testing.T) {
	for _, b := range []float64{0.5, 1, 3} {
		p, err := NewPLD(Laplace{B: b}, 0)
		if err != nil {
			t.Fatal(err)
		}
		for n := 1; n <= 3; n++ {
			pn, err := p.SelfCompose(n)
			if err != nil {
				t.Fatal(err)
			}
			for _, delta := range []float64{1e-2, 1e-4} {
				exact := epsFromDelta(delta, func(e float64) float64 { return laplaceDeltaN(b, n, e) })
				g, _ := pn.Epsilon(delta)
				checkBracket(t, fmt.Sprintf("b=%v N=%d δ=%v ε", b, n, delta), g.Epsilon, exact, g.Optimistic, 0.01, 0)
			}
			for _, eps := range []float64{0.05, 0.5} {
				exact := laplaceDeltaN(b, n, eps)
				g, _ := pn.Delta(eps)
				checkBracket(t, fmt.Sprintf("b=%v N=%d ε=%v δ", b, n, eps), g.Delta, exact, g.Optimistic, 0.01, 1e-12)
			}
		}
	}
}

// subsampledGaussianDelta integrates δ(ε) of one Poisson-subsampled
// Gaussian step in the output space: A = (1−q)N(0,σ²) + qN(1,σ²),
// B = N(0,σ²); remove: ∫(A − e^ε B)₊, add: ∫(B − e^ε A)₊, split at the
// crossing point x* where A/B = e^ε (remove) or B/A = e^ε (add).
func subsampledGaussianDelta(q, sigma, eps float64, remove bool) float64 {
	norm := func(x, m float64) float64 {
		return math.Exp(-(x-m)*(x-m)/(2*sigma*sigma)) / (sigma * math.Sqrt(2*math.Pi))
	}
	a := func(x float64) float64 { return (1-q)*norm(x, 0) + q*norm(x, 1) }
	b := func(x float64) float64 { return norm(x, 0) }
	y := math.Exp(eps)
	lo, hi := -40*sigma, 1+40*sigma
	if remove {
		if y <= 1-q {
			return 1 - y
		}
		xs := sigma*sigma*math.Log((y-1+q)/q) + 0.5
		if xs >= hi {
			return 0
		}
		return piecewiseQuad(func(x float64) float64 { return math.Max(0, a(x)-y*b(x)) }, math.Max(xs, lo), hi, sigma/2)
	}
	// B/A = y ⇔ (1−q) + q e^{(2x−1)/(2σ²)} = 1/y.
	if y*(1-q) >= 1 {
		return 0
	}
	xs := sigma*sigma*math.Log((1/y-1+q)/q) + 0.5
	if xs <= lo {
		return 0
	}
	return piecewiseQuad(func(x float64) float64 { return math.Max(0, b(x)-y*a(x)) }, lo, math.Min(xs, hi), sigma/2)
}

func TestPLDSubsampledGaussianOneStep(t *testing.T) {
	for _, c := range []struct{ q, sigma float64 }{{0.01, 0.7}, {0.1, 1}, {0.004, 1.3}, {0.3, 2}} {
		p, err := NewPLD(SubsampledGaussian{Q: c.q, Sigma: c.sigma}, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, eps := range []float64{0.01, 0.1, 0.5, 2} {
			rem := subsampledGaussianDelta(c.q, c.sigma, eps, true)
			add := subsampledGaussianDelta(c.q, c.sigma, eps, false)
			g, err := p.Delta(eps)
			if err != nil {
				t.Fatal(err)
			}
			checkBracket(t, fmt.Sprintf("q=%v σ=%v ε=%v δ", c.q, c.sigma, eps), g.Delta, math.Max(rem, add), g.Optimistic, 0.01, 1e-13)
			// The pair's own closed form agrees with the quadrature.
			r, a, _ := SubsampledGaussian{Q: c.q, Sigma: c.sigma}.lossPairs()
			if d := math.Abs(r.hockeyStick(eps) - rem); d > 1e-9*rem+1e-15 {
				t.Errorf("remove hockey-stick %v vs quadrature %v", r.hockeyStick(eps), rem)
			}
			if d := math.Abs(a.hockeyStick(eps) - add); d > 1e-9*add+1e-15 {
				t.Errorf("add hockey-stick %v vs quadrature %v", a.hockeyStick(eps), add)
			}
		}
		for _, delta := range []float64{1e-3, 1e-6} {
			exact := epsFromDelta(delta, func(e float64) float64 {
				return math.Max(subsampledGaussianDelta(c.q, c.sigma, e, true), subsampledGaussianDelta(c.q, c.sigma, e, false))
			})
			g, _ := p.Epsilon(delta)
			checkBracket(t, fmt.Sprintf("q=%v σ=%v δ=%v ε", c.q, c.sigma, delta), g.Epsilon, exact, g.Optimistic, 0.01, 1e-6)
		}
	}
}

// PLD ≤ RDP (Opacus-equivalent accountant with the BBG conversion) on the
// corners and centre of q ∈ [1e-3, 0.2], σ ∈ [0.6, 4], N ∈ [1, 2·10⁴].
func TestPLDBelowRDP(t *testing.T) {
	type tc struct {
		q, sigma float64
		n        int
	}
	var cases []tc
	for _, q := range []float64{1e-3, 0.2} {
		for _, sigma := range []float64{0.6, 4} {
			for _, n := range []int{1, 20000} {
				cases = append(cases, tc{q, sigma, n})
			}
		}
	}
	cases = append(cases, tc{0.02, 1.5, 300}, tc{0.004, 0.8, 3000})
	for _, c := range cases {
		if testing.Short() && c.n == 20000 && c.q == 0.2 {
			continue
		}
		m := SubsampledGaussian{Q: c.q, Sigma: c.sigma}
		acc, _ := NewRDPAccountant(nil)
		if err := acc.Compose(m, c.n); err != nil {
			t.Fatal(err)
		}
		// A coarser interval where ε is large keeps the grid small; the
		// PLD is an upper bound at any interval.
		r0, _ := acc.Epsilon(1e-5, ConversionBBG)
		h := math.Max(DefaultPLDInterval, r0.Epsilon/20000)
		p, err := NewPLD(m, h)
		if err != nil {
			t.Fatal(err)
		}
		if p, err = p.SelfCompose(c.n); err != nil {
			t.Fatal(err)
		}
		for _, delta := range []float64{1e-5, 1e-7} {
			r, _ := acc.Epsilon(delta, ConversionBBG)
			g, _ := p.Epsilon(delta)
			if !(g.Epsilon <= r.Epsilon) {
				t.Errorf("q=%v σ=%v N=%d δ=%v: PLD ε %v > RDP ε %v", c.q, c.sigma, c.n, delta, g.Epsilon, r.Epsilon)
			}
			t.Logf("q=%v σ=%v N=%d δ=%v h=%.3g: PLD %.4f (optimistic %.4f) RDP %.4f", c.q, c.sigma, c.n, delta, h, g.Epsilon, g.Optimistic, r.Epsilon)
		}
	}
}

// BenchmarkPLDSelfCompose20000 composes 20,000 DP-SGD steps (σ = 1.1,
// q = 256/60000) and queries ε at δ = 1e-5.
func BenchmarkPLDSelfCompose20000(b *testing.B) {
	for i := 0; i < b.N; i++ {
		p, err := NewPLD(SubsampledGaussian{Q: 256.0 / 60000, Sigma: 1.1}, 0)
		if err != nil {
			b.Fatal(err)
		}
		if p, err = p.SelfCompose(20000); err != nil {
			b.Fatal(err)
		}
		if _, err := p.Epsilon(1e-5); err != nil {
			b.Fatal(err)
		}
	}
}
