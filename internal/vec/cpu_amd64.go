//go:build amd64 && !purego

package vec

import "golang.org/x/sys/cpu"

// CPU is the best kernel level the CPU and the OS support. x/sys/cpu checks
// CPUID and, through XGETBV, that the OS saves the YMM state (and for
// AVX-512 the opmask and ZMM state).
func CPU() ISA {
	switch {
	case cpu.X86.HasAVX512F && cpu.X86.HasAVX2 && cpu.X86.HasFMA:
		return AVX512
	case cpu.X86.HasAVX2 && cpu.X86.HasFMA:
		return AVX2
	}
	return Go
}

// sumSquaresAVX2 returns Σ x[i]² over x[0:n], each square formed exactly
// in float64 and accumulated in float64 (16 lanes, combined in a fixed
// order, then the tail in order).
//
//go:noescape
func sumSquaresAVX2(x *float32, n int) float64

// scaleSumSquaresAVX2 sets x[i] = fl32(s·x[i]) for i < n and returns the
// sum of squares of the stored values as sumSquaresAVX2 computes it.
//
//go:noescape
func scaleSumSquaresAVX2(x *float32, n int, s float32) float64

// addScaledAVX2 sets v[i] = fl32(s·x[i]) and y[i] = fl32(y[i] + v[i]) (or
// y[i] = v[i] with store) for i < n, and returns Σ v[i]² as sumSquaresAVX2
// would compute it on v.
//
//go:noescape
func addScaledAVX2(y, x *float32, n int, s float32, store bool) float64

// addScaledAVX512 is addScaledAVX2 with AVX-512 F (bit-identical results).
//
//go:noescape
func addScaledAVX512(y, x *float32, n int, s float32, store bool) float64

// addGridAVX2 is AddGrid on the longest prefix of x[0:n] made of whole
// groups of 8 values with |x[j]·k| < 2³¹ (AVX2): it returns the length
// done of that prefix (a multiple of 8) and the sum of squares and OR of
// its |n_j|.
//
//go:noescape
func addGridAVX2(acc *int64, x *float32, n int, k float32) (done int, sq, or uint64)

// addGridAVX512 is addGridAVX2 with groups of 16 values (AVX-512 F).
//
//go:noescape
func addGridAVX512(acc *int64, x *float32, n int, k float32) (done int, sq, or uint64)

// reluAVX2 is Relu on x[0:n], n a multiple of 8 (AVX2).
//
//go:noescape
func reluAVX2(y, x *float32, n int)

// reluAVX512 is Relu on x[0:n], n a multiple of 16 (AVX-512 F).
//
//go:noescape
func reluAVX512(y, x *float32, n int)

// reluBackAVX2 is ReluBack on dx[0:n], n a multiple of 8 (AVX2).
//
//go:noescape
func reluBackAVX2(dx, y, dy *float32, n int)

// reluBackAVX512 is ReluBack on dx[0:n], n a multiple of 16 (AVX-512 F).
//
//go:noescape
func reluBackAVX512(dx, y, dy *float32, n int)

// addRowsAVX2 is AddRows on the first n columns (a multiple of 8) of
// dst, the rows of m being c values apart (AVX2).
//
//go:noescape
func addRowsAVX2(dst, m *float32, c, n, rows int)
