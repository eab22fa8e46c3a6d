package model

import (
	"fmt"
	"unsafe"

	"github.com/privtrain/privtrain/internal/vec"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
)

// alignedF32 returns a zeroed slice of n float32s starting on a 64-byte
// boundary. gonum's SIMD dot product sums in an order that depends on the
// alignment of its operands, so every buffer the models compute on is
// aligned: that keeps results bit-identical from run to run.
func alignedF32(n int) []float32 {
	buf := make([]float32, n+16)
	off := int((64 - uintptr(unsafe.Pointer(unsafe.SliceData(buf)))%64) % 64 / 4)
	return buf[off : off+n : off+n]
}

// transpose writes the r × c matrix x as its c × r transpose into y.
func transpose(x []float32, r, c int, y []float32) {
	for i := 0; i < r; i++ {
		for j, v := range x[i*c : (i+1)*c] {
			y[j*r+i] = v
		}
	}
}

// kernelISA is the kernel level of every gemm and pooling call, fixed at
// start-up (see internal/vec: CPU features and the PRIVTRAIN_ASM variable).
var kernelISA = vec.Level()

// gemm computes C = alpha·op(A)·op(B) + beta·C for row-major dense matrices.
// It panics, before any kernel runs, if a slice is too short or a leading
// dimension too small for the shape.
func gemm(tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	gemmWith(kernelISA, tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// gemmWith is gemm with the kernels of level isa.
func gemmWith(level vec.ISA, tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	checkGemm(tA, tB, m, n, k, a, lda, b, ldb, c, ldc)
	if m == 0 || n == 0 {
		return
	}
	if k == 0 { // C = beta·C (0 if beta = 0, as in BLAS)
		for i := 0; i < m; i++ {
			r := c[i*ldc : i*ldc+n]
			if beta == 0 {
				clear(r)
				continue
			}
			for j := range r {
				r[j] *= beta
			}
		}
		return
	}
	if level == vec.Go || tB || alpha != 1 || (beta != 0 && beta != 1) {
		gemmGonum(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	gemmBlocked(level, tA, m, n, k, a, lda, b, ldb, beta, c, ldc)
}

// checkGemm panics unless op(A) (m × k), op(B) (k × n) and C (m × n) fit in
// their slices with their leading dimensions: the assembly kernels get raw
// addresses, so a wrong shape must stop here rather than corrupt memory.
func checkGemm(tA, tB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	if m < 0 || n < 0 || k < 0 {
		panic(fmt.Sprintf("model: gemm: negative shape m=%d n=%d k=%d", m, n, k))
	}
	need := func(name string, rows, cols, ld, have int) {
		if rows == 0 || cols == 0 {
			return
		}
		if ld < cols {
			panic(fmt.Sprintf("model: gemm: %s is %d×%d but its leading dimension is %d", name, rows, cols, ld))
		}
		if want := (rows-1)*ld + cols; have < want {
			panic(fmt.Sprintf("model: gemm: %s (%d×%d, leading dimension %d) needs %d elements, has %d", name, rows, cols, ld, want, have))
		}
	}
	if tA {
		need("A", k, m, lda, len(a))
	} else {
		need("A", m, k, lda, len(a))
	}
	if tB {
		need("B", n, k, ldb, len(b))
	} else {
		need("B", k, n, ldb, len(b))
	}
	need("C", m, n, ldc, len(c))
}

// gemmBlocked computes C = op(A)·B + beta·C (beta ∈ {0, 1} unless level is
// Go) after checkGemm. C is cut into disjoint blocks: whole 8×32 tiles with
// the AVX-512 kernel, whole 4×16 tiles with the AVX2 kernel, the rest with
// gonum; each block is computed with the caller's beta, so beta = 0 needs
// no clearing pass.
func gemmBlocked(level vec.ISA, tA bool, m, n, k int, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	tm, tn, kb := 4, 16, 256
	kern := kern4x16
	switch {
	case level >= vec.AVX512 && m >= 8 && n >= 32:
		// Blocks of kb steps keep the B panel (kb × 32) in L1.
		tm, tn, kb, kern = 8, 32, 128, kern8x32
	case level >= vec.AVX2 && m >= 4 && n >= 16:
	default:
		gemmGonum(tA, false, m, n, k, 1, a, lda, b, ldb, beta, c, ldc)
		return
	}
	// A(i, l) is a[i·ai + l·al].
	ai, al := lda, 1
	if tA {
		ai, al = 1, lda
	}
	mt, nt := m-m%tm, n-n%tn
	for k0 := 0; k0 < k; k0 += kb {
		kk := min(kb, k-k0)
		store := beta == 0 && k0 == 0
		for j := 0; j < nt; j += tn {
			bp := &b[k0*ldb+j]
			for i := 0; i < mt; i += tm {
				kern(kk, &a[i*ai+k0*al], ai, al, bp, ldb, &c[i*ldc+j], ldc, store)
			}
		}
	}
	lower := min(level, vec.AVX2)
	if tm == 4 {
		lower = vec.Go
	}
	if nt < n {
		gemmBlocked(lower, tA, mt, n-nt, k, a, lda, b[nt:], ldb, beta, c[nt:], ldc)
	}
	if mt < m {
		var as []float32
		if tA {
			as = a[mt:]
		} else {
			as = a[mt*lda:]
		}
		gemmBlocked(lower, tA, m-mt, n, k, as, lda, b, ldb, beta, c[mt*ldc:], ldc)
	}
}

// gemmGonum is gemm through gonum.
//
// C is computed in tiles small enough for gonum to run each serially: the
// models already keep both cores busy with one graph each, and gonum's
// parallel path allocates goroutines and channels on every call.
func gemmGonum(tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	const bs = 64 // gonum's block size; it goes parallel at ≥ 4 blocks of C
	colT := n
	if colT > 3*bs {
		colT = 3 * bs
	}
	rowT := bs * (3 / ((colT + bs - 1) / bs))
	ta, tb := blas.NoTrans, blas.NoTrans
	if tA {
		ta = blas.Trans
	}
	if tB {
		tb = blas.Trans
	}
	for i0 := 0; i0 < m; i0 += rowT {
		mi := min(rowT, m-i0)
		var ar, ac int
		var as []float32
		if tA {
			ar, ac, as = k, mi, a[i0:]
		} else {
			ar, ac, as = mi, k, a[i0*lda:]
		}
		for j0 := 0; j0 < n; j0 += colT {
			nj := min(colT, n-j0)
			var br, bc int
			var bsl []float32
			if tB {
				br, bc, bsl = nj, k, b[j0*ldb:]
			} else {
				br, bc, bsl = k, nj, b[j0:]
			}
			blas32.Gemm(ta, tb, alpha,
				blas32.General{Rows: ar, Cols: ac, Stride: lda, Data: as},
				blas32.General{Rows: br, Cols: bc, Stride: ldb, Data: bsl},
				beta,
				blas32.General{Rows: mi, Cols: nj, Stride: ldc, Data: c[i0*ldc+j0:]})
		}
	}
}
