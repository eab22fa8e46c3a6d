package vec

import "fmt"

// AddGrid adds n_j = int64(x[j]·k) to acc[j] for j < len(x) — the product
// x[j]·k rounded to float32 as Go computes it, then converted to int64 by
// truncation toward zero exactly as Go's conversion does (out of range,
// NaN and ±Inf give −2⁶³ on amd64) — and returns Σ n_j² and the OR of the
// |n_j|, both computed in uint64 with wrap-around (|−2⁶³| = 2⁶³). The
// secure release's exact integer sum (aggregate) calls it with k a power
// of two, so that x[j]·k is exact; its caller checks from the OR that no
// |n_j| was large enough for the sum of squares to wrap.
//
// The results are bit-identical at every level: the integer sums are taken
// modulo 2⁶⁴, where the order of the additions does not matter, and the
// assembly kernels convert only values with |x[j]·k| < 2³¹ (where a 32-bit
// truncation is exact), handing the rest of the row to the Go loop at the
// first value outside that range. It panics if acc is shorter than x.
func AddGrid(acc []int64, x []float32, k float32) (sq, or uint64) {
	return addGridWith(level, acc, x, k)
}

func addGridWith(l ISA, acc []int64, x []float32, k float32) (sq, or uint64) {
	if len(acc) < len(x) {
		panic(fmt.Sprintf("vec: AddGrid into %d integers from %d values", len(acc), len(x)))
	}
	done := 0
	switch {
	case l >= AVX512 && len(x) >= 16:
		done, sq, or = addGridAVX512(&acc[0], &x[0], len(x), k)
	case l >= AVX2 && len(x) >= 8:
		done, sq, or = addGridAVX2(&acc[0], &x[0], len(x), k)
	}
	s, o := addGridGo(acc[done:len(x)], x[done:], k)
	return sq + s, or | o
}

// addGridGo is AddGrid in Go (the reference of the kernels).
func addGridGo(acc []int64, x []float32, k float32) (sq, or uint64) {
	acc = acc[:len(x)]
	for j, v := range x {
		n := int64(v * k)
		acc[j] += n
		m := n >> 63
		a := uint64((n ^ m) - m) // |n|
		or |= a
		sq += a * a
	}
	return sq, or
}
