package privacy

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// rdpEpsilon is the RDP accountant's ε (DefaultOrders, BBG) of m^n at δ
// (the RDP accountant the PLD accountant keeps beside it, pld_rdp.go).
func rdpEpsilon(t *testing.T, m Mechanism, n int, delta float64) float64 {
	t.Helper()
	a, _ := NewPLDAccountant(1)
	if err := a.Compose(m, n); err != nil {
		t.Fatal(err)
	}
	r := a.rdpShadow()
	if r == nil {
		t.Fatalf("%v: no RDP curve", m)
	}
	e, err := r.Epsilon(delta, ConversionBBG)
	if err != nil {
		t.Fatal(err)
	}
	return e.Epsilon
}

// pldEpsilon is the PLD accountant's reported ε of m^n at δ.
func pldEpsilon(t *testing.T, m Mechanism, n int, delta float64) Guarantee {
	t.Helper()
	return pldEpsilonWith(t, m, n, delta, false)
}

// pldEpsilonWith is pldEpsilon; upperOnly drops the optimistic estimate
// (DropOptimistic: the certified ε is bit for bit the same, at about half
// the cost), for tests that read only the certified bound.
func pldEpsilonWith(t *testing.T, m Mechanism, n int, delta float64, upperOnly bool) Guarantee {
	t.Helper()
	a, _ := NewPLDAccountant(0)
	if upperOnly {
		a.DropOptimistic()
	}
	if err := a.Compose(m, n); err != nil {
		t.Fatal(err)
	}
	g, err := a.EpsilonFor(delta)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// Without subsampling, n Gaussian steps of noise σ are one Gaussian step of
// noise σ/√n (exact composition); ε(δ) by bisection of Balle & Wang's
// closed form. The PLD bound is never below it, within 1% (or 1e-3) of it,
// and never above the RDP bound by more than the interval.
func TestPLDGaussianExactSmallDelta(t *testing.T) {
	cases := []struct {
		sigma float64
		n     int
	}{
		{1, 1}, {3, 10}, {2.7878, 690}, {20, 2000},
	}
	if !testing.Short() {
		cases = append(cases, struct {
			sigma float64
			n     int
		}{9.2501, 8387}, struct {
			sigma float64
			n     int
		}{1000, 1000000})
	}
	for _, c := range cases {
		for _, delta := range []float64{1e-3, 1e-6, 1e-9, 1e-12, 1e-15} {
			s := c.sigma / math.Sqrt(float64(c.n))
			exact := epsFromDelta(delta, func(e float64) float64 { return analyticGaussianDelta(s, e) })
			g := pldEpsilon(t, Gaussian{Sigma: c.sigma}, c.n, delta)
			rdp := rdpEpsilon(t, Gaussian{Sigma: c.sigma}, c.n, delta)
			name := fmt.Sprintf("σ=%v n=%d δ=%g", c.sigma, c.n, delta)
			if !(g.Epsilon >= exact) || g.Epsilon > math.Max(exact*1.01, exact+1e-3) {
				t.Errorf("%s: ε %v (%s), exact %v", name, g.Epsilon, g.Bound, exact)
			}
			if g.Epsilon > rdp+g.Interval {
				t.Errorf("%s: ε %v above RDP %v", name, g.Epsilon, rdp)
			}
			t.Logf("%s: ours %.6f exact %.6f rdp %.6f [%s, h=%g]", name, g.Epsilon, exact, rdp, g.Bound, g.Interval)
		}
	}
}

// One Poisson-subsampled Gaussian step: ε(δ) by quadrature (pld_test.go's
// subsampledGaussianDelta, both directions) down to δ = 1e-12.
func TestPLDSubsampledOneStepSmallDelta(t *testing.T) {
	for _, c := range []struct{ q, sigma float64 }{{0.01, 0.8}, {0.004266, 1.1}, {0.1, 2}} {
		for _, delta := range []float64{1e-3, 1e-6, 1e-9, 1e-12} {
			exact := epsFromDelta(delta, func(e float64) float64 {
				return math.Max(subsampledGaussianDelta(c.q, c.sigma, e, true), subsampledGaussianDelta(c.q, c.sigma, e, false))
			})
			m := SubsampledGaussian{Q: c.q, Sigma: c.sigma}
			g := pldEpsilon(t, m, 1, delta)
			name := fmt.Sprintf("q=%v σ=%v δ=%g", c.q, c.sigma, delta)
			if !(g.Epsilon >= exact-1e-9) || g.Epsilon > math.Max(exact*1.01, exact+1e-3) {
				t.Errorf("%s: ε %v (%s), quadrature %v", name, g.Epsilon, g.Bound, exact)
			}
			if rdp := rdpEpsilon(t, m, 1, delta); g.Epsilon > rdp+g.Interval {
				t.Errorf("%s: ε %v above RDP %v", name, g.Epsilon, rdp)
			}
		}
	}
}

// The cases: finite where main gave +Inf, and close to the PLD
// computed outside the project (dp_accounting, quoted in issue 23):
// σ = 1.1, q = 0.004266 at δ = 1e-12: 1.297 after 100 steps, 1.648 after
// 1,000; no subsampling: 103.57 (σ = 2.7878, 690 steps, δ = 1e-10).
func TestPLDIssueCasesSmallDelta(t *testing.T) {
	sg := SubsampledGaussian{Q: 0.004266, Sigma: 1.1}
	for _, c := range []struct {
		m        Mechanism
		n        int
		delta    float64
		ref, tol float64 // within [ref−tol, ref + 1%]
	}{
		{sg, 100, 1e-12, 1.297, 0.002},
		{sg, 1000, 1e-12, 1.648, 0.003},
		{Gaussian{Sigma: 2.7878}, 690, 1e-10, 103.57, 0.01},
	} {
		g := pldEpsilon(t, c.m, c.n, c.delta)
		if !(g.Epsilon >= c.ref-c.tol && g.Epsilon <= c.ref*1.01) || g.Bound != BoundPLD {
			t.Errorf("%v ×%d δ=%g: ε %v (%s), reference %v", c.m, c.n, c.delta, g.Epsilon, g.Bound, c.ref)
		}
	}
	// 1,500 steps at δ = 1e-9 and 20,000 at δ = 1e-8 (+Inf on main before
	// min(PLD, RDP)): finite and below RDP.
	for _, c := range []struct {
		n     int
		delta float64
	}{{1500, 1e-9}, {20000, 1e-8}} {
		g := pldEpsilon(t, sg, c.n, c.delta)
		rdp := rdpEpsilon(t, sg, c.n, c.delta)
		if !(g.Epsilon < rdp) || g.Bound != BoundPLD {
			t.Errorf("%d steps δ=%g: ε %v (%s), RDP %v", c.n, c.delta, g.Epsilon, g.Bound, rdp)
		}
	}
}

// ε(δ) is non-decreasing in the number of steps on a grid of lengths from
// 1 to 20,000 (6 per doubling; -short: 2, one δ) at small and ordinary δ.
func TestPLDMonotoneLengths(t *testing.T) {
	m := SubsampledGaussian{Q: 0.004266, Sigma: 1.1}
	var lengths []int
	per := 6.0
	deltas := []float64{1e-5, 1e-10, 1e-15}
	if testing.Short() {
		per, deltas = 2, []float64{1e-10}
	}
	for x := 0.0; ; x += 1 / per {
		n := int(math.Round(math.Exp2(x)))
		if n > 20000 {
			break
		}
		if len(lengths) == 0 || n > lengths[len(lengths)-1] {
			lengths = append(lengths, n)
		}
	}
	for _, delta := range deltas {
		prev := 0.0
		for _, n := range lengths {
			g := pldEpsilonWith(t, m, n, delta, true)
			if math.IsInf(g.Epsilon, 0) || math.IsNaN(g.Epsilon) || g.Epsilon < prev {
				t.Errorf("δ=%g, %d steps: ε %v (%s) after %v", delta, n, g.Epsilon, g.Bound, prev)
			}
			prev = g.Epsilon
		}
	}
}

// 10⁶ identical Laplace (b = 1) and Gaussian steps compose without a grid
// limit (the grid is coarsened) and stay between the exact value (Gaussian)
// and the RDP bound.
func TestPLDMillionSteps(t *testing.T) {
	if testing.Short() {
		t.Skip("10⁶ steps")
	}
	for _, m := range []Mechanism{Laplace{B: 1}, Gaussian{Sigma: 300}} {
		g := pldEpsilon(t, m, 1000000, 1e-6)
		rdp := rdpEpsilon(t, m, 1000000, 1e-6)
		if math.IsInf(g.Epsilon, 0) || g.Epsilon > rdp+g.Interval {
			t.Errorf("%v: ε %v (%s, h=%g), RDP %v", m, g.Epsilon, g.Bound, g.Interval, rdp)
		}
		if gm, ok := m.(Gaussian); ok {
			s := gm.Sigma / 1000
			exact := epsFromDelta(1e-6, func(e float64) float64 { return analyticGaussianDelta(s, e) })
			if !(g.Epsilon >= exact) || g.Epsilon > exact*1.01 {
				t.Errorf("%v: ε %v, exact %v", m, g.Epsilon, exact)
			}
		}
		t.Logf("%v ×10⁶: ε %v (%s, h=%g), RDP %v", m, g.Epsilon, g.Bound, g.Interval, rdp)
	}
}

// Every twiddle factor of n = 2^14 is within fftTwiddleErr of e^{−2πij/n}
// computed to 200 bits (Taylor series of cos and sin in math/big).
func TestFFTTwiddleAccuracy(t *testing.T) {
	const n = 1 << 14
	w := fftTwiddles(n)
	prec := uint(200)
	pi := new(big.Float).SetPrec(prec)
	// π by Machin: 16 atan(1/5) − 4 atan(1/239).
	atanInv := func(x int64) *big.Float {
		sum := new(big.Float).SetPrec(prec)
		xx := new(big.Float).SetPrec(prec).SetInt64(x * x)
		term := new(big.Float).SetPrec(prec).Quo(big.NewFloat(1).SetPrec(prec), new(big.Float).SetPrec(prec).SetInt64(x))
		for k := int64(0); k < 200; k++ {
			t := new(big.Float).SetPrec(prec).Quo(term, new(big.Float).SetPrec(prec).SetInt64(2*k+1))
			if k%2 == 0 {
				sum.Add(sum, t)
			} else {
				sum.Sub(sum, t)
			}
			term.Quo(term, xx)
		}
		return sum
	}
	pi.Mul(atanInv(5), big.NewFloat(16).SetPrec(prec))
	pi.Sub(pi, new(big.Float).SetPrec(prec).Mul(atanInv(239), big.NewFloat(4).SetPrec(prec)))
	step := 1
	if testing.Short() {
		step = 37
	}
	for j := 0; j < n/2; j += step {
		x := new(big.Float).SetPrec(prec).Mul(pi, big.NewFloat(2*float64(j)/n).SetPrec(prec))
		// cos and sin by Taylor series (|x| ≤ π).
		c, s := new(big.Float).SetPrec(prec).SetInt64(1), new(big.Float).SetPrec(prec).Set(x)
		tc, ts := new(big.Float).SetPrec(prec).SetInt64(1), new(big.Float).SetPrec(prec).Set(x)
		x2 := new(big.Float).SetPrec(prec).Mul(x, x)
		for k := int64(1); k < 60; k++ {
			tc.Mul(tc, x2).Quo(tc, new(big.Float).SetPrec(prec).SetInt64(-(2*k-1)*(2*k)))
			ts.Mul(ts, x2).Quo(ts, new(big.Float).SetPrec(prec).SetInt64(-(2*k)*(2*k+1)))
			c.Add(c, tc)
			s.Add(s, ts)
		}
		cf, _ := c.Float64()
		sf, _ := s.Float64()
		d := math.Hypot(real(w[j])-cf, imag(w[j])+sf)
		if d > fftTwiddleErr {
			t.Fatalf("twiddle %d: error %g > μ = %g", j, d, fftTwiddleErr)
		}
	}
}

// certConvolve's per-entry bound holds against the exact convolution
// (math/big, 200 bits) and is tight enough to be useful (≤ 1e-10 of the
// largest entry).
func TestCertConvolveBound(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct{ na, nb int }{{300, 400}, {1000, 3000}, {4097, 5}} {
		a := make([]float64, c.na)
		b := make([]float64, c.nb)
		for i := range a {
			a[i] = math.Exp(-30 * r.Float64())
		}
		for i := range b {
			b[i] = math.Exp(-30*r.Float64()) * 1e-7
		}
		got, bound, err := certConvolve(a, b)
		if err != nil {
			t.Fatal(err)
		}
		var maxv float64
		for k := 0; k < len(got); k += 1 + len(got)/97 {
			ex := new(big.Float).SetPrec(200)
			for i := max(0, k-c.nb+1); i <= min(k, c.na-1); i++ {
				ex.Add(ex, new(big.Float).SetPrec(200).Mul(big.NewFloat(a[i]), big.NewFloat(b[k-i])))
			}
			e, _ := ex.Float64()
			maxv = math.Max(maxv, e)
			if math.Abs(got[k]-e) > bound {
				t.Errorf("%v entry %d: |%v − %v| > bound %v", c, k, got[k], e, bound)
			}
		}
		if bound > 1e-10*maxv {
			t.Errorf("%v: bound %v vs largest entry %v", c, bound, maxv)
		}
	}
}

// The PLD σ for a target is never above the RDP σ (both calibrated to
// CalibrationTolerance) across δ ∈ [1e-12, 1e-3]: the PLD accountant
// reports min(PLD, RDP) and its calibration evaluates exactly that.
func TestCalibrateSigmaPLDNotAboveRDP(t *testing.T) {
	deltas := []float64{1e-3, 1e-5, 1e-7, 1e-9, 1e-12}
	if testing.Short() {
		deltas = []float64{1e-3, 1e-9}
	}
	for _, delta := range deltas {
		req := CalibrationRequest{TargetEpsilon: 2, Delta: delta, Q: 0.004266, Steps: 3000}
		sr, err := CalibrateSigma(req)
		if err != nil {
			t.Fatal(err)
		}
		req.Accountant = KindPLD
		sp, err := CalibrateSigma(req)
		if err != nil {
			t.Fatal(err)
		}
		if sp > sr+CalibrationTolerance {
			t.Errorf("δ=%g: PLD σ %v above RDP σ %v", delta, sp, sr)
		}
		// The PLD σ meets the target on the accountant, σ − 2·tol does not.
		for _, c := range []struct {
			s    float64
			meet bool
		}{{sp, true}, {sp - 2*CalibrationTolerance, false}} {
			g := pldEpsilon(t, SubsampledGaussian{Q: req.Q, Sigma: c.s}, req.Steps, delta)
			if (g.Epsilon <= req.TargetEpsilon) != c.meet {
				t.Errorf("δ=%g σ=%v: ε %v (%s), target %v, want meet=%v", delta, c.s, g.Epsilon, g.Bound, req.TargetEpsilon, c.meet)
			}
		}
		t.Logf("δ=%g: σ PLD %.5f RDP %.5f", delta, sp, sr)
	}
}
