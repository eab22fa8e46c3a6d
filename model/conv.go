package model

import "github.com/privtrain/privtrain/internal/vec"

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

// span is the part of the input a convolution reads along one axis:
// (out−1)·stride + k positions from −pad.
func span(out, stride, k int) int { return (out-1)*stride + k }

// padded returns example e of in (n × inSize, (H, W, C)) as a row-major
// image of ph × pw × C whose position (h, w) is input (h − pad, w − pad),
// zero outside the input, and the row length of that image in float32s.
// Without padding the input itself is returned (it covers the whole span);
// otherwise the image is written into buf.
func (g *convGeom) padded(in []float32, e int, buf []float32) ([]float32, int) {
	x := in[e*g.inSize() : (e+1)*g.inSize()]
	ph, pw := span(g.outH, g.stride, g.k), span(g.outW, g.stride, g.k)
	if g.pad == 0 && ph <= g.inH && pw <= g.inW {
		return x, g.inW * g.inC
	}
	C := g.inC
	row := pw * C
	clear(buf[:ph*row])
	for h := 0; h < g.inH && h+g.pad < ph; h++ {
		w1 := min(g.inW, pw-g.pad)
		copy(buf[(h+g.pad)*row+g.pad*C:], x[h*g.inW*C:(h*g.inW+w1)*C])
	}
	return buf[:ph*row], row
}

// paddedSize is the length of the buffer padded needs.
func (g *convGeom) paddedSize() int {
	return span(g.outH, g.stride, g.k) * span(g.outW, g.stride, g.k) * g.inC
}

// im2col unfolds n examples of (H, W, C) input in (n × inSize) into cols
// (n·L × K). Each example is first laid into a zero-bordered image (see
// padded), so that every kernel row of every patch is one contiguous run
// of k·C values, copied without bounds logic; short runs of a multiple of
// 8 values (k = 8 with one or three channels: the first layer of the MNIST
// and CIFAR CNNs) are copied as arrays of 8.
func (g *convGeom) im2col(in []float32, n int, cols []float32) {
	K, L := g.cols(), g.rows()
	run := g.k * g.inC
	var buf []float32
	if g.pad > 0 {
		buf = make([]float32, g.paddedSize())
	}
	for e := 0; e < n; e++ {
		x, ld := g.padded(in, e, buf)
		base := cols[e*L*K : (e+1)*L*K]
		r := 0
		for oh := 0; oh < g.outH; oh++ {
			for ow := 0; ow < g.outW; ow++ {
				row := base[r*K : (r+1)*K]
				r++
				src := (oh*g.stride)*ld + ow*g.stride*g.inC
				if run%8 == 0 && run < 32 {
					for ki := 0; ki < g.k; ki++ {
						d, s := row[ki*run:(ki+1)*run], x[src:src+run]
						for t := 0; t < run; t += 8 {
							*(*[8]float32)(d[t : t+8]) = *(*[8]float32)(s[t : t+8])
						}
						src += ld
					}
					continue
				}
				for ki := 0; ki < g.k; ki++ {
					d, s := row[ki*run:(ki+1)*run], x[src:src+run]
					if run < 32 { // shorter than a memmove call is worth
						for t, v := range s {
							d[t] = v
						}
					} else {
						copy(d, s)
					}
					src += ld
				}
			}
		}
	}
}

// col2im adds the patch gradients dcols (n·L × K) back into din (n × inSize,
// (H, W, C) layout), which is overwritten. Each kernel row of a patch is a
// contiguous run of the zero-bordered image (see padded), accumulated with
// the vector kernel when it is long; the image's inside is then the
// example's input gradient. Every input position sums its patch
// contributions in patch order, as a direct scatter would.
func (g *convGeom) col2im(dcols []float32, n int, din []float32) {
	K, L := g.cols(), g.rows()
	isz := g.inSize()
	run := g.k * g.inC
	ph, pw := span(g.outH, g.stride, g.k), span(g.outW, g.stride, g.k)
	direct := g.pad == 0 && ph <= g.inH && pw <= g.inW
	var buf []float32
	if !direct {
		buf = make([]float32, g.paddedSize())
	}
	for e := 0; e < n; e++ {
		x := din[e*isz : (e+1)*isz]
		img, ld := x, g.inW*g.inC
		if !direct {
			img, ld = buf, pw*g.inC
		}
		clear(img)
		base := dcols[e*L*K : (e+1)*L*K]
		r := 0
		for oh := 0; oh < g.outH; oh++ {
			for ow := 0; ow < g.outW; ow++ {
				row := base[r*K : (r+1)*K]
				r++
				dst := (oh*g.stride)*ld + ow*g.stride*g.inC
				for ki := 0; ki < g.k; ki++ {
					d := img[dst : dst+run]
					s := row[ki*run : (ki+1)*run]
					if run >= 32 {
						vec.AddScaled(d, s, 1, false)
					} else {
						for t, v := range s {
							d[t] += v
						}
					}
					dst += ld
				}
			}
		}
		if direct {
			continue
		}
		C := g.inC
		for h := 0; h < g.inH; h++ {
			xr := x[h*g.inW*C : (h+1)*g.inW*C]
			if h+g.pad >= ph {
				clear(xr)
				continue
			}
			w1 := min(g.inW, pw-g.pad)
			copy(xr, img[(h+g.pad)*ld+g.pad*C:(h+g.pad)*ld+(g.pad+w1)*C])
			clear(xr[w1*C:])
		}
	}
}
