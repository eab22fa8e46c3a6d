//go:build amd64 && !purego

package model

// hasAVX2FMA reports whether the CPU and OS support AVX2 and FMA.
func hasAVX2FMA() bool

// kern4x16 computes C[0:4, 0:16] += A[0:4, 0:k]·B[0:k, 0:16] with A(i, l) at
// a[i·ai + l·al], B row l at b[l·ldb:] and C row i at c[i·ldc:] (strides
// in elements), summing over l in order with fused multiply-adds. With
// store set it overwrites C instead of adding to it.
//
//go:noescape
func kern4x16(k int, a *float32, ai, al int, b *float32, ldb int, c *float32, ldc int, store bool)

// poolMaxAVX2 computes one output position of max-pooling for c channels
// (a multiple of 8): y[j] and arg[j] are the value and index of the first
// maximum of x[first+j] and x[first+off+j] for off in offs[:noffs].
//
//go:noescape
func poolMaxAVX2(x *float32, first int, offs *int, noffs int, c int, y *float32, arg *int32)
