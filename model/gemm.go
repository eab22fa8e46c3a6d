package model

import (
	"unsafe"

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

// useAVX2 selects the AVX2/FMA kernel for gemm; it is fixed at start-up.
var useAVX2 = hasAVX2FMA()

// gemm computes C = alpha·op(A)·op(B) + beta·C for row-major dense matrices.
func gemm(tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	gemmWith(useAVX2, tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// gemmWith is gemm using the AVX2/FMA kernel when fast is set and the
// shape suits it (op(B) = B, alpha = 1, beta ∈ {0, 1}, at least 4 × 16),
// else gonum. The kernel covers whole 4×16 tiles of C, gonum the edges.
func gemmWith(fast, tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if !fast || tB || alpha != 1 || (beta != 0 && beta != 1) || m < 4 || n < 16 || k == 0 {
		gemmGonum(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	if beta == 0 {
		// The kernel overwrites the tiles in its first k-block; clear the
		// edges that gonum adds to.
		m4, n16 := m&^3, n&^15
		for i := 0; i < m; i++ {
			if i < m4 {
				clear(c[i*ldc+n16 : i*ldc+n])
			} else {
				clear(c[i*ldc : i*ldc+n])
			}
		}
	}
	// A(i, l) is a[i·ai + l·al].
	ai, al := lda, 1
	if tA {
		ai, al = 1, lda
	}
	m4, n16 := m&^3, n&^15
	// Blocks of kb steps keep the B panel (kb × 16) in L1 across row tiles.
	const kb = 256
	for k0 := 0; k0 < k; k0 += kb {
		kk := min(kb, k-k0)
		for j := 0; j < n16; j += 16 {
			bp := &b[k0*ldb+j]
			for i := 0; i < m4; i += 4 {
				kern4x16(kk, &a[i*ai+k0*al], ai, al, bp, ldb, &c[i*ldc+j], ldc, beta == 0 && k0 == 0)
			}
		}
	}
	if m4 < m {
		var as []float32
		if tA {
			as = a[m4:]
		} else {
			as = a[m4*lda:]
		}
		gemmGonum(tA, false, m-m4, n, k, 1, as, lda, b, ldb, 1, c[m4*ldc:], ldc)
	}
	if n16 < n {
		gemmGonum(tA, false, m4, n-n16, k, 1, a, lda, b[n16:], ldb, 1, c[n16:], ldc)
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
