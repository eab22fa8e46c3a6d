package privacy

import (
	"math"
	"testing"
)

func TestPersonalizedEpsilons(t *testing.T) {
	orders := []float64{2, 4, 8}
	rdp := [][]float64{{0.1, 0.2, 0.4}, {1, 2, 4}, {math.Inf(1), 0.5, 1}}
	delta := 1e-5
	eps, best, err := PersonalizedEpsilons(rdp, orders, delta, ConversionMironov)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rdp {
		// Theorem 4.8 by hand: min over α of ρ_i + log(1/δ)/(α−1).
		want, wantO := math.Inf(1), 0.0
		for j, a := range orders {
			if e := r[j] + math.Log(1/delta)/(a-1); e < want {
				want, wantO = e, a
			}
		}
		if math.Abs(eps[i]-want) > 1e-12 || best[i] != wantO {
			t.Errorf("example %d: ε=%v at α=%v, want %v at %v", i, eps[i], best[i], want, wantO)
		}
	}
	// Examples with smaller individual RDP get smaller ε; BBG is tighter.
	bbg, _, _ := PersonalizedEpsilons(rdp, orders, delta, ConversionBBG)
	for i := range rdp {
		if bbg[i] > eps[i] {
			t.Errorf("example %d: BBG %v > Mironov %v", i, bbg[i], eps[i])
		}
	}
	if !(eps[0] < eps[2] && eps[2] < eps[1]) {
		t.Errorf("order of ε not that of the curves: %v", eps)
	}
	if _, _, err := PersonalizedEpsilons([][]float64{{0.1}}, orders, delta, ConversionBBG); err == nil {
		t.Error("curve of the wrong length accepted")
	}
	if _, _, err := PersonalizedEpsilons(rdp, orders, 0, ConversionBBG); err == nil {
		t.Error("δ = 0 accepted")
	}
}
