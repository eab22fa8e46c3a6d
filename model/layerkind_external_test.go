package model_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/privtrain/privtrain/model"
	"github.com/privtrain/privtrain/model/modeltest"

	"gopkg.in/yaml.v3"
	G "gorgonia.org/gorgonia"
)

// externalSpecs use Scale (example_layerkind_test.go), a kind registered
// from outside the package: after a convolution (on an (H, W, C) image,
// with and without shift), on the raw input (the first layer with
// parameters, so nothing before it is differentiated), after a flatten,
// and in a regression.
var externalSpecs = []model.Spec{
	{Arch: "ext-cnn", InputShape: []int{2, 9, 9}, Classes: 3, Network: &model.Network{Init: model.InitTorch, Layers: model.Layers{
		model.Conv{Out: 4, Kernel: 3, Stride: 2, Pad: 1},
		Scale{Shift: true},
		model.Tanh{},
		model.AvgPool{Kernel: 2, Stride: 1},
		model.Flatten{},
		Scale{},
		model.Dense{Out: 3},
	}}},
	{Arch: "ext-first", InputShape: []int{3, 5, 5}, Classes: 4, Network: &model.Network{Init: model.InitTorch, Layers: model.Layers{
		Scale{Shift: true},
		model.Conv{Out: 3, Kernel: 3, Stride: 1, NoBias: true},
		model.Tanh{},
		model.Flatten{},
		model.Dense{Out: 4},
	}}},
	{Arch: "ext-regression", InputShape: []int{6}, Classes: 1, L2: 0.05, Network: &model.Network{Loss: model.LossSquared, Layers: model.Layers{
		model.Dense{Out: 5},
		model.Tanh{},
		Scale{Shift: true},
		model.Dense{Out: 1, NoBias: true},
	}}},
}

// TestExternalLayerKind checks a layer kind registered from another
// package: it is listed, read and written in JSON and YAML, counted, and
// its per-example gradients pass the modeltest checks (batch of one,
// Σ rows = batch gradient across chunks, finite differences).
func TestExternalLayerKind(t *testing.T) {
	if !slices.Contains(model.Kinds(), "scale") {
		t.Fatalf("Kinds %v lacks scale", model.Kinds())
	}
	wantP := map[string]int{
		// conv 2·9·4+4, scale 2·5·5·4, scale 4·4·4 (after the pool), dense 64·3+3.
		"ext-cnn": 76 + 200 + 64 + 195,
		// scale 2·75, conv 3·9·3, dense 27·4+4.
		"ext-first": 150 + 81 + 112,
		// dense 6·5+5, scale 2·5, dense 5.
		"ext-regression": 35 + 10 + 5,
	}
	for _, s := range externalSpecs {
		t.Run(s.Arch, func(t *testing.T) {
			js, err := json.Marshal(s.Network)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(js), `{"kind":"scale","shift":true}`) {
				t.Errorf("JSON form %s", js)
			}
			back, err := model.ParseNetwork(js)
			if err != nil || !back.Equal(s.Network) {
				t.Fatalf("JSON round trip: %+v, %v", back, err)
			}
			ym, err := yaml.Marshal(s.Network)
			if err != nil {
				t.Fatal(err)
			}
			if back, err = model.ParseNetwork(ym); err != nil || !back.Equal(s.Network) {
				t.Fatalf("YAML round trip: %+v, %v\n%s", back, err, ym)
			}
			m, err := model.New(s, 1)
			if err != nil {
				t.Fatal(err)
			}
			if got := m.NumParams(); got != wantP[s.Arch] {
				t.Errorf("%d parameters, want %d", got, wantP[s.Arch])
			}
			if err := modeltest.Perturb(m, 0.1, 2); err != nil {
				t.Fatal(err)
			}
			// 300 examples span large and small chunks.
			if err := modeltest.Check(m, modeltest.RandomBatch(s, 300, 3), modeltest.Options{}); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestModeltestBuiltinKinds runs the exported harness on smooth networks
// of the built-in parameterised kinds (it must pass on them as the
// package's own tests do).
func TestModeltestBuiltinKinds(t *testing.T) {
	for _, s := range []model.Spec{
		{Arch: "mt-cnn", InputShape: []int{2, 8, 8}, Classes: 3, Network: &model.Network{Init: model.InitTorch, Layers: model.Layers{
			model.Conv{Out: 4, Kernel: 3, Stride: 1, Pad: 1}, model.GroupNorm{Groups: 2}, model.Tanh{},
			model.AvgPool{Kernel: 2, Stride: 2}, model.Conv{Out: 3, Kernel: 2, Stride: 1, NoBias: true}, model.Tanh{},
			model.Flatten{}, model.Dense{Out: 3},
		}}},
		{Arch: "logreg", InputShape: []int{7}, Classes: 3},
		{Arch: "linreg", InputShape: []int{5}, Classes: 1, L2: 0.2},
	} {
		m, err := model.New(s, 1)
		if err != nil {
			t.Fatal(err)
		}
		if err := modeltest.Perturb(m, 0.1, 2); err != nil {
			t.Fatal(err)
		}
		if err := modeltest.Check(m, modeltest.RandomBatch(s, 300, 4), modeltest.Options{}); err != nil {
			t.Errorf("%s: %v", s.Arch, err)
		}
	}
}

// brokenScale is Scale with a broken gradient rule, to show that the
// harness catches it.
type brokenScale struct {
	Scale
	Bug int `json:"bug"` // 1: forgets the factor a; 2: reads example 0's row for every example
}

func (brokenScale) Kind() string { return "broken-scale" }

func (l brokenScale) Build(c *model.BuildContext) (*G.Node, model.ExampleGrads, error) {
	z, r, err := l.Scale.Build(c)
	if err != nil {
		return nil, nil, err
	}
	return z, brokenGrads{r.(*scaleOp), l.Bug}, nil
}

type brokenGrads struct {
	*scaleOp
	bug int
}

func (r brokenGrads) ExampleGrad(i int, dz, dst []float32) {
	switch r.bug {
	case 1:
		copy(dst, dz[i*r.size:(i+1)*r.size])
	case 2:
		r.scaleOp.ExampleGrad(0, dz, dst)
	}
}

func init() { model.RegisterLayer("broken-scale", brokenScale{}) }

// TestModeltestCatchesBrokenRules: a wrong formula fails the finite
// differences, a wrong row the batch-of-one and Σ-rows checks.
func TestModeltestCatchesBrokenRules(t *testing.T) {
	for bug, want := range map[int][]string{
		1: {"central difference"},
		2: {"batch-of-one gradient", "sum of the per-example gradients"},
	} {
		s := model.Spec{Arch: "broken", InputShape: []int{6}, Classes: 3, Network: &model.Network{Init: model.InitTorch, Layers: model.Layers{
			model.Dense{Out: 4}, model.Tanh{}, brokenScale{Bug: bug}, model.Dense{Out: 3},
		}}}
		m, err := model.New(s, 1)
		if err != nil {
			t.Fatal(err)
		}
		if err := modeltest.Perturb(m, 0.1, 2); err != nil {
			t.Fatal(err)
		}
		before := m.Params()
		err = modeltest.Check(m, modeltest.RandomBatch(s, 50, 5), modeltest.Options{})
		for _, w := range want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("bug %d: error %v, want one containing %q", bug, err, w)
			}
		}
		if !slices.Equal(m.Params(), before) {
			t.Errorf("bug %d: Check changed the parameters", bug)
		}
	}
}
