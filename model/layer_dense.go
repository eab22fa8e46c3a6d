package model

import (
	"fmt"

	G "gorgonia.org/gorgonia"
)

// KindDense is the name of Dense layers.
const KindDense = "dense"

// Dense is a fully connected layer z = W·a + b with Out ≥ 1 units on a
// flat input, without b if NoBias. Parameters: W (out, in), then b.
type Dense struct {
	Out    int  `json:"out,omitempty" yaml:"out,omitempty"`
	NoBias bool `json:"no_bias,omitempty" yaml:"no_bias,omitempty"`
}

func init() { RegisterLayer(KindDense, Dense{}) }

// Kind implements Layer.
func (Dense) Kind() string { return KindDense }

// Validate implements Layer.
func (l Dense) Validate() error { return checkRange("out", l.Out, 1) }

// Resolve implements Layer.
func (l Dense) Resolve(in Shape) (Shape, []Param, error) {
	if in.IsImage() {
		return Shape{}, nil, fmt.Errorf("dense on an image (%d×%d×%d) needs a flatten first", in.C, in.H, in.W)
	}
	params := []Param{{Name: "kernel", Shape: []int{l.Out, in.Len}, Init: KernelInit(in.Len, l.Out)}}
	if !l.NoBias {
		params = append(params, Param{Name: "bias", Shape: []int{l.Out}, Init: BiasInit(in.Len)})
	}
	return Shape{Layout: Flat, Len: l.Out}, params, nil
}

// Build implements Layer.
func (l Dense) Build(c *BuildContext) (*G.Node, ExampleGrads, error) {
	op := newDenseOp(c.Name, c.N, c.In.Len, l.Out, !l.NoBias, c.NeedInputGrad)
	z, err := G.ApplyOp(op, append(append(G.Nodes{c.Input}, c.Params...), c.E)...)
	if err != nil {
		return nil, nil, err
	}
	return z, denseGrads{op}, nil
}

// denseGrads forms a dense layer's gradients from ∂loss/∂z and its input
// a: example i's are the outer product dz_i a_iᵀ and dz_i.
type denseGrads struct{ op *denseOp }

// ExampleGrad implements ExampleGrads.
func (r denseGrads) ExampleGrad(i int, dz, dst []float32) {
	d := r.op
	nW := d.outN * d.in
	ai := d.lastA[i*d.in : (i+1)*d.in]
	dzi := dz[i*d.outN : (i+1)*d.outN]
	// The outer product dz_i a_iᵀ, as a rank-1 gemm.
	gemm(false, false, d.outN, d.in, 1, 1, dzi, 1, ai, d.in, 0, dst[:nW], d.in)
	if d.bias {
		copy(dst[nW:], dzi)
	}
}

// AddBatchGrad implements BatchGrads: dzᵀ·a over the chunk, one sgemm.
func (r denseGrads) AddBatchGrad(dz, dst []float32) {
	d := r.op
	nW := d.outN * d.in
	gemm(true, false, d.outN, d.in, d.n, 1, dz, d.outN, d.lastA, d.in, 1, dst[:nW], d.in)
	if d.bias {
		addRows(dst[nW:], dz, d.n)
	}
}
