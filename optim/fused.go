package optim

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/privtrain/privtrain/aggregate"
	"github.com/privtrain/privtrain/internal/vec"
)

// clipFactors computes the clip factor of each row of g (m × p) without
// changing g: 1 when the row's computed norm n̂ satisfies n̂(1+e) ≤ r (e =
// normErr(p)) or r ≤ 0, else fl32(r(1−κ)/n̂) — the factor of clipRow's
// first round (κ = clipMargin; see clipMargin for why fl32(s·g) then has
// norm ≤ r). sq is as in clipRows (nil: computed here). It returns an error
// naming the first example whose gradient is NaN or infinite.
//
// The factors feed aggregate.ScaledAggregator, which scales, sums and
// measures every clipped row in one pass and verifies the bound on the
// measured norms before releasing anything.
func clipFactors(g []float32, m, p int, r float64, sq []float64, scale []float32, workers int) error {
	e, err := clipSetup(m, p, r, sq)
	if err != nil {
		return err
	}
	if len(scale) != m {
		return fmt.Errorf("clipping %d rows with %d clip factors", m, len(scale))
	}
	if sq != nil {
		workers = 1 // nothing to compute but a square root per row
	}
	return forRows(m, workers, func(i int) bool {
		var ss float64
		if sq != nil {
			ss = sq[i]
		} else {
			ss = vec.SumSquares(g[i*p : (i+1)*p])
		}
		n := math.Sqrt(ss)
		if math.IsNaN(n) || math.IsInf(n, 0) {
			return false
		}
		scale[i] = clipFactor(n, r, e)
		return true
	})
}

// clipFactor is the factor of clipRow's first round for a row of computed
// norm n: 1 when n(1+e) ≤ r or r ≤ 0, else fl32(r(1−κ)/n) (κ = clipMargin).
func clipFactor(n, r, e float64) float32 {
	if r > 0 && n*(1+e) > r {
		return float32(r * (1 - clipMargin) / n)
	}
	return 1
}

// clipAndAggregate clips the m rows of g to the trainer's R and releases
// their aggregate into t.out. With an aggregate.ScaledAggregator it passes
// the clip factors (clipFactors) and lets the rule scale, sum and measure
// in one pass; if the rule reports a row its measurement cannot certify as
// ≤ R (aggregate.ErrNotClipped: only rows whose scaled values are
// subnormal can get there), or without that path, it clips the rows in
// place (clipRows, which measures every row again and rescales until the
// bound holds) and calls Aggregate. ErrNotClipped comes before any noise
// is drawn, so rng is still unused then.
func (t *Trainer) clipAndAggregate(g []float32, m int, sq, norms []float64, rng *rand.Rand) (aggregate.Report, error) {
	grads := aggregate.Grads{G: g, Norms: norms, M: m, P: t.p, ClipNorm: t.cfg.ClipNorm}
	if sa, ok := t.cfg.Aggregator.(aggregate.ScaledAggregator); ok && m > 0 {
		if cap(t.scale) < m {
			t.scale = make([]float32, m+m/4+1)
		}
		scale := t.scale[:m]
		if err := clipFactors(g, m, t.p, t.cfg.ClipNorm, sq, scale, t.cfg.Workers); err != nil {
			return aggregate.Report{}, err
		}
		rep, err := sa.AggregateScaled(grads, scale, rng, t.out)
		if !errors.Is(err, aggregate.ErrNotClipped) {
			if err != nil {
				err = fmt.Errorf("aggregate %s: %w", t.cfg.Aggregator.Name(), err)
			}
			return rep, err
		}
		sq = nil // the rows may have been scaled: measure them again
	}
	if err := clipRows(g, m, t.p, t.cfg.ClipNorm, sq, norms, t.cfg.Workers); err != nil {
		return aggregate.Report{}, err
	}
	rep, err := t.cfg.Aggregator.Aggregate(grads, rng, t.out)
	if err != nil {
		return rep, fmt.Errorf("aggregate %s: %w", t.cfg.Aggregator.Name(), err)
	}
	return rep, nil
}
