package privacyfigs

import (
	"math"
	"testing"
)

// hockeyStick computes δ(ε) = ∫ (N(0,σ²) − e^ε N(1,σ²))₊ dx by composite
// Simpson quadrature over [−1 − 40σ, ½ − εσ²] (the integrand is positive
// exactly left of ½ − εσ²), independently of gaussianProfile's closed form.
func hockeyStick(sigma, eps float64) float64 {
	pdf := func(x, m float64) float64 {
		return math.Exp(-(x-m)*(x-m)/(2*sigma*sigma)) / (sigma * math.Sqrt(2*math.Pi))
	}
	f := func(x float64) float64 { return math.Max(0, pdf(x, 0)-math.Exp(eps)*pdf(x, 1)) }
	a, b := -1-40*sigma, 0.5-eps*sigma*sigma
	const n = 400000
	hh := (b - a) / n
	sum := f(a) + f(b)
	for i := 1; i < n; i++ {
		w := 2.0
		if i%2 == 1 {
			w = 4
		}
		sum += w * f(a+float64(i)*hh)
	}
	return sum * hh / 3
}

func TestAnalyticGaussian(t *testing.T) {
	for _, sigma := range []float64{0.8, 2, 6, 10, 20} {
		for _, delta := range []float64{1e-3, 1e-5, 9.99e-6} {
			eps, err := analyticGaussianEpsilon(sigma, delta)
			if err != nil {
				t.Fatal(err)
			}
			// At ε the exact profile (by quadrature) equals δ.
			if q := hockeyStick(sigma, eps); math.Abs(q-delta) > 1e-6*delta {
				t.Errorf("σ=%v δ=%v: ε=%v, quadrature δ(ε) = %v", sigma, delta, eps, q)
			}
			// Never above the classic bound where that is proven (ε < 1).
			if c := math.Sqrt(2*math.Log(1.25/delta)) / sigma; c < 1 && !(eps < c) {
				t.Errorf("σ=%v δ=%v: analytic ε %v not below classic %v", sigma, delta, eps, c)
			}
		}
	}
	// δ(0) = 2Φ(1/(2σ)) − 1 is already below δ for huge σ: ε = 0.
	if eps, err := analyticGaussianEpsilon(1e7, 1e-5); err != nil || eps != 0 {
		t.Errorf("σ=1e7: ε=%v, %v; want 0", eps, err)
	}
	for _, c := range [][2]float64{{0, 1e-5}, {-1, 1e-5}, {math.Inf(1), 1e-5}, {1, 0}, {1, 1}, {1, math.NaN()}} {
		if _, err := analyticGaussianEpsilon(c[0], c[1]); err == nil {
			t.Errorf("σ=%v δ=%v accepted", c[0], c[1])
		}
	}
	for _, c := range [][3]float64{{0, 1e-8, 1e-5}, {1, 0, 1e-5}, {1, 0.6, 1e-5}, {1, 0.5, 0.5}} {
		if _, err := ptrDirectAnalytic(10, c[0], c[1], c[2]); err == nil {
			t.Errorf("b=%v δ0=%v δ=%v accepted", c[0], c[1], c[2])
		}
	}
}
