package aggregate

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/privtrain/privtrain/privacy"
)

func TestRGMSumNoiseMoments(t *testing.T) {
	// Two gradients summing to S = (3, −4, 0, 12): ‖S‖ = 13.
	g := Grads{G: []float32{1, -1, 0, 5, 2, -3, 0, 7}, Norms: []float64{math.Sqrt(27), math.Sqrt(62)}, M: 2, P: 4}
	want := []float64{3, -4, 0, 12}
	for _, tc := range []struct{ gamma, sigma float64 }{
		{0.01, 0.5}, // variance 1.69 + 0.25
		{1e-4, 2},   // variance 0.0169 + 4
		{0.05, 0},   // purely relative: 8.45
	} {
		m := privacy.RGM{Eta: 0.01, Gamma: tc.gamma, Sigma: tc.sigma, Dim: 4}
		a, err := NewRGMSum(m)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(1, 2))
		out := make([]float32, 4)
		const draws = 40000
		var sum, sq [4]float64
		for k := 0; k < draws; k++ {
			rep, err := a.Aggregate(g, rng, out)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Mechanism != m {
				t.Fatalf("report mechanism %+v, want %+v", rep.Mechanism, m)
			}
			for j, v := range out {
				d := float64(v) - want[j]
				sum[j] += d
				sq[j] += d * d
			}
		}
		v := tc.gamma*169 + tc.sigma*tc.sigma
		for j := range want {
			mean := sum[j] / draws
			variance := sq[j] / draws
			// 5 standard errors: se(mean) = √(v/n), se(var) ≈ v√(2/n).
			if math.Abs(mean) > 5*math.Sqrt(v/draws) {
				t.Errorf("γ=%v σ=%v coord %d: noise mean %v", tc.gamma, tc.sigma, j, mean)
			}
			if math.Abs(variance-v) > 5*v*math.Sqrt(2.0/draws) {
				t.Errorf("γ=%v σ=%v coord %d: noise variance %v, want %v", tc.gamma, tc.sigma, j, variance, v)
			}
		}
	}
}

func TestRGMSumErrorsAndDeterminism(t *testing.T) {
	m := privacy.RGM{Eta: 0.01, Gamma: 0.01, Sigma: 1, Dim: 3}
	if _, err := NewRGMSum(privacy.RGM{Eta: 0, Gamma: 1, Dim: 3}); err == nil {
		t.Error("invalid mechanism accepted")
	}
	a, err := NewRGMSum(m)
	if err != nil {
		t.Fatal(err)
	}
	if a.Name() != "rgm-sum" {
		t.Errorf("name %q", a.Name())
	}
	g := Grads{G: []float32{1, 2, 3}, Norms: []float64{math.Sqrt(14)}, M: 1, P: 3}
	if _, err := a.Aggregate(g, nil, make([]float32, 3)); err == nil {
		t.Error("nil rng accepted")
	}
	g4 := Grads{G: []float32{1, 2, 3, 4}, Norms: []float64{math.Sqrt(30)}, M: 1, P: 4}
	if _, err := a.Aggregate(g4, rand.New(rand.NewPCG(1, 1)), make([]float32, 4)); err == nil {
		t.Error("dimension mismatch accepted")
	}
	bad := Grads{G: []float32{float32(math.Inf(1)), 0, 0}, Norms: []float64{1}, M: 1, P: 3}
	if _, err := a.Aggregate(bad, rand.New(rand.NewPCG(1, 1)), make([]float32, 3)); err == nil {
		t.Error("infinite gradient accepted")
	}
	o1, o2 := make([]float32, 3), make([]float32, 3)
	a.Aggregate(g, rand.New(rand.NewPCG(7, 8)), o1)
	a.Aggregate(g, rand.New(rand.NewPCG(7, 8)), o2)
	for j := range o1 {
		if o1[j] != o2[j] {
			t.Fatalf("same seed, different releases: %v vs %v", o1, o2)
		}
	}
}
