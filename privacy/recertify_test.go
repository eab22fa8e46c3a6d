package privacy

import (
	"math"
	"testing"
)

// TestWithinRecertification: a recomputed ε at or below the recorded one,
// or above it by at most RecertificationTolerance relative, is within; 2e-3
// above, NaN or ±Inf is not.
func TestWithinRecertification(t *testing.T) {
	for _, c := range []struct {
		recorded, recomputed float64
		want                 bool
	}{
		{1, 1, true},
		{1, 0.5, true},
		{2.999433, 2.999524, true}, // 3.0e-5: the PLD move of docs/pld-evidence.md §9
		{1, 1 + 5e-4, true},
		{1, 1 + 1e-3, true},
		{1, 1 + 2e-3, false},
		{1, 1.01, false},
		{1, math.NaN(), false},
		{math.NaN(), 1, false},
		{1, math.Inf(1), false},
		{math.Inf(1), 1, false},
	} {
		if got := WithinRecertification(c.recorded, c.recomputed); got != c.want {
			t.Errorf("WithinRecertification(%v, %v) = %v, want %v", c.recorded, c.recomputed, got, c.want)
		}
	}
}
