package model

import (
	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// avgPoolOp is 2-D average pooling on (H, W, C) rows, without padding:
// y = (1/k²)·Σ over each k × k window, summed in (kh, kw) order.
type avgPoolOp struct {
	opBase
	g   *poolGeom
	buf outBuf
}

func newAvgPoolOp(name string, n int, g *poolGeom) *avgPoolOp {
	return &avgPoolOp{opBase: opBase{name: name, n: n}, g: g, buf: newOutBuf(n, g.outSize())}
}

func (o *avgPoolOp) Arity() int    { return 1 }
func (o *avgPoolOp) Type() hm.Type { return hm.NewFnType(matT, matT) }
func (o *avgPoolOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{o.n, o.g.outSize()}, nil
}
func (o *avgPoolOp) Do(in ...G.Value) (G.Value, error) { return o.UsePreallocDo(nil, in...) }
func (o *avgPoolOp) UsePreallocDo(p G.Value, in ...G.Value) (G.Value, error) {
	d, err := inputsF32(1, in)
	if err != nil {
		return nil, err
	}
	out, y := o.buf.dest(p)
	g := o.g
	isz, osz, C := g.inSize(), g.outSize(), g.c
	inv := float32(1 / float64(g.k*g.k))
	for e := 0; e < o.n; e++ {
		x := d[0][e*isz : (e+1)*isz]
		ye := y[e*osz : (e+1)*osz]
		clear(ye)
		r := 0
		for oh := 0; oh < g.outH; oh++ {
			for ow := 0; ow < g.outW; ow++ {
				ys := ye[r : r+C]
				for ki := 0; ki < g.k; ki++ {
					for kj := 0; kj < g.k; kj++ {
						base := ((oh*g.stride+ki)*g.inW + ow*g.stride + kj) * C
						for c, v := range x[base : base+C] {
							ys[c] += v
						}
					}
				}
				for c := range ys {
					ys[c] *= inv
				}
				r += C
			}
		}
	}
	return out, nil
}
func (o *avgPoolOp) DiffWRT(int) []bool { return []bool{true} }
func (o *avgPoolOp) SymDiff(_ G.Nodes, _, grad *G.Node) (G.Nodes, error) {
	bo := &avgPoolBackOp{opBase: opBase{name: o.name + "/dA", n: o.n}, g: o.g, buf: newOutBuf(o.n, o.g.inSize())}
	da, err := G.ApplyOp(bo, grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{da}, nil
}

// avgPoolBackOp spreads ∂loss/∂y evenly, times 1/k², over each window.
type avgPoolBackOp struct {
	opBase
	g   *poolGeom
	buf outBuf
}

func (o *avgPoolBackOp) Arity() int    { return 1 }
func (o *avgPoolBackOp) Type() hm.Type { return hm.NewFnType(matT, matT) }
func (o *avgPoolBackOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{o.n, o.g.inSize()}, nil
}
func (o *avgPoolBackOp) Do(in ...G.Value) (G.Value, error) { return o.UsePreallocDo(nil, in...) }
func (o *avgPoolBackOp) UsePreallocDo(p G.Value, in ...G.Value) (G.Value, error) {
	d, err := inputsF32(1, in)
	if err != nil {
		return nil, err
	}
	out, din := o.buf.dest(p)
	g := o.g
	isz, osz, C := g.inSize(), g.outSize(), g.c
	inv := float32(1 / float64(g.k*g.k))
	clear(din)
	for e := 0; e < o.n; e++ {
		dy := d[0][e*osz : (e+1)*osz]
		dx := din[e*isz : (e+1)*isz]
		r := 0
		for oh := 0; oh < g.outH; oh++ {
			for ow := 0; ow < g.outW; ow++ {
				ys := dy[r : r+C]
				for ki := 0; ki < g.k; ki++ {
					for kj := 0; kj < g.k; kj++ {
						base := ((oh*g.stride+ki)*g.inW + ow*g.stride + kj) * C
						xs := dx[base : base+C]
						for c, v := range ys {
							xs[c] += v * inv
						}
					}
				}
				r += C
			}
		}
	}
	return out, nil
}
