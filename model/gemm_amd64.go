//go:build amd64 && !purego

package model

// hasAVX2FMA reports whether the CPU and OS support AVX2 and FMA.
func hasAVX2FMA() bool

// kern4x16 computes C[0:4, 0:16] += A[0:4, 0:k]·B[0:k, 0:16] with A(i, l) at
// a[i·ai + l·al], B row l at b[l·ldb:] and C row i at c[i·ldc:] (strides
// in elements), summing over l in order with fused multiply-adds.
//
//go:noescape
func kern4x16(k int, a *float32, ai, al int, b *float32, ldb int, c *float32, ldc int)
