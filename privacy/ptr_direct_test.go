package privacy

import (
	"math"
	"testing"
)

func TestPTRDirect(t *testing.T) {
	for _, tc := range []struct {
		sigma1, b, delta0, delta float64
		eps, deltaTotal          float64 // computed independently (Python math): 1/b + sqrt(2 ln(1.25/δ))/σ1
	}{
		{10, 1, 1e-8, 1e-5, 1.484480526260539, 1.001e-5},
		{6, 2, 1e-6, 1e-6, 0.5 + 5.298802526850474/6, 2e-6},
		{100, 0.5, 0.5, 0.25, 2 + 0.017941225779941016, 0.75},
	} {
		eps, dt, err := PTRDirect(tc.sigma1, tc.b, tc.delta0, tc.delta)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(eps-tc.eps) > 1e-12 || math.Abs(dt-tc.deltaTotal) > 1e-18 {
			t.Errorf("%+v: got (%.10g, %g)", tc, eps, dt)
		}
	}
	for _, bad := range [][4]float64{
		{4, 1, 1e-8, 1e-5},  // ε_N = 1.21 ≥ 1
		{0, 1, 1e-8, 1e-5},  // σ1
		{10, 0, 1e-8, 1e-5}, // b
		{10, 1, 0, 1e-5},    // δ0
		{10, 1, 0.6, 1e-5},  // δ0 > 1/2
		{10, 1, 1e-8, 0},    // δ
		{10, 1, 1e-8, 1},    // δ
		{10, 1, 0.5, 0.5},   // δ0 + δ
		{math.NaN(), 1, 1e-8, 1e-5},
	} {
		if _, _, err := PTRDirect(bad[0], bad[1], bad[2], bad[3]); err == nil {
			t.Errorf("PTRDirect%v: no error", bad)
		}
	}
}
