package aggregate

import (
	"fmt"
	"math/rand/v2"
)

// CoordTrimmedMean is the coordinate-wise trimmed mean with trim fraction β
// (Config.TrimFraction, 0 ≤ β < 0.5), released on the sum scale: with
// k = ⌊β·m⌋, out[j] = m/(m−2k) · Σ of the middle m−2k values of coordinate j
// (0 for an empty batch). Cost O(m·P) expected. Report.Trimmed is 2k.
//
// Sensitivity: as for CoordMedian, one added gradient can shift every
// coordinate's window of kept values, and the sum-scale release then moves
// by an amount growing with m (for β near ½ it behaves like the median,
// ≈ mR/2). The rule is therefore offered only non-privately: σ must be 0.
// For a private trimmed aggregate use tsum or ptr-tsum (norm-based trimming,
// sensitivity R).
type CoordTrimmedMean struct {
	clipNorm
	beta float64
	buf  []float32
}

// CoordTrimmedMeanOptions are coord-trimmed-mean's settings (Config.Sigma, ClipNorm, TrimFraction); the
// rule is non-private, so σ must be 0.
type CoordTrimmedMeanOptions struct {
	// Sigma must be 0 (see CoordTrimmedMean's sensitivity).
	Sigma float64
	// ClipNorm is R, the L2 bound of every gradient (0: not clipped).
	ClipNorm float64
	// TrimFraction is β, 0 ≤ β < 0.5.
	TrimFraction float64
}

func coordTrimmedMeanOptions(c Config) CoordTrimmedMeanOptions {
	return CoordTrimmedMeanOptions{Sigma: c.Sigma, ClipNorm: c.ClipNorm, TrimFraction: c.TrimFraction}
}

// Validate checks R, σ = 0 and 0 ≤ β < 0.5.
func (o CoordTrimmedMeanOptions) Validate() error {
	if err := checkNoise(o.Sigma, o.ClipNorm); err != nil {
		return err
	}
	if err := nonPrivateOnly(o.Sigma, "the sum-scale coordinate-wise trimmed mean has L2 sensitivity growing with the batch size; use tsum/ptr-tsum"); err != nil {
		return err
	}
	if !(o.TrimFraction >= 0 && o.TrimFraction < 0.5) {
		return fmt.Errorf("trim fraction β must be in [0, 0.5), got %v", o.TrimFraction)
	}
	return nil
}

// NewCoordTrimmedMean returns the coord-trimmed-mean rule for validated
// options o.
func NewCoordTrimmedMean(o CoordTrimmedMeanOptions) (*CoordTrimmedMean, error) {
	return &CoordTrimmedMean{clipNorm: clipNorm(o.ClipNorm), beta: o.TrimFraction}, nil
}

// Name returns "coord-trimmed-mean".
func (a *CoordTrimmedMean) Name() string { return "coord-trimmed-mean" }

// Aggregate writes m times the coordinate-wise trimmed mean into out.
func (a *CoordTrimmedMean) Aggregate(g Grads, _ *rand.Rand, out []float32) (Report, error) {
	if err := checkGrads(g, out, false, 0); err != nil {
		return Report{}, fmt.Errorf("coord-trimmed-mean: %w", err)
	}
	m := g.M
	if m == 0 {
		clear(out)
		return Report{}, nil
	}
	k := int(a.beta * float64(m))
	kept := m - 2*k
	scale := float64(m) / float64(kept)
	a.buf = forColumns(g, a.buf, func(j int, col []float32) {
		if k > 0 {
			nth(col, k)          // col[:k] are the k smallest
			nth(col[k:], kept-1) // col[k:k+kept] the next kept smallest
		}
		s := 0.0
		for _, v := range col[k : k+kept] {
			s += float64(v)
		}
		out[j] = float32(scale * s)
	})
	if err := checkFinite(out); err != nil {
		return Report{}, fmt.Errorf("coord-trimmed-mean: %w", err)
	}
	return Report{Trimmed: 2 * k}, nil
}
