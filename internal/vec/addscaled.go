package vec

import (
	"fmt"
	"sync"
)

// AddScaled sets y[i] = fl32(y[i] + fl32(s·x[i])) for i < len(x) — the
// product is rounded to float32 before the addition, never fused — or,
// with store, y[i] = fl32(s·x[i]) (so a first row needs no cleared y). It
// returns Σ fl32(s·x[i])², the sum of squares of the scaled values exactly
// as SumSquares would compute it on them (same lanes and order, relative
// error ≤ NormErr's bound). It panics if y is shorter than x.
func AddScaled(y, x []float32, s float32, store bool) float64 {
	return addScaledWith(level, y, x, s, store)
}

func addScaledWith(l ISA, y, x []float32, s float32, store bool) float64 {
	if len(y) < len(x) {
		panic(fmt.Sprintf("vec: AddScaled into %d values from %d", len(y), len(x)))
	}
	if len(x) == 0 {
		return 0
	}
	switch {
	case l >= AVX512:
		return addScaledAVX512(&y[0], &x[0], len(x), s, store)
	case l >= AVX2:
		return addScaledAVX2(&y[0], &x[0], len(x), s, store)
	}
	return addScaledGo(y, x, s, store)
}

// addScaledGo is AddScaled in Go, in the kernels' order (see sumSquaresGo).
func addScaledGo(y, x []float32, s float32, store bool) float64 {
	var l [16]float64
	n16 := len(x) &^ 15
	y = y[:len(x)]
	for i := 0; i < n16; i += 16 {
		xb := x[i : i+16 : i+16]
		yb := y[i : i+16 : i+16]
		for j, v := range xb {
			p := float32(s * v) // rounded: never fused with the addition
			if store {
				yb[j] = p
			} else {
				yb[j] += p
			}
			f := float64(p)
			l[j] += f * f
		}
	}
	sum := reduce16(&l)
	for i := n16; i < len(x); i++ {
		p := float32(s * x[i])
		if store {
			y[i] = p
		} else {
			y[i] += p
		}
		f := float64(p)
		sum += f * f
	}
	return sum
}

// NormErr bounds the relative error of sqrt(SumSquares(x)) (or of the
// square root of what AddScaled returns) as a value of ‖x‖ for n values:
// every square is exact in float64; each of the 16 lanes sums ≤ n/16
// nonnegative terms in order, the lanes are combined in a tree of depth 4
// and the ≤ 15 tail terms are added in order, so the sum's relative error
// is at most (n/16 + 4)·2⁻⁵³ to first order (Higham, "Accuracy and
// Stability of Numerical Algorithms", §4.2, sums of nonnegative terms); the
// square root halves it and adds its own rounding 2⁻⁵³. The bound returned,
// (n/16 + 6)·2⁻⁵³, does not halve and so also covers second-order terms.
func NormErr(n int) float64 { return float64(n/16+6) * 0x1p-53 }

// maxRowBlock is the largest column block of SumScaledRows: 16,384 float32
// accumulators (64 KiB) stay in L2 while every row adds its part in one
// long sequential run (shorter runs measured slower: the pass streams the
// rows from memory, and a new run of every row restarts the prefetcher).
const maxRowBlock = 16384

// rowBlocks returns the column blocking of SumScaledRows for rows of p
// values: ColumnBlocks(p, maxRowBlock).
func rowBlocks(p int) (b, nb int) { return ColumnBlocks(p, maxRowBlock) }

// ColumnBlocks splits p columns into nb blocks of b columns (the last one
// shorter), b a multiple of 16 and at most maxBlock (a multiple of 16), nb even unless
// p ≤ maxBlock, so that two workers get equal work. It depends on p and
// maxBlock only, never on the number of workers.
func ColumnBlocks(p, maxBlock int) (b, nb int) {
	nb = (p + maxBlock - 1) / maxBlock
	if nb > 1 && nb%2 == 1 {
		nb++
	}
	nb = max(nb, 1)
	b = ((p+nb-1)/nb + 15) &^ 15
	nb = max(1, (p+b-1)/b)
	return b, nb
}

// SumScaledRowsNormErr bounds the relative error of sqrt(ss[k]) from
// SumScaledRows as the norm of the scaled row, for rows of p values: each
// column block's sum of squares has relative error ≤ (B/16 + 4)·2⁻⁵³ with
// B the block length (see NormErr and rowBlocks), and the nb block sums
// are added in order (nb − 1 more roundings of a sum of nonnegative
// terms); with the square root's halving and rounding, and second-order
// terms, it is at most (B/16 + nb + 5)·2⁻⁵³ — NormErr(p) for one block,
// and about half of it for long rows.
func SumScaledRowsNormErr(p int) float64 {
	b, nb := rowBlocks(p)
	return float64(min(b, p)/16+nb+5) * 0x1p-53
}

// SumScaledRows writes out[j] = Σ_k fl32(scale[k]·x[idx[k]·p + j]) for
// j < p: the rows idx of the row-major matrix x (p columns), each scaled by
// its factor (scale nil: 1) and rounded to float32, accumulated in float32
// in the order of idx (out starts from the first row's scaled values). If
// ss is not nil, ss[k] receives the sum of squares of scaled row k as
// measured in the same pass (per column block as AddScaled, then the
// blocks in order; see SumScaledRowsNormErr). With no rows, out is
// zeroed.
//
// This is the one pass over the per-example gradients of a DP-SGD step:
// clip scaling, the sum and the norm of every clipped row. The column
// blocks are split over workers goroutines; each coordinate and each ss[k]
// is computed in a fixed order, so results do not depend on workers.
func SumScaledRows(out, x []float32, p int, idx []int, scale []float32, ss []float64, workers int) {
	sumScaledRowsWith(level, out, x, p, idx, scale, ss, workers)
}

func sumScaledRowsWith(l ISA, out, x []float32, p int, idx []int, scale []float32, ss []float64, workers int) {
	if len(out) != p {
		panic(fmt.Sprintf("vec: SumScaledRows: output of %d values for rows of %d", len(out), p))
	}
	if (scale != nil && len(scale) != len(idx)) || (ss != nil && len(ss) != len(idx)) {
		panic(fmt.Sprintf("vec: SumScaledRows: %d rows with %d scale factors and %d sums of squares", len(idx), len(scale), len(ss)))
	}
	for _, i := range idx {
		if i < 0 || (i+1)*p > len(x) {
			panic(fmt.Sprintf("vec: SumScaledRows: row %d of a %d-value matrix with %d columns", i, len(x), p))
		}
	}
	if len(idx) == 0 {
		clear(out)
		return
	}
	bs, nb := rowBlocks(p)
	var part []float64
	if ss != nil && nb > 1 {
		part = make([]float64, nb*len(idx))
	}
	workers = max(1, min(workers, nb))
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for b := w; b < nb; b += workers {
				lo, hi := b*bs, min((b+1)*bs, p)
				y := out[lo:hi]
				for k, i := range idx {
					s := float32(1)
					if scale != nil {
						s = scale[k]
					}
					q := addScaledWith(l, y, x[i*p+lo:i*p+hi], s, k == 0)
					switch {
					case part != nil:
						part[b*len(idx)+k] = q
					case ss != nil:
						ss[k] = q
					}
				}
			}
		}(w)
	}
	wg.Wait()
	if part != nil {
		for k := range idx {
			q := part[k]
			for b := 1; b < nb; b++ {
				q += part[b*len(idx)+k]
			}
			ss[k] = q
		}
	}
}
