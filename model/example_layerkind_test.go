package model_test

import (
	"encoding/json"
	"fmt"
	"hash"
	"hash/fnv"
	"log"

	"github.com/privtrain/privtrain/model"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Scale is a layer kind defined outside the model package: it multiplies
// every input value by a learnt factor of its own, z_j = s_j·a_j, and with
// Shift adds a learnt offset t_j. Its parameters are s (1 × size,
// initially 1), then t (size, initially 0).
type Scale struct {
	Shift bool `json:"shift,omitempty"`
}

// Kind implements model.Layer.
func (Scale) Kind() string { return "scale" }

// Validate implements model.Layer: Scale has nothing to check.
func (Scale) Validate() error { return nil }

// Resolve implements model.Layer: any input shape, kept as it is.
func (l Scale) Resolve(in model.Shape) (model.Shape, []model.Param, error) {
	params := []model.Param{{Name: "s", Shape: []int{1, in.Size()}, Init: model.ConstInit(1)}}
	if l.Shift {
		params = append(params, model.Param{Name: "t", Shape: []int{1, in.Size()}, Init: model.ConstInit(0)})
	}
	return in, params, nil
}

// Build implements model.Layer with an op of its own (scaleOp), which
// keeps what the gradient rule reads.
func (l Scale) Build(c *model.BuildContext) (*G.Node, model.ExampleGrads, error) {
	op := &scaleOp{name: c.Name, n: c.N, size: c.In.Size(), shift: l.Shift, needDA: c.NeedInputGrad}
	z, err := G.ApplyOp(op, append(append(G.Nodes{c.Input}, c.Params...), c.E)...)
	if err != nil {
		return nil, nil, err
	}
	return z, op, nil
}

// scaleOp is z = s⊙a (+ t) + e on a chunk of n rows; it keeps a copy of
// its input a, which Gorgonia may reuse once no later op reads it.
type scaleOp struct {
	name          string
	n, size       int
	shift, needDA bool
	a             []float32 // the input of the last run
}

func (o *scaleOp) Arity() int {
	if o.shift {
		return 4
	}
	return 3
}

func (o *scaleOp) Type() hm.Type {
	m := G.TensorType{Dims: 2, Of: G.Float32}
	if o.shift {
		return hm.NewFnType(m, m, m, m, m)
	}
	return hm.NewFnType(m, m, m, m)
}

func (o *scaleOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{o.n, o.size}, nil
}

func (o *scaleOp) Do(in ...G.Value) (G.Value, error) {
	if len(in) != o.Arity() {
		return nil, fmt.Errorf("scale: %d inputs, want %d", len(in), o.Arity())
	}
	a, s, e := in[0].(*tensor.Dense).Float32s(), in[1].(*tensor.Dense).Float32s(), in[len(in)-1].(*tensor.Dense).Float32s()
	t := make([]float32, o.size) // zero without a shift
	if o.shift {
		t = in[2].(*tensor.Dense).Float32s()
	}
	o.a = append(o.a[:0], a...)
	z := make([]float32, len(a))
	for r := 0; r < o.n; r++ {
		for j := 0; j < o.size; j++ {
			k := r*o.size + j
			z[k] = s[j]*a[k] + t[j] + e[k]
		}
	}
	return tensor.New(tensor.WithShape(o.n, o.size), tensor.WithBacking(z)), nil
}

func (o *scaleOp) ReturnsPtr() bool      { return false }
func (o *scaleOp) CallsExtern() bool     { return false }
func (o *scaleOp) OverwritesInput() int  { return -1 }
func (o *scaleOp) WriteHash(h hash.Hash) { fmt.Fprint(h, o.name) }
func (o *scaleOp) Hashcode() uint32 {
	h := fnv.New32a()
	o.WriteHash(h)
	return h.Sum32()
}
func (o *scaleOp) String() string { return o.name }

// DiffWRT: the input a (if needed) and e.
func (o *scaleOp) DiffWRT(n int) []bool {
	d := make([]bool, n)
	d[0], d[n-1] = o.needDA, true
	return d
}

// SymDiff: ∂loss/∂a = ∂loss/∂z ⊙ s (with Gorgonia's own operators),
// ∂loss/∂e = ∂loss/∂z.
func (o *scaleOp) SymDiff(in G.Nodes, _, grad *G.Node) (G.Nodes, error) {
	d := make(G.Nodes, len(in))
	d[len(in)-1] = grad
	if o.needDA {
		var err error
		if d[0], err = G.BroadcastHadamardProd(grad, in[1], nil, []byte{0}); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// ExampleGrad implements model.ExampleGrads, Scale's per-example gradient
// rule: ∂ℓ_i/∂s_j = ∂ℓ_i/∂z_ij · a_ij and ∂ℓ_i/∂t_j = ∂ℓ_i/∂z_ij.
func (o *scaleOp) ExampleGrad(i int, dz, dst []float32) {
	a := o.a[i*o.size : (i+1)*o.size]
	dzi := dz[i*o.size : (i+1)*o.size]
	for j, v := range dzi {
		dst[j] = v * a[j]
	}
	if o.shift {
		copy(dst[o.size:], dzi)
	}
}

func init() { model.RegisterLayer("scale", Scale{}) }

// A layer kind of one's own: registered (from an init function) with
// model.RegisterLayer, it is used in networks as Go values, JSON or YAML
// like the built-in kinds, and its per-example gradients can be checked
// with the modeltest package.
func ExampleRegisterLayer() {
	nw, err := model.ParseNetwork([]byte(`{"init": "torch", "layers": [
		{"kind": "conv", "out": 4, "kernel": 3, "stride": 2},
		{"kind": "scale", "shift": true},
		{"kind": "tanh"}, {"kind": "flatten"}, {"kind": "dense", "out": 10}]}`))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%#v\n", nw.Layers[1])
	m, err := model.New(model.Spec{Arch: "scaled", InputShape: []int{1, 28, 28}, Classes: 10, Network: &nw}, 1)
	if err != nil {
		log.Fatal(err)
	}
	// conv 9·4+4, scale 2·13·13·4, dense 676·10+10.
	fmt.Println(m.NumParams(), "parameters")
	js, _ := json.Marshal(model.Layers{Scale{}, Scale{Shift: true}})
	fmt.Println(string(js))
	_, err = model.ParseNetwork([]byte(`{"layers": [{"kind": "scale", "shfit": true}]}`))
	fmt.Println(err)
	// Output:
	// model_test.Scale{Shift:true}
	// 8162 parameters
	// [{"kind":"scale"},{"kind":"scale","shift":true}]
	// model: network JSON: layer 0: scale: unknown field "shfit"
}
