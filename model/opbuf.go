package model

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// outBuf is an op's own output matrix, used unless Gorgonia hands the op a
// preallocated value that fits.
type outBuf struct {
	out  *tensor.Dense
	data []float32
}

func newOutBuf(rows, cols int) outBuf {
	t, d := newMat(rows, cols)
	return outBuf{out: t, data: d}
}

// dest returns where an op writes its result: the preallocated value p if
// it is a float32 tensor of the output's shape (Gorgonia's UsePreallocDoer
// contract), else the op's own buffer. In the compiled programs every node
// has its own register, so p is the value the op returned on the previous
// run.
func (b *outBuf) dest(p G.Value) (G.Value, []float32) {
	if t, ok := p.(*tensor.Dense); ok && t != b.out && t.Dtype() == tensor.Float32 && t.Shape().Eq(b.out.Shape()) && t.IsNativelyAccessible() {
		if d := t.Float32s(); len(d) == len(b.data) {
			return t, d
		}
	}
	return b.out, b.data
}

// valueF32 returns the float32 data of a node's value after a run.
func valueF32(n *G.Node) ([]float32, error) {
	v := n.Value()
	if v == nil {
		return nil, fmt.Errorf("model: node %s has no value", n.Name())
	}
	return f32s(v)
}
