package privacy

import (
	"math"
	"testing"
)

// zw19Naive evaluates Theorem 6 of Zhu & Wang (2019) and their lower bound
// literally, in plain floating point (small orders only).
func zw19Naive(eps func(int) float64, n int, q float64) (upper, lower float64) {
	binom := func(n, k int) float64 {
		c := 1.0
		for i := 1; i <= k; i++ {
			c = c * float64(n-k+i) / float64(i)
		}
		return c
	}
	head := math.Pow(1-q, float64(n-1)) * (float64(n)*q - q + 1)
	t2 := binom(n, 2) * q * q * math.Pow(1-q, float64(n-2)) * math.Exp(eps(2))
	up, lo := head+t2, head+t2
	for l := 3; l <= n; l++ {
		v := binom(n, l) * math.Pow(1-q, float64(n-l)) * math.Pow(q, float64(l)) * math.Exp(float64(l-1)*eps(l))
		up += 3 * v
		lo += v
	}
	return math.Log(up) / float64(n-1), math.Log(lo) / float64(n-1)
}

func TestZW19MatchesLiteralFormula(t *testing.T) {
	bases := []Mechanism{Gaussian{Sigma: 1.5}, Laplace{B: 2}, PTR{Sigma1: 4, Tau: 0.5, B: 1, Delta0: 1e-8}}
	for _, base := range bases {
		eps := func(l int) float64 { v, _ := base.RDP(float64(l)); return v.Epsilon }
		for _, q := range []float64{0.3, 0.1, 0.01} {
			for _, n := range []int{2, 3, 5, 8, 12} {
				wantU, wantL := zw19Naive(eps, n, q)
				u, err := zw19Upper(base, q, float64(n))
				if err != nil {
					t.Fatal(err)
				}
				l, err := zw19Lower(base, q, float64(n))
				if err != nil {
					t.Fatal(err)
				}
				// The upper value may be capped by the base curve.
				if wantU > eps(n) {
					wantU = eps(n)
				}
				if math.Abs(u.Epsilon-wantU) > 1e-8*wantU || math.Abs(l.Epsilon-wantL) > 1e-8*wantL {
					t.Errorf("%s q=%v n=%d: upper %.12g (literal %.12g), lower %.12g (literal %.12g)", base.Spec().Kind, q, n, u.Epsilon, wantU, l.Epsilon, wantL)
				}
			}
		}
	}
}

// For the Gaussian mechanism a single pair attains every order, so the ZW19
// lower bound is the exact subsampled RDP: it must equal MTZ19.
func TestZW19GaussianSandwich(t *testing.T) {
	for _, sigma := range []float64{0.8, 2, 5} {
		for _, q := range []float64{0.001, 0.01, 0.2} {
			for _, a := range []float64{2, 3, 7, 16, 32, 64, 2.5, 11.3} {
				m, err := SubsampledGaussian{Q: q, Sigma: sigma}.RDP(a)
				if err != nil {
					t.Fatal(err)
				}
				u, _ := zw19Upper(Gaussian{Sigma: sigma}, q, a)
				l, _ := zw19Lower(Gaussian{Sigma: sigma}, q, a)
				if u.Epsilon < m.Epsilon*(1-1e-9) || l.Epsilon > m.Epsilon*(1+1e-9) {
					t.Errorf("σ=%v q=%v α=%v: need lower %.10g ≤ MTZ19 %.10g ≤ upper %.10g", sigma, q, a, l.Epsilon, m.Epsilon, u.Epsilon)
				}
				if a == math.Trunc(a) && math.Abs(l.Epsilon-m.Epsilon) > 1e-9*m.Epsilon {
					t.Errorf("σ=%v q=%v α=%v: ZW19 lower %.12g should equal MTZ19 %.12g", sigma, q, a, l.Epsilon, m.Epsilon)
				}
			}
		}
	}
}

// The Laplace mechanism's RDP curve is attained by one pair (Lap(1,b) vs
// Lap(0,b)) at every order, so the ZW19 lower bound is the subsampled
// moment E_{μ₀}[(μ/μ₀)^n] = R_q^(n), computed independently by quadrature.
func TestZW19LaplaceLowerIsExactMoment(t *testing.T) {
	for _, b := range []float64{0.5, 1, 2} {
		for _, q := range []float64{0.01, 0.2} {
			for _, n := range []int{2, 3, 10, 40} {
				l, _ := zw19Lower(Laplace{B: b}, q, float64(n))
				lr, _ := LaplaceMixLogMoment(q, b, float64(n), 0)
				want := lr / float64(n-1)
				if math.Abs(l.Epsilon-want) > 1e-9*want {
					t.Errorf("b=%v q=%v n=%d: ZW19 lower %.12g, R_q %.12g", b, q, n, l.Epsilon, want)
				}
			}
		}
	}
}

func TestZW19OrderingAndMonotonicity(t *testing.T) {
	bases := []Mechanism{Gaussian{Sigma: 1}, Laplace{B: 1}, PTR{Sigma1: 1.1, Tau: 0.5, B: 1, Delta0: 1e-8}, PTR{Sigma1: 16, Tau: 0.5, B: 1, Delta0: 1e-8}}
	qs := []float64{1e-4, 0.001, 0.01, 0.05, 0.2, 0.5, 0.9, 0.999}
	for _, base := range bases {
		for _, a := range []float64{1.1, 1.5, 2, 2.5, 3, 7.7, 10, 32, 63, 128, 256} {
			prevU, prevL := 0.0, 0.0
			bv, _ := base.RDP(a)
			for _, q := range qs {
				u, err := zw19Upper(base, q, a)
				if err != nil {
					t.Fatal(err)
				}
				l, _ := zw19Lower(base, q, a)
				if l.Valid || !u.Valid {
					t.Errorf("validity flags wrong: lower %v upper %v", l.Valid, u.Valid)
				}
				if l.Epsilon > u.Epsilon*(1+1e-12) || u.Epsilon > bv.Epsilon*(1+1e-12) {
					t.Errorf("%s α=%v q=%v: want lower %.6g ≤ upper %.6g ≤ base %.6g", base.Spec().Kind, a, q, l.Epsilon, u.Epsilon, bv.Epsilon)
				}
				if u.Epsilon < prevU*(1-1e-12) || l.Epsilon < prevL*(1-1e-12) {
					t.Errorf("%s α=%v: not monotone in q at q=%v (upper %.6g < %.6g or lower %.6g < %.6g)", base.Spec().Kind, a, q, u.Epsilon, prevU, l.Epsilon, prevL)
				}
				prevU, prevL = u.Epsilon, l.Epsilon
			}
			// q → 1 recovers the base curve (lower bound at integer orders).
			if a == math.Trunc(a) {
				l, _ := zw19Lower(base, 1-1e-12, a)
				if math.Abs(l.Epsilon-bv.Epsilon) > 1e-6*bv.Epsilon {
					t.Errorf("%s α=%v: lower bound at q→1 %.10g, base %.10g", base.Spec().Kind, a, l.Epsilon, bv.Epsilon)
				}
			}
		}
	}
}

func TestZW19LargeOrdersFinite(t *testing.T) {
	u, err := zw19Upper(Laplace{B: 0.1}, 0.5, 256)
	if err != nil || math.IsInf(u.Epsilon, 0) || math.IsNaN(u.Epsilon) || u.Epsilon > 10 {
		t.Errorf("ε=%v err=%v: want finite ≤ 1/b", u.Epsilon, err)
	}
	if _, err := zw19Upper(Gaussian{Sigma: 1}, 0.1, 1e9); err == nil {
		t.Errorf("huge order accepted")
	}
}
