package optim

import (
	"fmt"
	"math"
	"sync"

	"gonum.org/v1/gonum/blas/blas32"
)

// clipRows scales each row of g (m × p) to L2 norm at most r (r ≤ 0: no
// clipping) and writes each row's norm after clipping into norms. It returns
// an error naming the first example whose gradient is NaN or infinite.
//
// Work is split over `workers` goroutines by rows; each row is processed by
// one goroutine with a fixed summation order, so results are deterministic.
func clipRows(g []float32, m, p int, r float64, norms []float64, workers int) error {
	if workers < 1 {
		workers = 1
	}
	if workers > m {
		workers = m
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
				row := g[i*p : (i+1)*p]
				n := rowNorm(row)
				if math.IsNaN(n) || math.IsInf(n, 0) {
					bad[w] = i
					return
				}
				if r > 0 && n > r {
					blas32.Scal(float32(r/n), blas32.Vector{N: p, Inc: 1, Data: row})
					n = r
				}
				norms[i] = n
			}
		}(w, lo, hi)
	}
	wg.Wait()
	for _, i := range bad {
		if i >= 0 {
			return fmt.Errorf("per-example gradient of batch row %d is not finite (NaN or Inf): refusing to release it", i)
		}
	}
	return nil
}

// rowNorm is the L2 norm of v accumulated in float64, in four independent
// lanes for speed; NaN and Inf propagate.
func rowNorm(v []float32) float64 {
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(v); i += 4 {
		a, b, c, d := float64(v[i]), float64(v[i+1]), float64(v[i+2]), float64(v[i+3])
		s0 += a * a
		s1 += b * b
		s2 += c * c
		s3 += d * d
	}
	for ; i < len(v); i++ {
		a := float64(v[i])
		s0 += a * a
	}
	return math.Sqrt((s0 + s1) + (s2 + s3))
}
