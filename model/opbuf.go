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

// dest is dest for the op's own buffer.
func (b *outBuf) dest(p G.Value) (G.Value, []float32) { return dest(p, b.out, b.data) }

// dest returns where an op writes its result: the preallocated value p if
// it is a float32 tensor in Go memory of the output's shape (Gorgonia's
// UsePreallocDoer contract), else the op's own buffer own (data ownData).
// In the compiled programs every node has its own register, so p is the
// value the op returned on the previous run, that is own: the results, and
// the buffers read after a run (dense layer inputs, ∂loss/∂z, outputs
// through node values), do not depend on which one is written.
func dest(p G.Value, own *tensor.Dense, ownData []float32) (G.Value, []float32) {
	if t, ok := p.(*tensor.Dense); ok && t != own && t.Dtype() == tensor.Float32 && t.Shape().Eq(own.Shape()) && t.IsNativelyAccessible() {
		if d := t.Float32s(); len(d) == len(ownData) {
			return t, d
		}
	}
	return own, ownData
}

// valueF32 returns the float32 data of a node's value after a run.
func valueF32(n *G.Node) ([]float32, error) {
	v := n.Value()
	if v == nil {
		return nil, fmt.Errorf("model: node %s has no value", n.Name())
	}
	return f32s(v)
}
