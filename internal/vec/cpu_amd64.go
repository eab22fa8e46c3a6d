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
