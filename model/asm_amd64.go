//go:build amd64 && !purego

package model

// kern4x16 computes C[0:4, 0:16] += A[0:4, 0:k]·B[0:k, 0:16] with A(i, l) at
// a[i·ai + l·al], B row l at b[l·ldb:] and C row i at c[i·ldc:] (strides
// in elements), summing over l in order with fused multiply-adds. With
// store set it overwrites C instead of adding to it. AVX2 + FMA. The
// caller checks every address (see gemmBlocked).
//
//go:noescape
func kern4x16(k int, a *float32, ai, al int, b *float32, ldb int, c *float32, ldc int, store bool)

// kern8x32 is kern4x16 for an 8 × 32 tile of C, with AVX-512 F.
//
//go:noescape
func kern8x32(k int, a *float32, ai, al int, b *float32, ldb int, c *float32, ldc int, store bool)

// poolMaxAVX2 computes one output position of max-pooling for c channels
// (a multiple of 8): y[j] and arg[j] are the value and index of the first
// maximum of x[first+j] and x[first+off+j] for off in offs[:noffs].
//
//go:noescape
func poolMaxAVX2(x *float32, first int, offs *int, noffs int, c int, y *float32, arg *int32)

// fmaPeakAVX2 runs iters rounds of 12 independent 8-wide FMAs (192·iters
// FLOP), for measuring the machine's peak.
func fmaPeakAVX2(iters int)

// fmaPeakAVX512 runs iters rounds of 12 independent 16-wide FMAs (384·iters
// FLOP).
func fmaPeakAVX512(iters int)

// poolMaxAVX512 is poolMaxAVX2 for c a multiple of 16, with AVX-512 F.
//
//go:noescape
func poolMaxAVX512(x *float32, first int, offs *int, noffs int, c int, y *float32, arg *int32)
