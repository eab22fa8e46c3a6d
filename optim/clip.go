package optim

import (
	"fmt"
	"math"
	"sync"

	"github.com/privtrain/privtrain/internal/vec"
)

// clipMargin κ: a clipped row is scaled to norm R·(1−κ) in exact
// arithmetic, so that after float32 rounding its norm is still ≤ R.
//
// Bound (standard floating-point error analysis, e.g. Higham, "Accuracy and
// Stability of Numerical Algorithms", §2.2 and §4.2): with u = 2⁻²⁴, the
// stored row fl32(s·g) has ‖fl32(s·g)‖ ≤ s(1+u)‖g‖; the factor s =
// fl32(R(1−κ)/n̂) ≤ R(1−κ)(1+u)/n̂; the computed norm n̂ satisfies
// ‖g‖ ≤ n̂(1+e) with e = normErr(p). Hence ‖fl32(s·g)‖ ≤ R(1−κ)(1+u)²(1+e),
// which is < R when (1+u)²(1+e) < 1/(1−κ), i.e. for e ≤ 2⁻³⁰ with κ = 2⁻²⁰
// (2u + e + u² ≈ 1.2·10⁻⁷ < κ ≈ 9.5·10⁻⁷). clipRows also measures the norm
// of every row it scaled and rescales until the measured bound holds.
const clipMargin = 0x1p-20

// maxNormErr is the largest relative norm error normErr may have for the
// bound of clipMargin to hold.
const maxNormErr = 0x1p-30

// normErr bounds the relative error of sqrt(vec.SumSquares(g)) as a value
// of ‖g‖ for a row of p values: the squares are exact in float64 and the
// sum of nonnegative terms has relative error ≤ (p/16 + 5)·2⁻⁵³ (16 lanes,
// then the combination; vec.SumSquares), which the square root halves,
// plus its own rounding 2⁻⁵³.
func normErr(p int) float64 { return float64(p/16+6) * 0x1p-53 }

// clipRows scales each row of g (m × p) so that its L2 norm is at most r
// after float32 rounding (r ≤ 0: no clipping) and writes each row's norm
// after clipping into norms. sq, if not nil, holds each row's sum of squares
// as vec.SumSquares computes it (from the model, while the row was in
// cache); otherwise clipRows computes it. It returns an error naming the
// first example whose gradient is NaN or infinite.
//
// A row is left unchanged when its computed norm n̂ satisfies n̂(1+e) ≤ r
// (e = normErr(p)), else it is scaled by fl32(r(1−κ)/n̂) (κ = clipMargin);
// the norm of every scaled row is measured again on the stored values, and
// the row is scaled once more in the (by the bound above, impossible) case
// that the measured bound exceeds r. The measurement also covers what the
// relative bound does not: products that round to subnormal float32s.
//
// Work is split over `workers` goroutines by rows; each row is processed by
// one goroutine with a fixed summation order, so results are deterministic.
func clipRows(g []float32, m, p int, r float64, sq []float64, norms []float64, workers int) error {
	e, err := clipSetup(m, p, r, sq)
	if err != nil {
		return err
	}
	return forRows(m, workers, func(i int) bool {
		row := g[i*p : (i+1)*p]
		var ss float64
		if sq != nil {
			ss = sq[i]
		} else {
			ss = vec.SumSquares(row)
		}
		n := math.Sqrt(ss)
		if math.IsNaN(n) || math.IsInf(n, 0) {
			return false
		}
		if r > 0 {
			n = clipRow(row, n, r, e)
		}
		norms[i] = n
		return true
	})
}

// clipSetup checks the arguments shared by clipRows and clipFactors and
// returns the norm error bound e = normErr(p).
func clipSetup(m, p int, r float64, sq []float64) (float64, error) {
	e := normErr(p)
	if r > 0 && e > maxNormErr {
		return 0, fmt.Errorf("rows of %d values: the norm error bound %.3g exceeds %.3g, so clipping cannot guarantee ‖g‖ ≤ R", p, e, maxNormErr)
	}
	if sq != nil && len(sq) != m {
		return 0, fmt.Errorf("clipping %d rows with %d precomputed squared norms", m, len(sq))
	}
	return e, nil
}

// forRows runs f on rows 0..m−1, split over `workers` goroutines (at least
// one, at most m; one runs on the caller's goroutine) in contiguous ranges; f reports false for a row whose
// gradient is not finite, which ends its goroutine's range. It returns an
// error naming the first such row (the lowest index any goroutine
// reported). Each row is handled by exactly one goroutine, so results do
// not depend on the number of workers.
func forRows(m, workers int, f func(i int) bool) error {
	workers = max(1, min(workers, m))
	if workers == 1 { // no goroutine to start and wait for
		for i := 0; i < m; i++ {
			if !f(i) {
				return notFinite(i)
			}
		}
		return nil
	}
	bad := make([]int, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		lo, hi := w*m/workers, (w+1)*m/workers
		bad[w] = -1
		wg.Add(1)
		go func(w, lo, hi int) {
			defer wg.Done()
			for i := lo; i < hi; i++ {
				if !f(i) {
					bad[w] = i
					return
				}
			}
		}(w, lo, hi)
	}
	wg.Wait()
	for _, i := range bad {
		if i >= 0 {
			return notFinite(i)
		}
	}
	return nil
}

// notFinite is the error for batch row i whose gradient is NaN or Inf.
func notFinite(i int) error {
	return fmt.Errorf("per-example gradient of batch row %d is not finite (NaN or Inf): refusing to release it", i)
}

// clipRow scales row (computed norm n, relative norm error ≤ e) so that
// its norm is at most r after rounding and returns the norm of the stored
// row as computed (with ‖row‖ ≤ result·(1+e) ≤ r).
//
// Normally one scaling suffices. Rows whose scaled values are subnormal
// can round back above the bound; each further round doubles the margin
// (up to ½, where every nonzero float32 strictly shrinks or becomes 0), so
// the loop ends.
func clipRow(row []float32, n, r, e float64) float64 {
	margin := clipMargin
	for n*(1+e) > r {
		s := float32(r * (1 - margin) / n)
		n = math.Sqrt(vec.ScaleSumSquares(row, s))
		margin = min(2*margin, 0.5)
	}
	return n
}

// rowNorm is the L2 norm of v (vec.SumSquares: exact squares, float64
// accumulation); NaN and Inf propagate.
func rowNorm(v []float32) float64 { return math.Sqrt(vec.SumSquares(v)) }
