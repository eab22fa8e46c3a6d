package model

import (
	"fmt"
	"hash"
	"hash/fnv"
	"math"

	"github.com/chewxy/hm"
	"github.com/privtrain/privtrain/internal/vec"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// This file holds the Gorgonia ops the models are built from. Each op is
// bound to one graph of fixed chunk size n and owns its output buffer, so a
// compiled graph runs without allocating tensors. Activations are n × F
// matrices; images are (H, W, C) per row after the first convolution, which
// needs no transposes anywhere.
//
// The forward ops of parameterised layers take an extra zero-valued input e
// (z = f(a; θ) + e); differentiating the loss with respect to e yields
// ∂loss/∂z, from which per-example weight gradients are formed outside the
// graph. Weight nodes are not differentiated by Gorgonia.

// opBase carries what every op shares.
type opBase struct {
	name string // unique within a graph
	n    int    // chunk size (rows)
}

func (o *opBase) ReturnsPtr() bool      { return false }
func (o *opBase) CallsExtern() bool     { return false }
func (o *opBase) OverwritesInput() int  { return -1 }
func (o *opBase) String() string        { return o.name }
func (o *opBase) WriteHash(h hash.Hash) { fmt.Fprint(h, o.name) }
func (o *opBase) Hashcode() uint32 {
	h := fnv.New32a()
	o.WriteHash(h)
	return h.Sum32()
}

var (
	matT = G.TensorType{Dims: 2, Of: G.Float32}
	vecT = G.TensorType{Dims: 1, Of: G.Float32}
)

// f32s returns the float32 data of a Gorgonia tensor without copying or
// allocating (through tensor.Dense's typed accessor; Data would allocate
// through reflection).
func f32s(v G.Value) ([]float32, error) {
	t, ok := v.(*tensor.Dense)
	if !ok {
		return nil, fmt.Errorf("model: expected a tensor, got %T", v)
	}
	if t.Dtype() != tensor.Float32 || !t.IsNativelyAccessible() {
		return nil, fmt.Errorf("model: expected a float32 tensor in Go memory, got %v", t.Dtype())
	}
	return t.Float32s(), nil
}

// scalarF32 returns the value of a float32 scalar (a Gorgonia F32 or a
// one-element tensor).
func scalarF32(v G.Value) (float32, error) {
	if s, ok := v.(*G.F32); ok {
		return float32(*s), nil
	}
	d, err := f32s(v)
	if err != nil {
		return 0, err
	}
	if len(d) != 1 {
		return 0, fmt.Errorf("model: expected a scalar, got %d values", len(d))
	}
	return d[0], nil
}

// inputsF32 returns the data of want (≤ 4) inputs.
func inputsF32(want int, in []G.Value) (out [4][]float32, err error) {
	if len(in) != want {
		return out, fmt.Errorf("model: op expects %d inputs, got %d", want, len(in))
	}
	for i, v := range in {
		if out[i], err = f32s(v); err != nil {
			return out, err
		}
	}
	return out, nil
}

func newMat(r, c int) (*tensor.Dense, []float32) {
	d := alignedF32(r * c)
	return tensor.New(tensor.WithShape(r, c), tensor.WithBacking(d)), d
}

// convOp is z = conv(a, W) + b + e for a chunk (without b if !bias).
type convOp struct {
	opBase
	g       *convGeom
	needDA  bool // differentiate w.r.t. a (false for the first layer)
	bias    bool
	cols    []float32
	hwc     []float32 // the input transposed to (H, W, C), if chw (also the backward op's scratch)
	wt      []float32 // the kernel transposed to K × outC
	out     *tensor.Dense
	outData []float32
	dcols   []float32 // scratch of the backward op
}

func newConvOp(name string, n int, g *convGeom, needDA, bias bool) *convOp {
	o := &convOp{opBase: opBase{name: name, n: n}, g: g, needDA: needDA, bias: bias}
	o.cols = alignedF32(n * g.rows() * g.cols())
	if g.chw {
		o.hwc = alignedF32(n * g.inSize())
	}
	o.wt = alignedF32(g.cols() * g.outC)
	o.out, o.outData = newMat(n, g.outSize())
	return o
}

func (o *convOp) Arity() int {
	if o.bias {
		return 4
	}
	return 3
}
func (o *convOp) Type() hm.Type {
	if o.bias {
		return hm.NewFnType(matT, matT, vecT, matT, matT)
	}
	return hm.NewFnType(matT, matT, matT, matT)
}
func (o *convOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{o.n, o.g.outSize()}, nil
}
func (o *convOp) Do(in ...G.Value) (G.Value, error) { return o.UsePreallocDo(nil, in...) }

// UsePreallocDo writes the result into p when p fits (see dest).
func (o *convOp) UsePreallocDo(p G.Value, in ...G.Value) (G.Value, error) {
	out, outData := dest(p, o.out, o.outData)
	d, err := inputsF32(o.Arity(), in)
	if err != nil {
		return nil, err
	}
	a, w, b, e := d[0], d[1], d[2], d[o.Arity()-1]
	g := o.g
	K, L, C := g.cols(), g.rows(), g.outC
	if g.chw {
		g.toHWC(a, o.n, o.hwc)
		a = o.hwc
	}
	g.im2col(a, o.n, o.cols)
	z := outData
	for r := 0; r < o.n*L; r++ {
		row := z[r*C : (r+1)*C]
		er := e[r*C : (r+1)*C]
		if !o.bias {
			copy(row, er)
			continue
		}
		copy(row, b)
		for c, v := range er {
			row[c] += v
		}
	}
	transpose(w, C, K, o.wt)
	gemm(false, false, o.n*L, C, K, 1, o.cols, K, o.wt, C, 1, z, C)
	return out, nil
}
func (o *convOp) DiffWRT(n int) []bool {
	r := make([]bool, n)
	r[0] = o.needDA
	r[n-1] = true
	return r
}
func (o *convOp) SymDiff(in G.Nodes, _, grad *G.Node) (G.Nodes, error) {
	var da *G.Node
	r := make(G.Nodes, len(in))
	r[len(in)-1] = grad
	if o.needDA {
		bo := &convBackOp{opBase: opBase{name: o.name + "/dA", n: o.n}, conv: o}
		bo.out, bo.outData = newMat(o.n, o.g.inSize())
		o.dcols = alignedF32(len(o.cols))
		var err error
		if da, err = G.ApplyOp(bo, grad, in[1]); err != nil {
			return nil, err
		}
	}
	r[0] = da
	return r, nil
}

// convBackOp is ∂loss/∂a of a convolution, given ∂loss/∂z and W.
type convBackOp struct {
	opBase
	conv    *convOp
	out     *tensor.Dense
	outData []float32
}

func (o *convBackOp) Arity() int    { return 2 }
func (o *convBackOp) Type() hm.Type { return hm.NewFnType(matT, matT, matT) }
func (o *convBackOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{o.n, o.conv.g.inSize()}, nil
}
func (o *convBackOp) Do(in ...G.Value) (G.Value, error) { return o.UsePreallocDo(nil, in...) }

// UsePreallocDo writes the result into p when p fits (see dest).
func (o *convBackOp) UsePreallocDo(p G.Value, in ...G.Value) (G.Value, error) {
	out, outData := dest(p, o.out, o.outData)
	d, err := inputsF32(2, in)
	if err != nil {
		return nil, err
	}
	g := o.conv.g
	K, L, C := g.cols(), g.rows(), g.outC
	gemm(false, false, o.n*L, K, C, 1, d[0], C, d[1], K, 0, o.conv.dcols, K)
	if g.chw { // the input was (C, H, W): so is its gradient
		g.col2im(o.conv.dcols, o.n, o.conv.hwc)
		g.toCHW(o.conv.hwc, o.n, outData)
		return out, nil
	}
	g.col2im(o.conv.dcols, o.n, outData)
	return out, nil
}

// denseOp is z = a·Wᵀ (+ b) + e with W stored out × in.
type denseOp struct {
	opBase
	in, outN int
	bias     bool
	needDA   bool
	lastA    []float32 // the input of the last run, for weight gradients
	wt       []float32 // the kernel transposed to in × out
	out      *tensor.Dense
	outData  []float32
}

func newDenseOp(name string, n, in, out int, bias, needDA bool) *denseOp {
	o := &denseOp{opBase: opBase{name: name, n: n}, in: in, outN: out, bias: bias, needDA: needDA}
	o.wt = alignedF32(in * out)
	o.out, o.outData = newMat(n, out)
	return o
}

func (o *denseOp) Arity() int {
	if o.bias {
		return 4
	}
	return 3
}
func (o *denseOp) Type() hm.Type {
	if o.bias {
		return hm.NewFnType(matT, matT, vecT, matT, matT)
	}
	return hm.NewFnType(matT, matT, matT, matT)
}
func (o *denseOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{o.n, o.outN}, nil
}
func (o *denseOp) Do(in ...G.Value) (G.Value, error) { return o.UsePreallocDo(nil, in...) }

// UsePreallocDo writes the result into p when p fits (see dest).
func (o *denseOp) UsePreallocDo(p G.Value, in ...G.Value) (G.Value, error) {
	out, outData := dest(p, o.out, o.outData)
	d, err := inputsF32(o.Arity(), in)
	if err != nil {
		return nil, err
	}
	a, w, e := d[0], d[1], d[o.Arity()-1]
	z := outData
	copy(z, e[:len(z)])
	if o.bias {
		b := d[2]
		for r := 0; r < o.n; r++ {
			row := z[r*o.outN : (r+1)*o.outN]
			for c, v := range b {
				row[c] += v
			}
		}
	}
	if o.outN >= 16 { // wide enough for the fast kernel, which needs B untransposed
		transpose(w, o.outN, o.in, o.wt)
		gemm(false, false, o.n, o.outN, o.in, 1, a, o.in, o.wt, o.outN, 1, z, o.outN)
	} else {
		gemm(false, true, o.n, o.outN, o.in, 1, a, o.in, w, o.in, 1, z, o.outN)
	}
	o.lastA = a
	return out, nil
}
func (o *denseOp) DiffWRT(n int) []bool {
	r := make([]bool, n)
	r[0] = o.needDA
	r[n-1] = true
	return r
}
func (o *denseOp) SymDiff(in G.Nodes, _, grad *G.Node) (G.Nodes, error) {
	r := make(G.Nodes, len(in))
	r[len(in)-1] = grad
	if o.needDA {
		bo := &denseBackOp{opBase: opBase{name: o.name + "/dA", n: o.n}, dense: o}
		bo.out, bo.outData = newMat(o.n, o.in)
		var err error
		if r[0], err = G.ApplyOp(bo, grad, in[1]); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// denseBackOp is ∂loss/∂a = ∂loss/∂z · W.
type denseBackOp struct {
	opBase
	dense   *denseOp
	out     *tensor.Dense
	outData []float32
}

func (o *denseBackOp) Arity() int    { return 2 }
func (o *denseBackOp) Type() hm.Type { return hm.NewFnType(matT, matT, matT) }
func (o *denseBackOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{o.n, o.dense.in}, nil
}
func (o *denseBackOp) Do(in ...G.Value) (G.Value, error) { return o.UsePreallocDo(nil, in...) }

// UsePreallocDo writes the result into p when p fits (see dest).
func (o *denseBackOp) UsePreallocDo(p G.Value, in ...G.Value) (G.Value, error) {
	out, outData := dest(p, o.out, o.outData)
	d, err := inputsF32(2, in)
	if err != nil {
		return nil, err
	}
	dn := o.dense
	gemm(false, false, o.n, dn.in, dn.outN, 1, d[0], dn.outN, d[1], dn.in, 0, outData, dn.in)
	return out, nil
}

// reluOp is y = max(a, 0).
type reluOp struct {
	opBase
	size    int
	out     *tensor.Dense
	outData []float32
}

func newReluOp(name string, n, size int) *reluOp {
	o := &reluOp{opBase: opBase{name: name, n: n}, size: size}
	o.out, o.outData = newMat(n, size)
	return o
}

func (o *reluOp) Arity() int    { return 1 }
func (o *reluOp) Type() hm.Type { return hm.NewFnType(matT, matT) }
func (o *reluOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{o.n, o.size}, nil
}
func (o *reluOp) Do(in ...G.Value) (G.Value, error) { return o.UsePreallocDo(nil, in...) }

// UsePreallocDo writes the result into p when p fits (see dest).
func (o *reluOp) UsePreallocDo(p G.Value, in ...G.Value) (G.Value, error) {
	out, outData := dest(p, o.out, o.outData)
	d, err := inputsF32(1, in)
	if err != nil {
		return nil, err
	}
	vec.Relu(outData, d[0][:len(outData)])
	return out, nil
}
func (o *reluOp) DiffWRT(int) []bool { return []bool{true} }
func (o *reluOp) SymDiff(_ G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	bo := &reluBackOp{opBase: opBase{name: o.name + "/dA", n: o.n}, size: o.size}
	bo.out, bo.outData = newMat(o.n, o.size)
	da, err := G.ApplyOp(bo, out, grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{da}, nil
}

// reluBackOp is ∂loss/∂a = ∂loss/∂y · [y > 0].
type reluBackOp struct {
	opBase
	size    int
	out     *tensor.Dense
	outData []float32
}

func (o *reluBackOp) Arity() int    { return 2 }
func (o *reluBackOp) Type() hm.Type { return hm.NewFnType(matT, matT, matT) }
func (o *reluBackOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{o.n, o.size}, nil
}
func (o *reluBackOp) Do(in ...G.Value) (G.Value, error) { return o.UsePreallocDo(nil, in...) }

// UsePreallocDo writes the result into p when p fits (see dest).
func (o *reluBackOp) UsePreallocDo(p G.Value, in ...G.Value) (G.Value, error) {
	out, outData := dest(p, o.out, o.outData)
	d, err := inputsF32(2, in)
	if err != nil {
		return nil, err
	}
	// y = max(a, 0) ≥ +0, so y > 0 iff its bits are non-zero; the mask
	// avoids a data-dependent branch.
	vec.ReluBack(outData, d[0], d[1])
	return out, nil
}

// poolOp is 2-D max pooling on (H, W, C) rows.
type poolOp struct {
	opBase
	g       *poolGeom
	arg     []int32
	offs    []int
	out     *tensor.Dense
	outData []float32
}

func newPoolOp(name string, n int, g *poolGeom) *poolOp {
	o := &poolOp{opBase: opBase{name: name, n: n}, g: g}
	o.arg = make([]int32, n*g.outSize())
	o.offs = g.windowOffsets()
	o.out, o.outData = newMat(n, g.outSize())
	return o
}

func (o *poolOp) Arity() int    { return 1 }
func (o *poolOp) Type() hm.Type { return hm.NewFnType(matT, matT) }
func (o *poolOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{o.n, o.g.outSize()}, nil
}
func (o *poolOp) Do(in ...G.Value) (G.Value, error) { return o.UsePreallocDo(nil, in...) }

// UsePreallocDo writes the result into p when p fits (see dest).
func (o *poolOp) UsePreallocDo(p G.Value, in ...G.Value) (G.Value, error) {
	out, outData := dest(p, o.out, o.outData)
	d, err := inputsF32(1, in)
	if err != nil {
		return nil, err
	}
	o.g.forward(d[0], o.n, outData, o.arg, o.offs)
	return out, nil
}
func (o *poolOp) DiffWRT(int) []bool { return []bool{true} }
func (o *poolOp) SymDiff(_ G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	bo := &poolBackOp{opBase: opBase{name: o.name + "/dA", n: o.n}, pool: o}
	bo.out, bo.outData = newMat(o.n, o.g.inSize())
	da, err := G.ApplyOp(bo, grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{da}, nil
}

// poolBackOp routes ∂loss/∂y to the argmax of each pooling window.
type poolBackOp struct {
	opBase
	pool    *poolOp
	out     *tensor.Dense
	outData []float32
}

func (o *poolBackOp) Arity() int    { return 1 }
func (o *poolBackOp) Type() hm.Type { return hm.NewFnType(matT, matT) }
func (o *poolBackOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{o.n, o.pool.g.inSize()}, nil
}
func (o *poolBackOp) Do(in ...G.Value) (G.Value, error) { return o.UsePreallocDo(nil, in...) }

// UsePreallocDo writes the result into p when p fits (see dest).
func (o *poolBackOp) UsePreallocDo(p G.Value, in ...G.Value) (G.Value, error) {
	out, outData := dest(p, o.out, o.outData)
	d, err := inputsF32(1, in)
	if err != nil {
		return nil, err
	}
	o.pool.g.backward(d[0], o.pool.arg, o.n, outData)
	return out, nil
}

// Loss kinds.
const (
	lossSoftmaxCE = iota // −log softmax(z)_y
	lossSquared          // ½(z − y)²
)

// lossOp is Σ_i mask_i·ℓ(z_i, y_i); it keeps the per-example losses
// (masked rows are 0). y holds class indices (as float32) or targets.
type lossOp struct {
	opBase
	kind    int
	classes int
	losses  []float32
	val     G.F32
}

func (o *lossOp) Arity() int    { return 3 }
func (o *lossOp) Type() hm.Type { return hm.NewFnType(matT, vecT, vecT, G.Float32) }
func (o *lossOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.ScalarShape(), nil
}
func (o *lossOp) Do(in ...G.Value) (G.Value, error) {
	d, err := inputsF32(3, in)
	if err != nil {
		return nil, err
	}
	z, y, mask := d[0], d[1], d[2]
	C := o.classes
	var sum float64
	for i := 0; i < o.n; i++ {
		if mask[i] == 0 {
			o.losses[i] = 0
			continue
		}
		zi := z[i*C : (i+1)*C]
		var l float32
		switch o.kind {
		case lossSoftmaxCE:
			m := zi[0]
			for _, v := range zi[1:] {
				m = max(m, v)
			}
			var s float64
			for _, v := range zi {
				s += math.Exp(float64(v - m))
			}
			l = float32(math.Log(s)) + m - zi[int(y[i])]
		case lossSquared:
			r := zi[0] - y[i]
			l = r * r / 2
		}
		l *= mask[i]
		o.losses[i] = l
		sum += float64(l)
	}
	o.val = G.F32(sum)
	return &o.val, nil
}

// UsePreallocDo writes the loss into p if p is a float32 scalar, else
// returns the op's own.
func (o *lossOp) UsePreallocDo(p G.Value, in ...G.Value) (G.Value, error) {
	v, err := o.Do(in...)
	if s, ok := p.(*G.F32); ok && err == nil && s != &o.val {
		*s = o.val
		return s, nil
	}
	return v, err
}
func (o *lossOp) DiffWRT(int) []bool { return []bool{true, false, false} }
func (o *lossOp) SymDiff(in G.Nodes, _, grad *G.Node) (G.Nodes, error) {
	bo := &lossBackOp{opBase: opBase{name: o.name + "/dZ", n: o.n}, loss: o}
	bo.out, bo.outData = newMat(o.n, o.classes)
	dz, err := G.ApplyOp(bo, in[0], in[1], in[2], grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{dz, nil, nil}, nil
}

// lossBackOp is ∂loss/∂z: g·mask_i·(softmax(z_i) − onehot(y_i)) or
// g·mask_i·(z_i − y_i).
type lossBackOp struct {
	opBase
	loss    *lossOp
	out     *tensor.Dense
	outData []float32
}

func (o *lossBackOp) Arity() int    { return 4 }
func (o *lossBackOp) Type() hm.Type { return hm.NewFnType(matT, vecT, vecT, G.Float32, matT) }
func (o *lossBackOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{o.n, o.loss.classes}, nil
}
func (o *lossBackOp) Do(in ...G.Value) (G.Value, error) { return o.UsePreallocDo(nil, in...) }

// UsePreallocDo writes the result into p when p fits (see dest).
func (o *lossBackOp) UsePreallocDo(p G.Value, in ...G.Value) (G.Value, error) {
	out, outData := dest(p, o.out, o.outData)
	if len(in) != 4 {
		return nil, fmt.Errorf("model: op expects 4 inputs, got %d", len(in))
	}
	d, err := inputsF32(3, in[:3])
	if err != nil {
		return nil, err
	}
	g, err := scalarF32(in[3])
	if err != nil {
		return nil, err
	}
	z, y, mask := d[0], d[1], d[2]
	C := o.loss.classes
	for i := 0; i < o.n; i++ {
		dz := outData[i*C : (i+1)*C]
		s := g * mask[i]
		if s == 0 {
			clear(dz)
			continue
		}
		zi := z[i*C : (i+1)*C]
		switch o.loss.kind {
		case lossSoftmaxCE:
			m := zi[0]
			for _, v := range zi[1:] {
				m = max(m, v)
			}
			var sum float64
			for c, v := range zi {
				p := math.Exp(float64(v - m))
				dz[c] = float32(p)
				sum += p
			}
			inv := 1 / sum
			for c := range dz {
				dz[c] = float32(float64(dz[c])*inv) * s
			}
			dz[int(y[i])] -= s
		case lossSquared:
			dz[0] = s * (zi[0] - y[i])
		}
	}
	return out, nil
}
