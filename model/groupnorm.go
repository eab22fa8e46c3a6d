package model

import (
	"math"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// normEps is the ε of group normalisation (PyTorch's default).
const normEps = 1e-5

// normGeom is the geometry of a group normalisation on (H, W, C) rows: the
// C channels form groups of C/groups consecutive channels, and each
// example's group is normalised over its hw positions and channels.
type normGeom struct {
	c, hw, groups int
}

func (g *normGeom) size() int { return g.c * g.hw }

// groupNormOp is z = γ_c·x̂ + β_c + e, where x̂ = (a − μ)/√(σ² + ε) with
// the mean μ and the (biased) variance σ² of the example's group. γ comes
// as a 1 × C matrix, β as a C vector; their per-example gradients are
// formed outside the graph from ∂loss/∂z and x̂ (exampleGrads).
type groupNormOp struct {
	opBase
	g    *normGeom
	xhat []float32 // x̂ of the last run, n × size
	inv  []float64 // 1/√(σ² + ε) of the last run, n × groups
	buf  outBuf
}

func newGroupNormOp(name string, n int, g *normGeom) *groupNormOp {
	return &groupNormOp{opBase: opBase{name: name, n: n}, g: g,
		xhat: alignedF32(n * g.size()), inv: make([]float64, n*g.groups), buf: newOutBuf(n, g.size())}
}

func (o *groupNormOp) Arity() int    { return 4 }
func (o *groupNormOp) Type() hm.Type { return hm.NewFnType(matT, matT, vecT, matT, matT) }
func (o *groupNormOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{o.n, o.g.size()}, nil
}
func (o *groupNormOp) Do(in ...G.Value) (G.Value, error) { return o.UsePreallocDo(nil, in...) }
func (o *groupNormOp) UsePreallocDo(p G.Value, in ...G.Value) (G.Value, error) {
	d, err := inputsF32(4, in)
	if err != nil {
		return nil, err
	}
	a, gamma, beta, e := d[0], d[1], d[2], d[3]
	out, z := o.buf.dest(p)
	g := o.g
	size, C, cs := g.size(), g.c, g.c/g.groups
	cnt := float64(g.hw * cs)
	for i := 0; i < o.n; i++ {
		x := a[i*size : (i+1)*size]
		xh := o.xhat[i*size : (i+1)*size]
		for gi := 0; gi < g.groups; gi++ {
			c0 := gi * cs
			var sum float64
			for q := 0; q < g.hw; q++ {
				for _, v := range x[q*C+c0 : q*C+c0+cs] {
					sum += float64(v)
				}
			}
			mu := sum / cnt
			var ss float64
			for q := 0; q < g.hw; q++ {
				for _, v := range x[q*C+c0 : q*C+c0+cs] {
					t := float64(v) - mu
					ss += t * t
				}
			}
			inv := 1 / math.Sqrt(ss/cnt+normEps)
			o.inv[i*g.groups+gi] = inv
			for q := 0; q < g.hw; q++ {
				for c := c0; c < c0+cs; c++ {
					xh[q*C+c] = float32((float64(x[q*C+c]) - mu) * inv)
				}
			}
		}
		zi, ei := z[i*size:(i+1)*size], e[i*size:(i+1)*size]
		for q := 0; q < g.hw; q++ {
			for c := 0; c < C; c++ {
				k := q*C + c
				zi[k] = gamma[c]*xh[k] + beta[c] + ei[k]
			}
		}
	}
	return out, nil
}
func (o *groupNormOp) DiffWRT(int) []bool { return []bool{true, false, false, true} }
func (o *groupNormOp) SymDiff(in G.Nodes, _, grad *G.Node) (G.Nodes, error) {
	bo := &groupNormBackOp{opBase: opBase{name: o.name + "/dA", n: o.n}, norm: o, buf: newOutBuf(o.n, o.g.size())}
	da, err := G.ApplyOp(bo, grad, in[1])
	if err != nil {
		return nil, err
	}
	return G.Nodes{da, nil, nil, grad}, nil
}

// exampleGrads writes example i's gradients ∂ℓ_i/∂γ_c = Σ_q dz·x̂ and
// ∂ℓ_i/∂β_c = Σ_q dz (over the example's positions q) into gg and gb.
func (o *groupNormOp) exampleGrads(i int, dz, gg, gb []float32) {
	g := o.g
	size, C := g.size(), g.c
	dzi, xh := dz[i*size:(i+1)*size], o.xhat[i*size:(i+1)*size]
	for c := 0; c < C; c++ {
		var sg, sb float64
		for q := 0; q < g.hw; q++ {
			v := float64(dzi[q*C+c])
			sg += v * float64(xh[q*C+c])
			sb += v
		}
		gg[c], gb[c] = float32(sg), float32(sb)
	}
}

// groupNormBackOp is ∂loss/∂a of a group normalisation: with d = γ_c·∂loss/∂z,
// ∂loss/∂a = (d − mean(d) − x̂·mean(d·x̂))/√(σ² + ε), the means over the
// example's group.
type groupNormBackOp struct {
	opBase
	norm *groupNormOp
	buf  outBuf
}

func (o *groupNormBackOp) Arity() int    { return 2 }
func (o *groupNormBackOp) Type() hm.Type { return hm.NewFnType(matT, matT, matT) }
func (o *groupNormBackOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{o.n, o.norm.g.size()}, nil
}
func (o *groupNormBackOp) Do(in ...G.Value) (G.Value, error) { return o.UsePreallocDo(nil, in...) }
func (o *groupNormBackOp) UsePreallocDo(p G.Value, in ...G.Value) (G.Value, error) {
	d, err := inputsF32(2, in)
	if err != nil {
		return nil, err
	}
	dz, gamma := d[0], d[1]
	out, da := o.buf.dest(p)
	g := o.norm.g
	size, C, cs := g.size(), g.c, g.c/g.groups
	cnt := float64(g.hw * cs)
	for i := 0; i < o.n; i++ {
		dzi, xh, dai := dz[i*size:(i+1)*size], o.norm.xhat[i*size:(i+1)*size], da[i*size:(i+1)*size]
		for gi := 0; gi < g.groups; gi++ {
			c0 := gi * cs
			var m1, m2 float64
			for q := 0; q < g.hw; q++ {
				for c := c0; c < c0+cs; c++ {
					v := float64(gamma[c]) * float64(dzi[q*C+c])
					m1 += v
					m2 += v * float64(xh[q*C+c])
				}
			}
			m1 /= cnt
			m2 /= cnt
			inv := o.norm.inv[i*g.groups+gi]
			for q := 0; q < g.hw; q++ {
				for c := c0; c < c0+cs; c++ {
					k := q*C + c
					v := float64(gamma[c]) * float64(dzi[k])
					dai[k] = float32((v - m1 - float64(xh[k])*m2) * inv)
				}
			}
		}
	}
	return out, nil
}
