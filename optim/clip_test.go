package optim

import (
	"fmt"
	"github.com/privtrain/privtrain/aggregate"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
)

func TestClipRows(t *testing.T) {
	// Rows with norms 5, 0.5, 0 and 13; R = 1.
	g := []float32{3, 4, 0, 0.3, 0.4, 0, 0, 0, 0, 5, 12, 0}
	want := [][]float64{{0.6, 0.8, 0}, {0.3, 0.4, 0}, {0, 0, 0}, {5.0 / 13, 12.0 / 13, 0}}
	wantNorms := []float64{1, 0.5, 0, 1}
	for _, workers := range []int{1, 2, 3, 8} {
		h := append([]float32(nil), g...)
		norms := make([]float64, 4)
		if err := clipRows(h, 4, 3, 1, nil, norms, workers); err != nil {
			t.Fatal(err)
		}
		for i := range want {
			for j := range want[i] {
				if d := math.Abs(float64(h[i*3+j]) - want[i][j]); d > 1e-6 {
					t.Errorf("workers %d: row %d col %d = %v, want %v", workers, i, j, h[i*3+j], want[i][j])
				}
			}
			if math.Abs(norms[i]-wantNorms[i]) > 1e-6 {
				t.Errorf("workers %d: norm %d = %v, want %v", workers, i, norms[i], wantNorms[i])
			}
		}
	}
}

func TestClipRowsNoClipAndNonFinite(t *testing.T) {
	g := []float32{3, 4}
	norms := make([]float64, 1)
	if err := clipRows(g, 1, 2, 0, nil, norms, 1); err != nil || g[0] != 3 || norms[0] != 5 {
		t.Fatalf("R = 0 must not clip: got %v, norm %v, err %v", g, norms[0], err)
	}
	for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(1))} {
		g := []float32{1, 2, 3, bad}
		err := clipRows(g, 2, 2, 1, nil, make([]float64, 2), 2)
		if err == nil || !strings.Contains(err.Error(), "row 1") {
			t.Errorf("gradient %v: want an error naming row 1, got %v", bad, err)
		}
	}
}

func TestTrimController(t *testing.T) {
	c := &TrimController{Rate: 0.02, Batch: 256}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	// round(0.02·256) = 5; F stays in [0, 127].
	tests := []struct {
		f      int
		branch aggregate.PTROutcome
		rev    bool
		want   int
	}{
		{64, aggregate.PTRFailed, false, 69}, {64, aggregate.PTRPassed, false, 59}, {3, aggregate.PTRPassed, false, 0}, {125, aggregate.PTRFailed, false, 127},
		{64, aggregate.PTRFailed, true, 59}, {64, aggregate.PTRPassed, true, 69},
	}
	for _, tc := range tests {
		c.IncreaseOnPass = tc.rev
		if got := c.Next(tc.f, tc.branch); got != tc.want {
			t.Errorf("Next(%d, %q, reversed=%v) = %d, want %d", tc.f, tc.branch, tc.rev, got, tc.want)
		}
	}
	for _, bad := range []TrimController{{Rate: 0, Batch: 10}, {Rate: 0.6, Batch: 10}, {Rate: 0.1, Batch: 0}} {
		if bad.Validate() == nil {
			t.Errorf("%+v: want a validation error", bad)
		}
	}
}

func TestSeedsAreReproducibleAndDistinct(t *testing.T) {
	if DeriveSeed(7, "noise") != DeriveSeed(7, "noise") {
		t.Fatal("DeriveSeed is not deterministic")
	}
	if DeriveSeed(7, "noise") == DeriveSeed(7, "sampler") || DeriveSeed(7, "noise") == DeriveSeed(8, "noise") {
		t.Fatal("DeriveSeed collides across purposes or seeds")
	}
	a, b := StepRNG(3, 10), StepRNG(3, 10)
	for i := 0; i < 5; i++ {
		if a.Uint64() != b.Uint64() {
			t.Fatal("StepRNG is not deterministic")
		}
	}
	if StepRNG(3, 10).Uint64() == StepRNG(3, 11).Uint64() {
		t.Fatal("consecutive steps share a stream")
	}
}

// TestForRows checks the shared worker split: every row is visited exactly
// once for any worker count (the caller's goroutine alone, or several), and
// the error names the lowest bad row even when a later range finds its bad
// row first.
func TestForRows(t *testing.T) {
	for _, m := range []int{0, 1, 7, 64} {
		for _, workers := range []int{0, 1, 2, 3, 100} {
			seen := make([]int32, m)
			if err := forRows(m, workers, func(i int) bool { atomic.AddInt32(&seen[i], 1); return true }); err != nil {
				t.Fatalf("m=%d workers=%d: %v", m, workers, err)
			}
			for i, c := range seen {
				if c != 1 {
					t.Fatalf("m=%d workers=%d: row %d visited %d times", m, workers, i, c)
				}
			}
			for _, bads := range [][]int{{m - 1}, {m / 2, m - 1}, {0, m - 1}} {
				if m == 0 {
					continue
				}
				isBad := func(i int) bool { return slices.Contains(bads, i) }
				err := forRows(m, workers, func(i int) bool { return !isBad(i) })
				want := fmt.Sprintf("row %d ", slices.Min(bads))
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("m=%d workers=%d bad rows %v: got %v, want an error naming %q", m, workers, bads, err, want)
				}
			}
		}
	}
}
