package model_test

import (
	"math"
	"testing"

	"github.com/privtrain/privtrain/model"
	"github.com/privtrain/privtrain/model/modeltest"

	G "gorgonia.org/gorgonia"
)

// OpsScale is Scale{Shift: true} (example_layerkind_test.go) written only
// from Gorgonia's operators, with no per-example gradient rule: z = a⊙s + t.
// The model's generic rule (fallback.go) gives its per-example gradients.
type OpsScale struct{}

func (OpsScale) Kind() string    { return "ops-scale" }
func (OpsScale) Validate() error { return nil }
func (OpsScale) Resolve(in model.Shape) (model.Shape, []model.Param, error) {
	return in, []model.Param{{Name: "s", Shape: []int{1, in.Size()}, Init: model.ConstInit(1)},
		{Name: "t", Shape: []int{1, in.Size()}, Init: model.ConstInit(0)}}, nil
}
func (OpsScale) Build(c *model.BuildContext) (*G.Node, model.ExampleGrads, error) {
	z, err := G.BroadcastHadamardProd(c.Input, c.Params[0], nil, []byte{0})
	if err != nil {
		return nil, nil, err
	}
	z, err = G.BroadcastAdd(z, c.Params[1], nil, []byte{0})
	return z, nil, err
}

// OpsDense is a dense layer from Gorgonia's operators: z = aW + b.
type OpsDense struct {
	Out int `json:"out"`
}

func (OpsDense) Kind() string { return "ops-dense" }
func (l OpsDense) Validate() error {
	if l.Out < 1 {
		return errBadOut
	}
	return nil
}
func (l OpsDense) Resolve(in model.Shape) (model.Shape, []model.Param, error) {
	return model.Shape{Layout: model.Flat, Len: l.Out}, []model.Param{
		{Name: "w", Shape: []int{in.Size(), l.Out}, Init: model.KernelInit(in.Size(), l.Out)},
		{Name: "b", Shape: []int{1, l.Out}, Init: model.ConstInit(0)}}, nil
}
func (l OpsDense) Build(c *model.BuildContext) (*G.Node, model.ExampleGrads, error) {
	z, err := G.Mul(c.Input, c.Params[0])
	if err != nil {
		return nil, nil, err
	}
	z, err = G.BroadcastAdd(z, c.Params[1], nil, []byte{0})
	return z, nil, err
}

type errString string

func (e errString) Error() string { return string(e) }

const errBadOut = errString("ops-dense: out must be ≥ 1")

func init() {
	model.RegisterLayer("ops-scale", OpsScale{})
	model.RegisterLayer("ops-dense", OpsDense{})
}

func newNet(t testing.TB, shape []int, classes int, layers ...model.Layer) (model.Model, model.Spec) {
	t.Helper()
	s := model.Spec{Arch: "fallback", InputShape: shape, Classes: classes, Network: &model.Network{Init: model.InitTorch, Layers: layers}}
	m, err := model.New(s, 1)
	if err != nil {
		t.Fatal(err)
	}
	return m, s
}

// TestFallbackMatchesRule: the generic per-example gradients of OpsScale
// equal those of Scale's hand-written rule on the same parameters.
func TestFallbackMatchesRule(t *testing.T) {
	ruled, s := newNet(t, []int{1, 6, 6}, 3, model.Flatten{}, Scale{Shift: true}, model.Tanh{}, model.Dense{Out: 3})
	generic, _ := newNet(t, []int{1, 6, 6}, 3, model.Flatten{}, OpsScale{}, model.Tanh{}, model.Dense{Out: 3})
	if err := modeltest.Perturb(ruled, 0.2, 3); err != nil {
		t.Fatal(err)
	}
	if err := generic.SetParams(ruled.Params()); err != nil {
		t.Fatal(err)
	}
	const m = 70 // a large and a small chunk, padded
	b := modeltest.RandomBatch(s, m, 2)
	p := ruled.NumParams()
	want, got := make([]float32, m*p), make([]float32, m*p)
	lw, lg := make([]float32, m), make([]float32, m)
	if err := ruled.PerExampleGrads(b, want, lw); err != nil {
		t.Fatal(err)
	}
	if err := generic.PerExampleGrads(b, got, lg); err != nil {
		t.Fatal(err)
	}
	for k := range want {
		if d := math.Abs(float64(got[k] - want[k])); d > 1e-6*math.Max(1, math.Abs(float64(want[k]))) {
			t.Fatalf("row %d parameter %d: generic %v, Scale's rule %v", k/p, k%p, got[k], want[k])
		}
	}
	for i := range lw {
		if math.Abs(float64(lw[i]-lg[i])) > 1e-6 {
			t.Fatalf("loss %d: %v vs %v", i, lg[i], lw[i])
		}
	}
}

// TestFallbackCheck runs modeltest.Check (batch of one, Σ rows = batch
// gradient, finite differences, the chunked visit) on networks whose
// layers with parameters are partly or only Gorgonia-operator layers.
func TestFallbackCheck(t *testing.T) {
	for _, tc := range []struct {
		name   string
		shape  []int
		layers []model.Layer
	}{
		{"mlp", []int{10}, []model.Layer{OpsDense{Out: 8}, model.Tanh{}, OpsDense{Out: 3}}},
		// Tanh, not ReLU: finite differences across a ReLU kink fail for
		// the built-in rules too.
		{"conv-then-ops", []int{1, 8, 8}, []model.Layer{model.Conv{Out: 4, Kernel: 3, Stride: 1}, model.Tanh{}, model.Flatten{},
			OpsScale{}, OpsDense{Out: 6}, model.Tanh{}, model.Dense{Out: 3}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, s := newNet(t, tc.shape, 3, tc.layers...)
			if err := modeltest.Perturb(m, 0.1, 1); err != nil {
				t.Fatal(err)
			}
			if err := modeltest.Check(m, modeltest.RandomBatch(s, 300, 1), modeltest.Options{}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// BenchmarkFallbackDense compares the per-example gradients of an MLP on
// MNIST-shaped input (784-64-10) with the built-in dense rule and with the
// generic fallback (batch 256).
func BenchmarkFallbackDense(b *testing.B) {
	for _, tc := range []struct {
		name   string
		layers []model.Layer
	}{
		{"rule", []model.Layer{model.Flatten{}, model.Dense{Out: 64}, model.ReLU{}, model.Dense{Out: 10}}},
		{"generic", []model.Layer{model.Flatten{}, OpsDense{Out: 64}, model.ReLU{}, OpsDense{Out: 10}}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			m, s := newNet(b, []int{1, 28, 28}, 10, tc.layers...)
			const n = 256
			batch := modeltest.RandomBatch(s, n, 1)
			g, l := make([]float32, n*m.NumParams()), make([]float32, n)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := m.PerExampleGrads(batch, g, l); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
