package privacyfigs

import (
	"math"
	"testing"
	"time"
)

// TestFigurePTRPLD checks the PTR accounting figure's values at the
// default job's setting: the PLD bound is below both RDP bounds at every
// step count (docs/ptr-pld.md, check (3)), every curve is non-decreasing in
// k, the reported value is min(PLD, white-box RDP), and the 8,126 and 4,136
// steps to ε = 3 of docs/ptr-pld.md fall on the right side of ε = 3.
func TestFigurePTRPLD(t *testing.T) {
	s := DefaultSettings()
	s.PLDSteps = []int{1, 10, 100, 1000, 4136, 4137, 8126, 8127}
	start := time.Now()
	tb, err := figurePTRPLD(s, 1.1, "ptr_pld_test")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d rows in %v", len(tb.rows), time.Since(start))
	ks, white, black, pld, rep := tb.col("steps"), tb.col(colCompWhite), tb.col(colCompBlack), tb.col(colPLD), tb.col(colPLDReported)
	for i := range ks {
		t.Logf("k=%5.0f white=%.4f black=%.4f pld=%.4f reported=%.4f", ks[i], white[i], black[i], pld[i], rep[i])
		if !(pld[i] <= white[i] && pld[i] <= black[i]) {
			t.Errorf("k=%v: PLD %v above RDP (white %v, black %v)", ks[i], pld[i], white[i], black[i])
		}
		if want := math.Min(pld[i], white[i]); math.Abs(rep[i]-want) > 1e-12 {
			t.Errorf("k=%v: reported %v, want min(PLD, RDP) = %v", ks[i], rep[i], want)
		}
		if i > 0 && (pld[i] < pld[i-1] || white[i] < white[i-1] || black[i] < black[i-1]) {
			t.Errorf("k=%v: a curve decreased", ks[i])
		}
	}
	at := func(k float64, col []float64) float64 {
		for i := range ks {
			if ks[i] == k {
				return col[i]
			}
		}
		t.Fatalf("k=%v not on the grid", k)
		return 0
	}
	// σ₁ = 1.1 < 4: Theorem 4.4 is proven nowhere, so white-box = black-box.
	if w, b := at(1000, white), at(1000, black); w != b {
		t.Errorf("σ₁ = 1.1: white-box %v ≠ black-box %v", w, b)
	}
	if !(at(4136, white) <= 3 && at(4137, white) > 3) {
		t.Errorf("RDP crosses ε = 3 elsewhere than after 4,136 steps: %v, %v", at(4136, white), at(4137, white))
	}
	if !(at(8126, pld) <= 3 && at(8127, pld) > 3) {
		t.Errorf("PLD crosses ε = 3 elsewhere than after 8,126 steps: %v, %v", at(8126, pld), at(8127, pld))
	}
}
