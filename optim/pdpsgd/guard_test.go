package pdpsgd

import (
	"math"
	"strings"
	"testing"
)

// TestNoiseGuard checks the noise ratio against hand computation on the
// rounds of the PDP Table 1 MNIST cells (seed 1, 25 epochs): loss_a's second
// round on PLD (35×) and on RDP (12×) are skipped at factor 4, loss_f's
// (2.0×, 1.5×) are trained, and factor 0 turns the guard off.
func TestNoiseGuard(t *testing.T) {
	q := 64.0 / 60000
	round := func(i int, sigma, participants float64) Round {
		return Round{Index: i, Sigma: sigma, Q: q, Participants: participants, Steps: 11719}
	}
	for _, tc := range []struct {
		name          string
		first, second Round
		ratio         float64 // second's ratio over first's, by hand
		skip          bool
	}{
		{"adaptive-pld", round(0, 0.7799334212584448, 41437.41256086896), round(1, 1.9884007767136975, 3000), (1.9884007767136975 / 3000) / (0.7799334212584448 / 41437.41256086896), true},
		{"adaptive-rdp", round(0, 1.08612060546875, 41437.41256086896), round(1, 0.97564697265625, 3000), (0.97564697265625 / 3000) / (1.08612060546875 / 41437.41256086896), true},
		{"fixed-pld", round(0, 0.9351, 57589), round(1, 1.0247, 31086), (1.0247 / 31086) / (0.9351 / 57589), false},
		{"fixed-rdp", round(0, 1.1758, 57589), round(1, 1.0756, 34443), (1.0756 / 34443) / (1.1758 / 57589), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r0, r1 := tc.first.NoiseRatio(), tc.second.NoiseRatio()
			if want := tc.first.Sigma / (q * tc.first.Participants); math.Abs(r0-want) > 1e-15*want {
				t.Errorf("first ratio %v, want %v", r0, want)
			}
			if got := r1 / r0; math.Abs(got-tc.ratio) > 1e-12*tc.ratio {
				t.Errorf("ratio of ratios %v, want %v", got, tc.ratio)
			}
			skip, why := NoiseGuard{Factor: 4}.Skip(tc.first, tc.second)
			if skip != tc.skip || skip != (why != "") || skip && !strings.Contains(why, "round 2") {
				t.Errorf("factor 4: skip %v (%q), want %v", skip, why, tc.skip)
			}
			if skip, _ := (NoiseGuard{}).Skip(tc.first, tc.second); skip {
				t.Error("factor 0 skipped a round")
			}
			// The boundary: a factor just above the measured ratio trains
			// the round, one just below skips it.
			if s, _ := (NoiseGuard{Factor: tc.ratio * (1 + 1e-9)}).Skip(tc.first, tc.second); s {
				t.Error("skipped at a factor above the ratio")
			}
			if s, _ := (NoiseGuard{Factor: tc.ratio * (1 - 1e-9)}).Skip(tc.first, tc.second); !s && tc.ratio >= 1 {
				t.Error("trained at a factor below the ratio")
			}
		})
	}
	// No charged first round: never skipped; no participants: +Inf ratio.
	if s, _ := (NoiseGuard{Factor: 1}).Skip(Round{}, round(0, 100, 1)); s {
		t.Error("the first round was skipped")
	}
	if r := (Round{Sigma: 1, Q: q}).NoiseRatio(); !math.IsInf(r, 1) {
		t.Errorf("no participants: ratio %v", r)
	}
	for _, f := range []float64{-1, 0.5, math.Inf(1), math.NaN()} {
		if (NoiseGuard{Factor: f}).Validate() == nil {
			t.Errorf("factor %v accepted", f)
		}
	}
	for _, f := range []float64{0, 1, 4} {
		if err := (NoiseGuard{Factor: f}).Validate(); err != nil {
			t.Errorf("factor %v: %v", f, err)
		}
	}
}
