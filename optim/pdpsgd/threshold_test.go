package pdpsgd

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

// bruteWastes is an independent per-example evaluation of Eq. 6's wastes.
func bruteWastes(eps []float64, tau float64) (u, s float64) {
	for _, e := range eps {
		if e < tau {
			u += e * (1 - (math.Exp(e)-1)/(math.Exp(tau)-1))
		} else if e > tau {
			s += e - tau
		}
	}
	return
}

func expand(values, counts []float64) []float64 {
	var out []float64
	for j, v := range values {
		for range int(counts[j]) {
			out = append(out, v)
		}
	}
	return out
}

// TestThresholdMatchesBruteForce compares the exact minimiser with a dense
// grid over the whole admissible range (for loss_a: between the second
// smallest and second largest budget, where both wastes are positive).
func TestThresholdMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	losses := []Loss{{W1: 0.7, W2: 0.3}, {W1: 0.2, W2: 0.8}, {W1: 1, W2: 0}, {W1: 0, W2: 1}, {Adaptive: true}}
	for trial := 0; trial < 30; trial++ {
		m := 3 + r.IntN(12)
		values, counts := make([]float64, m), make([]float64, m)
		for j := range values {
			values[j] = 0.1 + 2*r.Float64()
			counts[j] = float64(1 + r.IntN(50))
		}
		if trial%3 == 0 { // the paper's 20 groups with random counts
			m = 20
			values, counts = make([]float64, m), make([]float64, m)
			for j := range values {
				values[j] = 0.5 + float64(j)*0.5/19
				counts[j] = float64(1 + r.IntN(100))
			}
		}
		eps := expand(values, counts)
		sorted := append([]float64(nil), values...)
		sort.Float64s(sorted)
		for _, l := range losses {
			tau, loss, err := l.Threshold(values, counts)
			if err != nil {
				t.Fatal(err)
			}
			u, s := bruteWastes(eps, tau)
			if want := l.combine(u, s); math.Abs(want-loss) > 1e-9*math.Max(1, want) {
				t.Fatalf("%+v: reported loss %v at τ = %v, brute force %v", l, loss, tau, want)
			}
			lo, hi := sorted[0], sorted[len(sorted)-1]
			if l.Adaptive {
				lo, hi = sorted[1], sorted[len(sorted)-2]
				if !(tau > sorted[0] && tau < sorted[len(sorted)-1]) {
					t.Fatalf("loss_a picked τ = %v at an end of [%v, %v]", tau, sorted[0], sorted[len(sorted)-1])
				}
			}
			const grid = 4000
			for g := 0; g <= grid; g++ {
				x := lo + (hi-lo)*float64(g)/grid
				u, s := bruteWastes(eps, x)
				if v := l.combine(u, s); v < loss-1e-9*math.Max(1, loss) {
					t.Fatalf("trial %d %+v: grid τ = %v has loss %v < minimiser's %v at τ = %v", trial, l, x, v, loss, tau)
				}
			}
		}
	}
}

// TestAdaptiveLossDegenerateEnds documents why loss_a excludes the ends.
func TestAdaptiveLossDegenerateEnds(t *testing.T) {
	values := []float64{0.5, 0.6, 0.8, 1.0}
	counts := []float64{10, 10, 10, 10}
	a := Loss{Adaptive: true}
	for _, tau := range []float64{0.5, 1.0} {
		if v := a.Value(values, counts, tau); v != 0 {
			t.Errorf("loss_a(%v) = %v, want 0 (one waste is 0)", tau, v)
		}
	}
	tau, v, err := a.Threshold(values, counts)
	if err != nil || !(v > 0) || (tau != 0.6 && tau != 0.8) {
		t.Errorf("loss_a minimiser τ = %v, loss %v, err %v: want an interior budget with positive loss", tau, v, err)
	}
	// Two distinct budgets: no interior τ, max Φ is used.
	if tau, _, _ := a.Threshold([]float64{0.5, 1}, []float64{3, 3}); tau != 1 {
		t.Errorf("two budgets: τ = %v, want max Φ = 1", tau)
	}
	if _, _, err := (Loss{W1: -1, W2: 1}).Threshold(values, counts); err == nil {
		t.Error("negative weight accepted")
	}
	if _, _, err := (Loss{W1: 1}).Threshold(values, counts[:2]); err == nil {
		t.Error("mismatched counts accepted")
	}
}
