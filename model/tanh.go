package model

import (
	"math"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// tanhOp is y = tanh(a), elementwise.
type tanhOp struct {
	opBase
	size int
	buf  outBuf
}

func newTanhOp(name string, n, size int) *tanhOp {
	return &tanhOp{opBase: opBase{name: name, n: n}, size: size, buf: newOutBuf(n, size)}
}

func (o *tanhOp) Arity() int    { return 1 }
func (o *tanhOp) Type() hm.Type { return hm.NewFnType(matT, matT) }
func (o *tanhOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{o.n, o.size}, nil
}
func (o *tanhOp) Do(in ...G.Value) (G.Value, error) { return o.UsePreallocDo(nil, in...) }
func (o *tanhOp) UsePreallocDo(p G.Value, in ...G.Value) (G.Value, error) {
	d, err := inputsF32(1, in)
	if err != nil {
		return nil, err
	}
	out, y := o.buf.dest(p)
	for i, v := range d[0][:len(y)] {
		y[i] = float32(math.Tanh(float64(v)))
	}
	return out, nil
}
func (o *tanhOp) DiffWRT(int) []bool { return []bool{true} }
func (o *tanhOp) SymDiff(_ G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	bo := &tanhBackOp{opBase: opBase{name: o.name + "/dA", n: o.n}, size: o.size, buf: newOutBuf(o.n, o.size)}
	da, err := G.ApplyOp(bo, out, grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{da}, nil
}

// tanhBackOp is ∂loss/∂a = ∂loss/∂y · (1 − y²).
type tanhBackOp struct {
	opBase
	size int
	buf  outBuf
}

func (o *tanhBackOp) Arity() int    { return 2 }
func (o *tanhBackOp) Type() hm.Type { return hm.NewFnType(matT, matT, matT) }
func (o *tanhBackOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{o.n, o.size}, nil
}
func (o *tanhBackOp) Do(in ...G.Value) (G.Value, error) { return o.UsePreallocDo(nil, in...) }
func (o *tanhBackOp) UsePreallocDo(p G.Value, in ...G.Value) (G.Value, error) {
	d, err := inputsF32(2, in)
	if err != nil {
		return nil, err
	}
	out, da := o.buf.dest(p)
	y, dy := d[0][:len(da)], d[1][:len(da)]
	for i := range da {
		da[i] = dy[i] * (1 - y[i]*y[i])
	}
	return out, nil
}
