package model

import (
	"fmt"
	"math"

	"github.com/privtrain/privtrain/internal/vec"
)

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
	g.forwardWith(kernelISA, in, n, out, arg, offs)
}

// forwardWith is forward with the kernels of a level: the AVX-512 kernel
// when the channel count is a multiple of 16, the AVX2 kernel when it is a
// multiple of 8, else Go (they all agree except on NaNs).
func (g *poolGeom) forwardWith(level vec.ISA, in []float32, n int, out []float32, arg []int32, offs []int) {
	isz, osz := g.inSize(), g.outSize()
	C := g.c
	kern := poolMaxAVX2
	if level >= vec.AVX512 && C%16 == 0 {
		kern = poolMaxAVX512
	}
	if level >= vec.AVX2 && C%8 == 0 && len(offs) > 0 && g.outH > 0 && g.outW > 0 {
		// The kernel reads x[base+off+j] for every window base, offset and
		// channel j < C: every offset must lie in [0, maxOff] and the last
		// window's farthest element inside each example, which the first
		// slice expression of the loop below checks.
		maxOff := 0
		for _, off := range offs {
			if off < 0 {
				panic(fmt.Sprintf("model: max-pool: negative window offset %d", off))
			}
			maxOff = max(maxOff, off)
		}
		last := ((g.outH-1)*g.stride*g.inW+(g.outW-1)*g.stride)*C + maxOff + C
		if last > isz {
			panic(fmt.Sprintf("model: max-pool: windows reach element %d of a %d-element input", last-1, isz))
		}
		for e := 0; e < n; e++ {
			x := in[e*isz : (e+1)*isz]
			y := out[e*osz : (e+1)*osz]
			a := arg[e*osz : (e+1)*osz]
			o := 0
			for oh := 0; oh < g.outH; oh++ {
				for ow := 0; ow < g.outW; ow++ {
					base := (oh*g.stride*g.inW + ow*g.stride) * C
					ys, as := y[o:o+C], a[o:o+C] // bounds of the kernel's writes
					kern(&x[0], base, &offs[0], len(offs), C, &ys[0], &as[0])
					o += C
				}
			}
		}
		return
	}
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
