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

func newCoordTrimmedMean(cfg Config) (Aggregator, error) {
	if err := nonPrivateOnly(cfg, "the sum-scale coordinate-wise trimmed mean has L2 sensitivity growing with the batch size; use tsum/ptr-tsum"); err != nil {
		return nil, err
	}
	if !(cfg.TrimFraction >= 0 && cfg.TrimFraction < 0.5) {
		return nil, fmt.Errorf("trim fraction β must be in [0, 0.5), got %v", cfg.TrimFraction)
	}
	return &CoordTrimmedMean{clipNorm: clipNorm(cfg.ClipNorm), beta: cfg.TrimFraction}, nil
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
