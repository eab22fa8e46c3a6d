package aggregate

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"

	"github.com/privtrain/privtrain/internal/vec"
	"github.com/privtrain/privtrain/privacy"
)

// ScaledAggregator is an optional fast path of an Aggregator: the rule
// takes the unclipped rows with each row's clip factor and does the clip
// scaling, its own work (for sum: the sum) and the measurement of every
// clipped row's norm in one pass over the gradients, instead of the caller
// writing the clipped rows first. Sum implements it.
type ScaledAggregator interface {
	Aggregator
	// AggregateScaled releases what Aggregate would release on the clipped
	// batch whose row i is fl32(scale[i]·g_i) (each product rounded to
	// float32; scale[i] = 1 leaves the row as it is) and whose Norms are
	// the norms of those rows as measured by the rule, which it writes
	// into g.Norms. The rows of g.G are left unchanged or replaced by the
	// clipped rows.
	//
	// For a private rule every clipped row must satisfy ‖row‖ ≤ R exactly:
	// the rule checks n_i·(1 + e) ≤ ClipNorm, where n_i is its measured
	// norm and e that measurement's relative error bound; if a row fails,
	// it returns an error wrapping ErrNotClipped before drawing any
	// randomness from rng, so the caller can clip the rows itself and call
	// Aggregate with the same rng.
	AggregateScaled(g Grads, scale []float32, rng *rand.Rand, out []float32) (Report, error)
}

// ErrNotClipped reports a row that the given clip factor left above the
// clipping bound (as measured; see ScaledAggregator).
var ErrNotClipped = errors.New("a scaled row is not within the clipping bound")

// maxNormErr is the largest relative error a norm measurement may have for
// a clipped row to be accepted: the caller's clip factors leave a margin of
// 2⁻²⁰ (optim's clipMargin), which this error must stay well inside.
const maxNormErr = 0x1p-30

// AggregateScaled is Aggregate on the rows fl32(scale[i]·g_i): the clip
// scaling, the sum Σ_i fl32(scale[i]·g_i) (float32, in row order, as
// Aggregate computes it on clipped rows, bit for bit) and every clipped
// row's norm in one pass (vec.SumScaledRows), then the check of every norm
// against R (see ScaledAggregator) and only then the noise. g.G is not
// modified, except by the secure release, which clips the rows in place
// (vec.ScaleSumSquares) before its integer release.
func (a *Sum) AggregateScaled(g Grads, scale []float32, rng *rand.Rand, out []float32) (Report, error) {
	if len(scale) != g.M {
		return Report{}, fmt.Errorf("sum: %d clip factors for %d gradients", len(scale), g.M)
	}
	if len(g.Norms) != g.M || len(g.G) != g.M*g.P || len(out) != g.P || g.P <= 0 {
		return Report{}, fmt.Errorf("sum: invalid batch (M=%d, P=%d, %d values, %d norms, output %d)", g.M, g.P, len(g.G), len(g.Norms), len(out))
	}
	var e float64
	if a.sec != nil {
		e = vec.NormErr(g.P)
		// Rows are independent: split them over the cores (each row is
		// scaled and measured by one goroutine, so nothing depends on it).
		workers := runtime.GOMAXPROCS(0)
		parallelRange(workers, g.M*g.P, func(w int) {
			for i := w * g.M / workers; i < (w+1)*g.M/workers; i++ {
				r := row(g, i)
				if s := scale[i]; s == 1 {
					g.Norms[i] = math.Sqrt(vec.SumSquares(r))
				} else {
					g.Norms[i] = math.Sqrt(vec.ScaleSumSquares(r, s))
				}
			}
		})
	} else {
		e = vec.SumScaledRowsNormErr(g.P)
		a.s.grow(g.M, g.P)
		idx := a.s.idx[:0]
		for i := 0; i < g.M; i++ {
			idx = append(idx, i)
		}
		vec.SumScaledRows(out, g.G, g.P, idx, scale, g.Norms, runtime.GOMAXPROCS(0))
		for i, ss := range g.Norms {
			g.Norms[i] = math.Sqrt(ss)
		}
	}
	if err := checkClipped(g, e, a.cfg.Sigma > 0); err != nil {
		return Report{}, fmt.Errorf("sum: %w", err)
	}
	if a.sec != nil {
		return a.Aggregate(g, rng, out)
	}
	// The rows were summed above: what remains of Aggregate is its checks
	// and the noise.
	if err := checkGrads(g, out, a.cfg.Sigma > 0, a.cfg.ClipNorm); err != nil {
		return Report{}, fmt.Errorf("sum: %w", err)
	}
	return a.release(rng, out)
}

// checkClipped returns an error wrapping ErrNotClipped if a private rule's
// row has measured norm n with n·(1+e) > g.ClipNorm (e: the measurement's
// relative error bound), i.e. its true norm may exceed R. A NaN norm is
// left to checkGrads.
func checkClipped(g Grads, e float64, private bool) error {
	if e > maxNormErr {
		return fmt.Errorf("rows of %d values: the norm error bound %.3g exceeds %.3g", g.P, e, maxNormErr)
	}
	if !private {
		return nil
	}
	for i, n := range g.Norms {
		if n*(1+e) > g.ClipNorm {
			return fmt.Errorf("row %d has norm %v·(1+%.3g) > R = %v: %w", i, n, e, g.ClipNorm, ErrNotClipped)
		}
	}
	return nil
}

// release adds the noise to the sum in out and reports the mechanism.
func (a *Sum) release(rng *rand.Rand, out []float32) (Report, error) {
	std := a.cfg.Sigma * a.cfg.ClipNorm
	if err := needRNG(rng, std); err != nil {
		return Report{}, fmt.Errorf("sum: %w", err)
	}
	if err := checkFinite(out); err != nil {
		return Report{}, fmt.Errorf("sum: %w", err)
	}
	addNoise(out, std, rng)
	var rep Report
	if a.cfg.Sigma > 0 {
		rep.Mechanism = privacy.Gaussian{Sigma: a.cfg.Sigma}
	}
	return rep, nil
}
