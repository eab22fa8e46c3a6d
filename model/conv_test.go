package model

import (
	"math/rand/v2"
	"testing"
)

// TestIm2colCol2im checks im2col and col2im bit for bit against the direct
// versions on geometries with and without padding, strides 1–3, channels
// 1–16 and spans that leave input rows unread.
func TestIm2colCol2im(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	geoms := []convGeom{
		{inC: 1, inH: 28, inW: 28, outC: 16, k: 8, stride: 2, pad: 3, outH: 14, outW: 14},
		{inC: 16, inH: 13, inW: 13, outC: 32, k: 4, stride: 2, outH: 5, outW: 5},
		{inC: 3, inH: 32, inW: 32, outC: 8, k: 3, stride: 1, pad: 1, outH: 32, outW: 32},
		{inC: 2, inH: 9, inW: 7, outC: 4, k: 3, stride: 3, pad: 2, outH: 4, outW: 3},
		{inC: 1, inH: 10, inW: 10, outC: 4, k: 8, stride: 1, pad: 0, outH: 3, outW: 3},
		{inC: 32, inH: 6, inW: 6, outC: 4, k: 2, stride: 2, pad: 0, outH: 3, outW: 3},
		{inC: 1, inH: 5, inW: 5, outC: 1, k: 8, stride: 1, pad: 4, outH: 6, outW: 6},
	}
	for gi, g := range geoms {
		n := 3
		in := make([]float32, n*g.inSize())
		for i := range in {
			in[i] = float32(rng.NormFloat64())
		}
		sz := n * g.rows() * g.cols()
		want, got := make([]float32, sz), make([]float32, sz)
		for i := range got {
			got[i] = 7 // every value must be written
		}
		g.im2colRef(in, n, want)
		g.im2col(in, n, got)
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("geometry %d: im2col[%d] = %v, want %v", gi, i, got[i], want[i])
			}
		}
		dcols := make([]float32, sz)
		for i := range dcols {
			dcols[i] = float32(rng.NormFloat64())
		}
		wantIn, gotIn := make([]float32, len(in)), make([]float32, len(in))
		for i := range gotIn {
			gotIn[i] = 9
		}
		g.col2imRef(dcols, n, wantIn)
		g.col2im(dcols, n, gotIn)
		for i := range wantIn {
			if gotIn[i] != wantIn[i] {
				t.Fatalf("geometry %d: col2im[%d] = %v, want %v", gi, i, gotIn[i], wantIn[i])
			}
		}
	}
}

// BenchmarkIm2col runs im2col and col2im beside the direct versions on the
// MNIST CNN's convolutions (a chunk of 64 examples).
func BenchmarkIm2col(b *testing.B) {
	for _, c := range []struct {
		name string
		g    convGeom
	}{
		{"mnist-conv1", convGeom{inC: 1, inH: 28, inW: 28, outC: 16, k: 8, stride: 2, pad: 3, outH: 14, outW: 14}},
		{"mnist-conv2", convGeom{inC: 16, inH: 13, inW: 13, outC: 32, k: 4, stride: 2, outH: 5, outW: 5}},
		{"cifar-conv1", convGeom{inC: 3, inH: 32, inW: 32, outC: 16, k: 8, stride: 2, pad: 3, outH: 16, outW: 16}},
	} {
		b.Run(c.name, func(b *testing.B) {
			n := 64
			rng := rand.New(rand.NewPCG(1, 1))
			in := make([]float32, n*c.g.inSize())
			for i := range in {
				in[i] = rng.Float32()
			}
			cols := make([]float32, n*c.g.rows()*c.g.cols())
			b.Run("im2col", func(b *testing.B) {
				for range b.N {
					c.g.im2col(in, n, cols)
				}
			})
			b.Run("im2col-direct", func(b *testing.B) {
				for range b.N {
					c.g.im2colRef(in, n, cols)
				}
			})
			b.Run("col2im", func(b *testing.B) {
				for range b.N {
					c.g.col2im(cols, n, in)
				}
			})
			b.Run("col2im-direct", func(b *testing.B) {
				for range b.N {
					c.g.col2imRef(cols, n, in)
				}
			})
		})
	}
}

// im2colRef is the direct im2col (before the zero-bordered image): it
// unfolds n examples of (H, W, C) input in (n × inSize) into cols
// (n·L × K).
func (g *convGeom) im2colRef(in []float32, n int, cols []float32) {
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
					// The part of a kernel row inside the image, columns
					// [kj0, kj1), is one contiguous run of the input.
					kj0, kj1 := max(0, -w0), min(g.k, g.inW-w0)
					run := row[j : j+g.k*g.inC]
					j += g.k * g.inC
					if kj1 <= kj0 {
						clear(run)
						continue
					}
					clear(run[:kj0*g.inC])
					clear(run[kj1*g.inC:])
					src := x[(h*g.inW+w0+kj0)*g.inC : (h*g.inW+w0+kj1)*g.inC]
					dst := run[kj0*g.inC : kj1*g.inC]
					if len(dst) < 32 {
						for t, v := range src {
							dst[t] = v
						}
					} else {
						copy(dst, src)
					}
				}
			}
		}
	}
}

// col2imRef is the direct col2im: it adds the patch gradients dcols (n·L × K) back into din (n × inSize,
// (H, W, C) layout), which is zeroed first.
func (g *convGeom) col2imRef(dcols []float32, n int, din []float32) {
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
