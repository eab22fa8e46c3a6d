package privacy

import (
	"math"
	"testing"
)

func TestStrongCompositionClosedForm(t *testing.T) {
	// Hand-computed (Python, float64) values of KOV15 Theorem 3.4.
	for _, c := range []struct {
		eps   float64
		k     int
		slack float64
		want  float64
	}{
		{0.1, 100, 1e-5, 5.2981096617668815},
		{0.01, 10000, 1e-6, 5.756517603131925},
		{1, 10, 1e-5, 10},
		{0.5, 1000, 1e-8, 218.42984944561618},
	} {
		if got := math.Min(float64(c.k)*c.eps, kov15Closed(c.eps, float64(c.k), c.slack)); math.Abs(got-c.want) > 1e-12*c.want {
			t.Errorf("%+v: %v", c, got)
		}
	}
}

// rrDelta is the exact δ(ε) of the k-fold composition of ε₀-randomized
// response — the worst case of KOV15 — by summing over the number of
// "flipped" answers: Σ_l C(k,l) max(0, p^{k−l}(1−p)^l − e^ε (1−p)^{k−l} p^l).
func rrDelta(eps0 float64, k int, eps float64) float64 {
	p := math.Exp(eps0) / (1 + math.Exp(eps0))
	var d float64
	for l := 0; l <= k; l++ {
		lc, _ := math.Lgamma(float64(k + 1))
		l1, _ := math.Lgamma(float64(l + 1))
		l2, _ := math.Lgamma(float64(k - l + 1))
		c := math.Exp(lc - l1 - l2)
		P := math.Pow(p, float64(k-l)) * math.Pow(1-p, float64(l))
		Q := math.Pow(1-p, float64(k-l)) * math.Pow(p, float64(l))
		d += c * math.Max(0, P-math.Exp(eps)*Q)
	}
	return d
}

func TestStrongCompositionOptimalVsRandomizedResponse(t *testing.T) {
	for _, eps0 := range []float64{0.05, 0.3, 1} {
		for _, k := range []int{1, 2, 5, 20, 101} {
			for _, slack := range []float64{1e-2, 1e-4, 1e-6} {
				// Brute force: smallest (k−2i)ε₀ whose exact RR δ ≤ slack.
				want := float64(k) * eps0
				for i := 1; i <= k/2; i++ {
					e := float64(k-2*i) * eps0
					if rrDelta(eps0, k, e) > slack*(1+1e-9) {
						break
					}
					want = e
				}
				got := kov15Optimal(eps0, k, slack)
				if math.Abs(got-want) > 1e-9 {
					t.Errorf("ε₀=%v k=%d δ'=%v: KOV15 optimal %v, randomized-response brute force %v", eps0, k, slack, got, want)
				}
			}
		}
	}
}

func TestStrongComposition(t *testing.T) {
	for _, eps := range []float64{0.01, 0.1, 0.5, 1, 2} {
		for _, k := range []int{1, 2, 10, 100, 1000, 100000} {
			for _, delta := range []float64{0, 1e-8} {
				const slack = 1e-5
				e, d, bound, err := StrongCompositionBound(eps, delta, k, slack)
				if err != nil {
					t.Fatal(err)
				}
				kf := float64(k)
				drv := math.Sqrt(2*kf*math.Log(1/slack))*eps + kf*eps*math.Expm1(eps)
				if e > kf*eps || e > drv || e > kov15Closed(eps, kf, slack)+1e-12 || e < 0 {
					t.Errorf("ε=%v k=%d: %v (%s) vs basic %v, DRV %v", eps, k, e, bound, kf*eps, drv)
				}
				wantD := 1 - math.Pow(1-delta, kf)*(1-slack)
				if math.Abs(d-wantD) > 1e-8*wantD || d > kf*delta+slack+1e-15 {
					t.Errorf("ε=%v k=%d δ=%v: δ_total %v, want %v", eps, k, delta, d, wantD)
				}
			}
		}
	}
	for _, c := range [][4]float64{{-1, 0, 1, 1e-5}, {1, 1, 1, 1e-5}, {1, 0, 0, 1e-5}, {1, 0, 1, 0}, {math.NaN(), 0, 1, 1e-5}} {
		if _, _, err := StrongComposition(c[0], c[1], int(c[2]), c[3]); err == nil {
			t.Errorf("%v accepted", c)
		}
	}
}
