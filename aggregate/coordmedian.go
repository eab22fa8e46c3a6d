package aggregate

import (
	"fmt"
	"math/rand/v2"
)

// CoordMedian is the coordinate-wise median, released on the sum scale:
// out[j] = m · median(g_1[j], …, g_m[j]) (the mean of the two middle values
// when m is even; 0 for an empty batch). Cost O(m·P) expected.
//
// Sensitivity: none useful. With ‖g_i‖ ≤ R, adding one gradient can move the
// median of every coordinate to a neighbouring order statistic; e.g. with k
// rows at +R/√P·1, k at −R/√P·1 and one at 0, adding a +R/√P·1 row moves the
// median vector by R/2 in L2, so the sum-scale release moves by ≈ mR/2 —
// m/2 times SUM's sensitivity R. Noise calibrated to it would swamp the
// signal (as Wang et al. note for the median in high dimension), so the rule
// is offered only non-privately: σ must be 0.
type CoordMedian struct {
	clipNorm
	buf []float32
}

// CoordMedianOptions are coord-median's settings (Config.Sigma, ClipNorm); the
// rule is non-private, so σ must be 0.
type CoordMedianOptions struct {
	// Sigma must be 0 (see CoordMedian's sensitivity).
	Sigma float64
	// ClipNorm is R, the L2 bound of every gradient (0: not clipped).
	ClipNorm float64
}

func coordMedianOptions(c Config) CoordMedianOptions {
	return CoordMedianOptions{Sigma: c.Sigma, ClipNorm: c.ClipNorm}
}

// Validate checks R and σ = 0.
func (o CoordMedianOptions) Validate() error {
	if err := checkNoise(o.Sigma, o.ClipNorm); err != nil {
		return err
	}
	return nonPrivateOnly(o.Sigma, "the sum-scale coordinate-wise median has L2 sensitivity growing with the batch size (≈ mR/2)")
}

// NewCoordMedian returns the coord-median rule for validated options o.
func NewCoordMedian(o CoordMedianOptions) (*CoordMedian, error) {
	return &CoordMedian{clipNorm: clipNorm(o.ClipNorm)}, nil
}

// Name returns "coord-median".
func (a *CoordMedian) Name() string { return "coord-median" }

// Aggregate writes m times the coordinate-wise median into out.
func (a *CoordMedian) Aggregate(g Grads, _ *rand.Rand, out []float32) (Report, error) {
	if err := checkGrads(g, out, false, 0); err != nil {
		return Report{}, fmt.Errorf("coord-median: %w", err)
	}
	m := g.M
	if m == 0 {
		clear(out)
		return Report{}, nil
	}
	a.buf = forColumns(g, a.buf, func(j int, col []float32) {
		h := m / 2
		nth(col, h)
		med := float64(col[h])
		if m%2 == 0 {
			lo := col[0]
			for _, v := range col[1:h] {
				lo = max(lo, v)
			}
			med = (med + float64(lo)) / 2
		}
		out[j] = float32(float64(m) * med)
	})
	if err := checkFinite(out); err != nil {
		return Report{}, fmt.Errorf("coord-median: %w", err)
	}
	return Report{}, nil
}
