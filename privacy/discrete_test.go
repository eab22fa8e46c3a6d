package privacy

import (
	"math"
	"testing"
)

// The discrete Laplace curve equals the Rényi divergence between DL(0) and
// DL(K) computed by brute-force summation over the integers, in both
// directions; it lies in (0, 1/b], and approaches the continuous Laplace
// curve as K grows.
func TestDiscreteLaplaceRDPBruteForce(t *testing.T) {
	for _, b := range []float64{0.5, 1, 3} {
		for _, k := range []float64{1, 2, 7, 64} {
			r := math.Exp(-1 / (k * b))
			pmf := func(z float64) float64 { return (1 - r) / (1 + r) * math.Exp(-math.Abs(z)/(k*b)) }
			for _, alpha := range []float64{1.5, 2, 4.5, 10, 64} {
				var fwd, rev float64
				lim := 60 * k * b * alpha
				for z := -lim; z <= lim+k; z++ {
					p, q := pmf(z), pmf(z-k)
					if p == 0 || q == 0 {
						continue
					}
					fwd += p * math.Pow(p/q, alpha-1)
					rev += q * math.Pow(q/p, alpha-1)
				}
				want := math.Log(fwd) / (alpha - 1)
				got, err := DiscreteLaplace{B: b, K: k}.RDP(alpha)
				if err != nil {
					t.Fatal(err)
				}
				tol := 1e-9 * math.Max(1, want)
				if math.Abs(got.Epsilon-want) > tol || math.Abs(math.Log(rev)/(alpha-1)-want) > tol {
					t.Errorf("b=%v K=%v α=%v: %v, brute force %v / %v", b, k, alpha, got.Epsilon, want, math.Log(rev)/(alpha-1))
				}
				if got.Epsilon > 1/b+1e-12 || got.Epsilon <= 0 {
					t.Errorf("b=%v K=%v α=%v: %v outside (0, 1/b]", b, k, alpha, got.Epsilon)
				}
			}
		}
	}
	// K = 2¹⁰ is within 0.1% of the continuous Laplace curve.
	for _, alpha := range []float64{2, 10, 63} {
		d, _ := DiscreteLaplace{B: 1, K: 1024}.RDP(alpha)
		if c := laplaceRDP(alpha, 1); math.Abs(d.Epsilon-c) > 1e-3*c {
			t.Errorf("α=%v: K=1024 gives %v, continuous %v", alpha, d.Epsilon, c)
		}
	}
	for _, k := range []float64{0, 1.5, 1 << 31} {
		if err := (DiscreteLaplace{B: 1, K: k}).Validate(); err == nil {
			t.Errorf("K = %v accepted", k)
		}
	}
}

// PTRDiscrete is Theorem 4.3 with the discrete Laplace term: it equals PTR
// wherever the mixture term dominates, never falls below it, and exceeds it
// by exactly ε_DLap − ε_Lap where the Laplace term dominates.
func TestPTRDiscreteVersusPTR(t *testing.T) {
	c := PTR{Sigma1: 1.1, Tau: 0.5, B: 1, Delta0: 1e-8}
	d := PTRDiscrete{Sigma1: 1.1, Tau: 0.5, B: 1, Delta0: 1e-8, K: 1}
	for _, alpha := range []float64{1.5, 2, 8, 32, 63} {
		cv, _ := c.RDP(alpha)
		dv, _ := d.RDP(alpha)
		if dv.Epsilon < cv.Epsilon-1e-12 {
			t.Errorf("α=%v: discrete %v below continuous %v", alpha, dv.Epsilon, cv.Epsilon)
		}
		e1 := alpha / (2 * 1.1 * 1.1)
		if want := e1 + discreteLaplaceRDP(alpha, 1, 1); dv.Epsilon < want-1e-12 {
			t.Errorf("α=%v: %v below the discrete Laplace term %v", alpha, dv.Epsilon, want)
		}
		if cv.Epsilon > e1+discreteLaplaceRDP(alpha, 1, 1) && dv.Epsilon != cv.Epsilon {
			t.Errorf("α=%v: where the mixture term dominates both must agree: %v vs %v", alpha, dv.Epsilon, cv.Epsilon)
		}
	}
	if err := (PTRDiscrete{Sigma1: 1, Tau: 1.5, B: 1, Delta0: 1e-8, K: 1}).Validate(); err == nil {
		t.Error("τ > 1 accepted")
	}
}

// Discrete mechanisms survive the spec round trip (the accountant's
// checkpoint) and their Poisson subsampling uses the ZW19 black-box bound
// (auto), while whitebox is refused: no white-box bound is proven for them.
func TestDiscreteMechanismsSpecAndSubsampling(t *testing.T) {
	for _, m := range []Mechanism{DiscreteGaussian{Sigma: 1.1}, DiscreteLaplace{B: 2, K: 4}, PTRDiscrete{Sigma1: 1.1, Tau: 0.5, B: 1, Delta0: 1e-8, K: 1024}} {
		back, err := FromSpec(m.Spec())
		if err != nil || back != m {
			t.Errorf("%v: round trip %v, %v", m.Spec().Kind, back, err)
		}
		sub := PoissonSubsampled{Base: m, Q: 0.01}
		v, err := sub.RDP(8)
		if err != nil || v.Bound != "zw19-blackbox" && v.Bound[:4] != "zw19" {
			t.Errorf("%v subsampled: bound %q, %v", m.Spec().Kind, v.Bound, err)
		}
		if _, err := (PoissonSubsampled{Base: m, Q: 0.01, Bound: SubsampleWhiteBox}).RDP(8); err == nil {
			t.Errorf("%v: white-box subsampling accepted", m.Spec().Kind)
		}
	}
	g, _ := DiscreteGaussian{Sigma: 2}.RDP(3)
	if g.Epsilon != 3.0/8 {
		t.Errorf("discrete Gaussian RDP %v, want 3/8", g.Epsilon)
	}
}
