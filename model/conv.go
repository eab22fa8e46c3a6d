package model

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
