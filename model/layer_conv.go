package model

import (
	"errors"
	"fmt"

	G "gorgonia.org/gorgonia"
)

// KindConv is the name of Conv layers.
const KindConv = "conv"

// Conv is a 2-D convolution with Out ≥ 1 output channels, a Kernel × Kernel
// kernel (Kernel ≥ 1), Stride ≥ 1 and zero padding 0 ≤ Pad < Kernel, and a
// bias per output channel unless NoBias. Its input is an image in either
// order; its output is in (H, W, C) order. Parameters: the kernel, laid out
// (out channel, kernel row, kernel column, in channel), then the bias.
type Conv struct {
	Out    int  `json:"out,omitempty" yaml:"out,omitempty"`
	Kernel int  `json:"kernel,omitempty" yaml:"kernel,omitempty"`
	Stride int  `json:"stride,omitempty" yaml:"stride,omitempty"`
	Pad    int  `json:"pad,omitempty" yaml:"pad,omitempty"`
	NoBias bool `json:"no_bias,omitempty" yaml:"no_bias,omitempty"`
}

func init() { RegisterLayer(KindConv, Conv{}) }

// Kind implements Layer.
func (Conv) Kind() string { return KindConv }

// Validate implements Layer.
func (l Conv) Validate() error {
	if err := firstErr(checkRange("out", l.Out, 1), checkRange("kernel", l.Kernel, 1),
		checkRange("stride", l.Stride, 1), checkRange("pad", l.Pad, 0)); err != nil {
		return err
	}
	if l.Pad >= l.Kernel {
		return fmt.Errorf("pad %d must be less than the kernel size %d", l.Pad, l.Kernel)
	}
	return nil
}

// geom returns the convolution's geometry on input in (an image).
func (l Conv) geom(in Shape) *convGeom {
	oh := (in.H+2*l.Pad-l.Kernel)/l.Stride + 1
	ow := (in.W+2*l.Pad-l.Kernel)/l.Stride + 1
	return &convGeom{inC: in.C, inH: in.H, inW: in.W, chw: in.Layout == CHW && in.C > 1,
		outC: l.Out, k: l.Kernel, stride: l.Stride, pad: l.Pad, outH: oh, outW: ow}
}

// Resolve implements Layer.
func (l Conv) Resolve(in Shape) (Shape, []Param, error) {
	if !in.IsImage() {
		return Shape{}, nil, errors.New("convolution needs an image (C, H, W), but its input is flat")
	}
	if in.H+2*l.Pad < l.Kernel || in.W+2*l.Pad < l.Kernel {
		return Shape{}, nil, fmt.Errorf("input too small: conv %d×%d (pad %d) sees %d×%d", l.Kernel, l.Kernel, l.Pad, in.H, in.W)
	}
	g := l.geom(in)
	if int64(g.outH)*int64(g.outW)*int64(l.Kernel*l.Kernel)*int64(in.C) > maxUnfold {
		return Shape{}, nil, fmt.Errorf("input too large: would unfold %d×%d patches of %d values per example", g.outH*g.outW, l.Kernel*l.Kernel, in.C)
	}
	fanIn, fanOut := l.Kernel*l.Kernel*in.C, l.Kernel*l.Kernel*l.Out
	params := []Param{{Name: "kernel", Shape: []int{l.Out, g.cols()}, Init: KernelInit(fanIn, fanOut)}}
	if !l.NoBias {
		params = append(params, Param{Name: "bias", Shape: []int{l.Out}, Init: BiasInit(fanIn)})
	}
	return Shape{Layout: HWC, C: l.Out, H: g.outH, W: g.outW}, params, nil
}

// Build implements Layer: im2col and one sgemm per chunk (convOp).
func (l Conv) Build(c *BuildContext) (*G.Node, ExampleGrads, error) {
	op := newConvOp(c.Name, c.N, l.geom(c.In), c.NeedInputGrad, !l.NoBias)
	z, err := G.ApplyOp(op, append(append(G.Nodes{c.Input}, c.Params...), c.E)...)
	if err != nil {
		return nil, nil, err
	}
	return z, convGrads{op}, nil
}

// convGrads forms a convolution's weight gradients from ∂loss/∂z and the
// unfolded patches of the last run: example i's kernel gradient is
// dz_iᵀ·cols_i (outC × K, one sgemm over its L output positions), its bias
// gradient the sum of dz_i's L rows.
type convGrads struct{ op *convOp }

// ExampleGrad implements ExampleGrads.
func (r convGrads) ExampleGrad(i int, dz, dst []float32) {
	c := r.op
	g := c.g
	L, K, C := g.rows(), g.cols(), g.outC
	nW := K * C
	dzi := dz[i*L*C : (i+1)*L*C]
	gemm(true, false, C, K, L, 1, dzi, C, c.cols[i*L*K:(i+1)*L*K], K, 0, dst[:nW], K)
	if c.bias {
		gb := dst[nW:]
		copy(gb, dzi[:C])
		addRows(gb, dzi[C:], L-1)
	}
}

// AddBatchGrad implements BatchGrads: one sgemm over the chunk's rows.
func (r convGrads) AddBatchGrad(dz, dst []float32) {
	c := r.op
	g := c.g
	rows := c.n * g.rows()
	nW := g.cols() * g.outC
	gemm(true, false, g.outC, g.cols(), rows, 1, dz, g.outC, c.cols, g.cols(), 1, dst[:nW], g.cols())
	if c.bias {
		addRows(dst[nW:], dz, rows)
	}
}

// toCHW transposes n examples from (H, W, C) to (C, H, W) layout (the
// inverse of toHWC).
func (g *convGeom) toCHW(in []float32, n int, out []float32) {
	C, HW := g.inC, g.inH*g.inW
	for e := 0; e < n; e++ {
		x := in[e*C*HW : (e+1)*C*HW]
		y := out[e*C*HW : (e+1)*C*HW]
		for c := 0; c < C; c++ {
			yc := y[c*HW : (c+1)*HW]
			for p := range yc {
				yc[p] = x[p*C+c]
			}
		}
	}
}
