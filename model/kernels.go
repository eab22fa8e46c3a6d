package model

import (
	"math"
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

// convGeom is the geometry of one 2-D convolution on a chunk of examples.
//
// Inputs are (C, H, W) per example when chw is set (the raw model input of
// the first layer, transposed to (H, W, C) before unfolding; the first layer
// never propagates gradients to its input) and (H, W, C) otherwise (the
// output of an earlier layer). Outputs are always (H, W, C). The unfolded patch matrix of one example has L = outH·outW rows
// and K = k·k·inC columns ordered (kh, kw, c), so that the kernel is the
// K × outC matrix of the Keras layout (kh, kw, inC, outC).
type convGeom struct {
	inC, inH, inW        int
	chw                  bool
	outC, k, stride, pad int
	outH, outW           int
}

func (g *convGeom) inSize() int  { return g.inC * g.inH * g.inW }
func (g *convGeom) outSize() int { return g.outC * g.outH * g.outW }
func (g *convGeom) rows() int    { return g.outH * g.outW }
func (g *convGeom) cols() int    { return g.k * g.k * g.inC }

// toHWC transposes n examples from (C, H, W) to (H, W, C) layout.
func (g *convGeom) toHWC(in []float32, n int, out []float32) {
	C, HW := g.inC, g.inH*g.inW
	for e := 0; e < n; e++ {
		x := in[e*C*HW : (e+1)*C*HW]
		y := out[e*C*HW : (e+1)*C*HW]
		for c := 0; c < C; c++ {
			xc := x[c*HW : (c+1)*HW]
			for p, v := range xc {
				y[p*C+c] = v
			}
		}
	}
}

// im2col unfolds n examples of (H, W, C) input in (n × inSize) into cols
// (n·L × K).
func (g *convGeom) im2col(in []float32, n int, cols []float32) {
	K, L := g.cols(), g.rows()
	isz := g.inSize()
	for e := 0; e < n; e++ {
		x := in[e*isz : (e+1)*isz]
		base := cols[e*L*K : (e+1)*L*K]
		r := 0
		for oh := 0; oh < g.outH; oh++ {
			h0 := oh*g.stride - g.pad
			for ow := 0; ow < g.outW; ow++ {
				w0 := ow*g.stride - g.pad
				row := base[r*K : (r+1)*K]
				r++
				j := 0
				for ki := 0; ki < g.k; ki++ {
					h := h0 + ki
					if h < 0 || h >= g.inH {
						clear(row[j : j+g.k*g.inC])
						j += g.k * g.inC
						continue
					}
					// A kernel row is one contiguous run when fully inside.
					if w0 >= 0 && w0+g.k <= g.inW {
						src := (h*g.inW + w0) * g.inC
						copy(row[j:j+g.k*g.inC], x[src:src+g.k*g.inC])
						j += g.k * g.inC
						continue
					}
					for kj := 0; kj < g.k; kj++ {
						w := w0 + kj
						if w < 0 || w >= g.inW {
							clear(row[j : j+g.inC])
						} else {
							src := (h*g.inW + w) * g.inC
							copy(row[j:j+g.inC], x[src:src+g.inC])
						}
						j += g.inC
					}
				}
			}
		}
	}
}

// col2im adds the patch gradients dcols (n·L × K) back into din (n × inSize,
// (H, W, C) layout), which is zeroed first.
func (g *convGeom) col2im(dcols []float32, n int, din []float32) {
	K, L := g.cols(), g.rows()
	isz := g.inSize()
	clear(din[:n*isz])
	for e := 0; e < n; e++ {
		x := din[e*isz : (e+1)*isz]
		base := dcols[e*L*K : (e+1)*L*K]
		r := 0
		for oh := 0; oh < g.outH; oh++ {
			h0 := oh*g.stride - g.pad
			for ow := 0; ow < g.outW; ow++ {
				w0 := ow*g.stride - g.pad
				row := base[r*K : (r+1)*K]
				r++
				j := 0
				for ki := 0; ki < g.k; ki++ {
					h := h0 + ki
					if h < 0 || h >= g.inH {
						j += g.k * g.inC
						continue
					}
					for kj := 0; kj < g.k; kj++ {
						w := w0 + kj
						if w >= 0 && w < g.inW {
							dst := (h*g.inW + w) * g.inC
							d := x[dst : dst+g.inC]
							for c, v := range row[j : j+g.inC] {
								d[c] += v
							}
						}
						j += g.inC
					}
				}
			}
		}
	}
}

// poolGeom is the geometry of a max-pooling layer on (H, W, C) inputs,
// without padding.
type poolGeom struct {
	c, inH, inW int
	k, stride   int
	outH, outW  int
}

func (g *poolGeom) inSize() int  { return g.c * g.inH * g.inW }
func (g *poolGeom) outSize() int { return g.c * g.outH * g.outW }

// forward writes the window maxima of n examples into out and the index of
// each maximum (within its example) into arg. Ties go to the first element
// in (kh, kw) order. The comparisons are branch-free (on order-preserving
// integer keys): with data-dependent branches, mispredictions dominate.
//
// offs are the window offsets from windowOffsets.
func (g *poolGeom) forward(in []float32, n int, out []float32, arg []int32, offs []int) {
	isz, osz := g.inSize(), g.outSize()
	C := g.c
	for e := 0; e < n; e++ {
		x := in[e*isz : (e+1)*isz]
		y := out[e*osz : (e+1)*osz]
		a := arg[e*osz : (e+1)*osz]
		o := 0
		for oh := 0; oh < g.outH; oh++ {
			for ow := 0; ow < g.outW; ow++ {
				base := (oh*g.stride*g.inW + ow*g.stride) * C
				ys, as := y[o:o+C], a[o:o+C]
				for c := range ys {
					first := base + c
					bi, bk := first, orderKey(x[first])
					for _, off := range offs {
						i := first + off
						k := orderKey(x[i])
						m := int32((int64(bk) - int64(k)) >> 63) // −1 iff bk < k
						bk ^= (bk ^ k) & m
						bi ^= (bi ^ i) & int(m)
					}
					ys[c] = x[bi]
					as[c] = int32(bi)
				}
				o += C
			}
		}
	}
}

// windowOffsets returns the offsets, relative to a window's first element,
// of its other elements in (kh, kw) order.
func (g *poolGeom) windowOffsets() []int {
	var offs []int
	for ki := 0; ki < g.k; ki++ {
		for kj := 0; kj < g.k; kj++ {
			if ki != 0 || kj != 0 {
				offs = append(offs, (ki*g.inW+kj)*g.c)
			}
		}
	}
	return offs
}

// orderKey maps a float32 to an int32 with the same order (NaNs aside).
func orderKey(v float32) int32 {
	b := int32(math.Float32bits(v))
	return b ^ ((b >> 31) & 0x7fffffff)
}

// backward routes the output gradients dout of n examples to the argmax
// positions of din, which is zeroed first.
func (g *poolGeom) backward(dout []float32, arg []int32, n int, din []float32) {
	isz, osz := g.inSize(), g.outSize()
	clear(din[:n*isz])
	for e := 0; e < n; e++ {
		d := din[e*isz : (e+1)*isz]
		a := arg[e*osz : (e+1)*osz]
		for o, v := range dout[e*osz : (e+1)*osz] {
			d[a[o]] += v
		}
	}
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
		for i := 0; i < m; i++ {
			clear(c[i*ldc : i*ldc+n])
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
				kern4x16(kk, &a[i*ai+k0*al], ai, al, bp, ldb, &c[i*ldc+j], ldc)
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
