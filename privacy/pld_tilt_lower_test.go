package privacy

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestTiltedConvolveLower: entry by entry, the lower bound is at most the
// exact convolution (math/big), and the upper bound (tiltedConvolve) at
// least it; in the upper tail, down to entries of 1e-20 where the plain
// FFT's absolute error (≈ 1e-16, 1e4 relative there) swamps them, the
// lower bound stays within 1% relative of the truth, within 1e-10 at the
// smaller size (the tilt's relative accuracy, best near the saddle point;
// farther out the tilted measure decays too and the bound falls to 0,
// still valid).
func TestTiltedConvolveLower(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 23))
	const h, lam = 1e-2, 3.0
	for _, n := range []int{300, 1000} {
		// Masses decaying like e^{−l²} over a wide range: tails far below
		// the FFT's absolute round-off.
		a, b := make([]float64, n), make([]float64, n)
		for i := range a {
			l := float64(i-n/4) * h
			a[i] = math.Exp(-l*l) * (0.5 + r.Float64())
			b[i] = math.Exp(-l*l/2) * (0.5 + r.Float64())
		}
		la, lb := -n/4, -n/4
		lo, err := tiltedConvolveLower(a, b, la, lb, h, lam)
		if err != nil {
			t.Fatal(err)
		}
		up, err := tiltedConvolve(a, b, la, lb, h, lam)
		if err != nil {
			t.Fatal(err)
		}
		worst := 0.0
		for k := range lo {
			ex := new(big.Float).SetPrec(200)
			for i := max(0, k-n+1); i <= min(k, n-1); i++ {
				ex.Add(ex, new(big.Float).SetPrec(200).Mul(big.NewFloat(a[i]), big.NewFloat(b[k-i])))
			}
			e, _ := ex.Float64()
			if !(lo[k] <= e && e <= up[k]) {
				t.Fatalf("n=%d k=%d: lower %v, exact %v, upper %v", n, k, lo[k], e, up[k])
			}
			// The tilt helps the upper tail (λ > 0): relative accuracy there.
			if l := float64(la+lb+k) * h; l > 0 && e > 1e-20 {
				worst = math.Max(worst, (e-lo[k])/e)
			}
		}
		if worst > 1e-2 || n == 300 && worst > 1e-10 {
			t.Errorf("n=%d: lower bound off by %.3g relative in the upper tail", n, worst)
		}
		t.Logf("n=%d (%d products): upper tail, lower bound within %.3g relative", n, n*n, worst)
	}
}

// On the tilted path (small δ) the optimistic estimate is the tilted
// composition of the optimistic discretization: below the exact ε (no
// subsampling: Balle & Wang's closed form) and the certified bound, by at
// most the discretization's drift of h/2 per step (the fast path's
// estimate, which subtracts its round-off slack, was 14.87 for 15.64 at
// σ = 5, 100 steps, δ = 1e-12, and 0.904 for 1.297 in the subsampled case).
func TestTiltedOptimistic(t *testing.T) {
	cases := []struct {
		m     Mechanism
		n     int
		delta float64
		exact float64 // 0: not computable here
	}{
		{Gaussian{Sigma: 3}, 20, 1e-12, -1},
		{Gaussian{Sigma: 5}, 100, 1e-12, -1},
		{PoissonSubsampled{Base: Gaussian{Sigma: 1.1}, Q: 0.004266}, 100, 1e-12, 0},
	}
	for _, c := range cases {
		name := fmt.Sprintf("%s n=%d δ=%g", specString(c.m), c.n, c.delta)
		a, _ := NewPLDAccountant(0)
		if err := a.Compose(c.m, c.n); err != nil {
			t.Fatal(err)
		}
		g, err := a.EpsilonFor(c.delta)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(g.Detail, "pld tilted") {
			t.Fatalf("%s: not on the tilted path: %s", name, g.Detail)
		}
		drift := float64(c.n) * g.Interval / 2
		if !(g.Optimistic <= g.Epsilon) || !(g.Epsilon-g.Optimistic <= 1.2*drift) {
			t.Errorf("%s: optimistic %v, certified %v (drift %v)", name, g.Optimistic, g.Epsilon, drift)
		}
		if c.exact < 0 {
			s := c.m.(Gaussian).Sigma / math.Sqrt(float64(c.n))
			exact := epsFromDelta(c.delta, func(e float64) float64 { return analyticGaussianDelta(s, e) })
			if !(g.Optimistic <= exact && exact <= g.Epsilon) || !(exact-g.Optimistic <= 1.2*drift) {
				t.Errorf("%s: optimistic %v, exact %v, certified %v", name, g.Optimistic, exact, g.Epsilon)
			}
			t.Logf("%s: optimistic %.6f exact %.6f certified %.6f", name, g.Optimistic, exact, g.Epsilon)
		} else {
			t.Logf("%s: optimistic %.6f certified %.6f", name, g.Optimistic, g.Epsilon)
		}
		// δ at the certified ε: the optimistic δ is below the certified one
		// (and below the queried δ, which the certified ε meets).
		if gd, err := a.DeltaFor(g.Epsilon); err != nil || !(gd.Optimistic <= gd.Delta) || !(gd.Delta <= c.delta*1.01) {
			t.Errorf("%s: δ(ε = %v): optimistic %v, certified %v (%s), %v", name, g.Epsilon, gd.Optimistic, gd.Delta, gd.Detail, err)
		} else {
			t.Logf("%s: δ(%.6f): optimistic %.4g certified %.4g [%s]", name, g.Epsilon, gd.Optimistic, gd.Delta, gd.Detail[:min(10, len(gd.Detail))])
		}
		// An upper-only accountant reports no optimistic estimate and the
		// same certified bound, bit for bit.
		u, _ := NewPLDAccountant(0)
		u.DropOptimistic()
		u.Compose(c.m, c.n)
		gu, err := u.EpsilonFor(c.delta)
		if err != nil || gu.Epsilon != g.Epsilon || !math.IsNaN(gu.Optimistic) {
			t.Errorf("%s: upper only: ε %v (want %v), optimistic %v (want NaN), %v", name, gu.Epsilon, g.Epsilon, gu.Optimistic, err)
		}
	}
}
