package model

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
	G "gorgonia.org/gorgonia"
)

// customSpecs are small networks of their own that together use every layer
// kind; init adds them to testSpecs, so the prediction, per-example gradient
// (batch of one, Σ rows = batch gradient) and finite-difference tests of
// model_test.go run on them as on the built-in architectures.
var customSpecs = []Spec{
	{Arch: "test-every-kind", InputShape: []int{2, 9, 9}, Classes: 3, Network: &Network{Init: InitTorch, Layers: Layers{
		Conv{Out: 4, Kernel: 3, Stride: 1, Pad: 1},
		GroupNorm{Groups: 2},
		Tanh{},
		AvgPool{Kernel: 2, Stride: 1},
		Conv{Out: 6, Kernel: 3, Stride: 2},
		ReLU{},
		MaxPool{Kernel: 2, Stride: 1},
		Flatten{},
		Dense{Out: 5},
		Tanh{},
		Dense{Out: 3},
	}}},
	{Arch: "test-instance-norm", InputShape: []int{1, 8, 8}, Classes: 4, Network: &Network{Layers: Layers{
		Conv{Out: 6, Kernel: 3, Stride: 1},
		GroupNorm{Groups: 6},
		ReLU{},
		AvgPool{Kernel: 2, Stride: 2},
		Flatten{},
		Dense{Out: 4},
	}}},
	{Arch: "test-layer-norm", InputShape: []int{3, 6, 6}, Classes: 2, Network: &Network{Layers: Layers{
		Tanh{},
		Conv{Out: 4, Kernel: 2, Stride: 2},
		GroupNorm{Groups: 1},
		Flatten{},
		Dense{Out: 2, NoBias: true},
	}}},
	{Arch: "test-conv-no-bias", InputShape: []int{3, 7, 7}, Classes: 3, Network: &Network{Init: InitTorch, Layers: Layers{
		Conv{Out: 4, Kernel: 3, Stride: 2, Pad: 1, NoBias: true},
		Tanh{},
		Conv{Out: 5, Kernel: 2, Stride: 1, NoBias: true},
		GroupNorm{Groups: 5},
		Flatten{},
		Dense{Out: 3},
	}}},
	{Arch: "test-mlp", InputShape: []int{2, 3, 3}, Classes: 3, Network: &Network{Init: InitTorch, Layers: Layers{
		Flatten{},
		Dense{Out: 7},
		Tanh{},
		Dense{Out: 3},
	}}},
	{Arch: "test-tanh-regression", InputShape: []int{5}, Classes: 1, L2: 0.1, Network: &Network{Loss: LossSquared, Layers: Layers{
		Dense{Out: 4, NoBias: true},
		Tanh{},
		Dense{Out: 1},
	}}},
}

func init() { testSpecs = append(testSpecs, customSpecs...) }

// TestCustomSpecsUseEveryKind keeps customSpecs covering every layer kind.
func TestCustomSpecsUseEveryKind(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range customSpecs {
		for _, l := range s.Network.Layers {
			seen[l.Kind()] = true
		}
	}
	builtin := reflect.TypeOf(Conv{}).PkgPath()
	for _, k := range Kinds() {
		if t, _ := layerKinds.Lookup(k); t.PkgPath() != builtin {
			continue // registered by a test of another package
		}
		if !seen[k] {
			t.Errorf("no test network uses layer kind %s", k)
		}
	}
}

// TestNumParamsCustom counts the parameters of the test networks by hand.
func TestNumParamsCustom(t *testing.T) {
	want := map[string]int{
		// conv 2·9·4+4, group norm 2·4, conv 4·9·6+6, dense 24·5+5, dense 5·3+3.
		"test-every-kind": 76 + 8 + 222 + 125 + 18,
		// conv 9·6+6, group norm 2·6, dense 54·4+4.
		"test-instance-norm": 60 + 12 + 220,
		// conv 4·3·4+4, group norm 2·4, dense 36·2 (no bias).
		"test-layer-norm": 52 + 8 + 72,
		// conv 3·9·4, conv 4·4·5 (no biases), group norm 2·5, dense 45·3+3.
		"test-conv-no-bias":    108 + 80 + 10 + 138,
		"test-mlp":             18*7 + 7 + 7*3 + 3,
		"test-tanh-regression": 5*4 + 4 + 1,
	}
	for _, s := range customSpecs {
		m, err := New(s, 1)
		if err != nil {
			t.Fatalf("%s: %v", s.Arch, err)
		}
		if got := m.NumParams(); got != want[s.Arch] {
			t.Errorf("%s: %d parameters, want %d", s.Arch, got, want[s.Arch])
		}
	}
}

// TestGroupNormInit checks γ = 1 and β = 0 whatever the network's init.
func TestGroupNormInit(t *testing.T) {
	m, err := New(customSpecs[0], 5)
	if err != nil {
		t.Fatal(err)
	}
	p := m.Params()[76 : 76+8]
	if want := []float32{1, 1, 1, 1, 0, 0, 0, 0}; !slices.Equal(p, want) {
		t.Errorf("group norm parameters %v, want %v", p, want)
	}
}

func TestNetworkJSONRoundTrip(t *testing.T) {
	for _, s := range customSpecs {
		data, err := json.Marshal(s.Network)
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseNetwork(data)
		if err != nil {
			t.Fatalf("%s: %v\n%s", s.Arch, err, data)
		}
		if !back.Equal(s.Network) {
			t.Errorf("%s: JSON round trip %+v, want %+v", s.Arch, back, *s.Network)
		}
		y, err := yaml.Marshal(s.Network)
		if err != nil {
			t.Fatal(err)
		}
		if back, err = ParseNetwork(y); err != nil || !back.Equal(s.Network) {
			t.Errorf("%s: YAML round trip %+v (%v), want %+v\n%s", s.Arch, back, err, *s.Network, y)
		}
		// A spec with its network survives a JSON round trip too (the
		// model file stores it so).
		sj, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var s2 Spec
		if err := json.Unmarshal(sj, &s2); err != nil || !s2.Network.Equal(s.Network) || s2.Arch != s.Arch {
			t.Errorf("%s: spec round trip %+v (%v)", s.Arch, s2, err)
		}
	}
	// Built-in specs keep their old JSON form (no network field), so old
	// model files and checkpoints read back unchanged.
	b, _ := json.Marshal(Spec{Arch: "tfp-cnn", InputShape: []int{1, 28, 28}, Classes: 10})
	if want := `{"arch":"tfp-cnn","input_shape":[1,28,28],"classes":10}`; string(b) != want {
		t.Errorf("built-in spec JSON %s, want %s", b, want)
	}
}

func TestParseNetworkForms(t *testing.T) {
	const js = `{"init": "torch", "layers": [
		{"kind": "conv", "out": 4, "kernel": 3, "stride": 1, "pad": 1},
		{"kind": "relu"}, {"kind": "max-pool", "kernel": 2, "stride": 2},
		{"kind": "flatten"}, {"kind": "dense", "out": 10}]}`
	const ym = `init: torch
layers:
  - {kind: conv, out: 4, kernel: 3, stride: 1, pad: 1}
  - kind: relu
  - {kind: max-pool, kernel: 2, stride: 2}
  - kind: flatten
  - {kind: dense, out: 10}
`
	want := Network{Init: InitTorch, Layers: Layers{
		Conv{Out: 4, Kernel: 3, Stride: 1, Pad: 1}, ReLU{},
		MaxPool{Kernel: 2, Stride: 2}, Flatten{}, Dense{Out: 10},
	}}
	for name, data := range map[string]string{"json": js, "yaml": ym} {
		got, err := ParseNetwork([]byte(data))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !got.Equal(&want) {
			t.Errorf("%s: got %+v, want %+v", name, got, want)
		}
	}
}

func TestNetworkErrors(t *testing.T) {
	mnist := []int{1, 28, 28}
	conv := Conv{Out: 4, Kernel: 3, Stride: 1}
	flat := Flatten{}
	out := func(n int) Layer { return Dense{Out: n} }
	for _, tc := range []struct {
		name  string
		shape []int
		nw    Network
		want  string // in the error
	}{
		{"unknown kind", mnist, Network{Layers: Layers{lstm{}}},
			`unknown layer kind "lstm" (known: avg-pool, `},
		{"nil layer", mnist, Network{Layers: Layers{nil}}, "layer 0 is nil"},
		{"no layers", mnist, Network{}, "no layers"},
		{"unknown init", mnist, Network{Init: "he", Layers: Layers{flat, out(10)}}, `unknown init "he"`},
		{"unknown loss", mnist, Network{Loss: "hinge", Layers: Layers{flat, out(10)}}, `unknown loss "hinge"`},
		{"zero kernel", mnist, Network{Layers: Layers{Conv{Out: 4, Stride: 1}, flat, out(10)}}, "kernel must be in [1,"},
		{"zero stride", mnist, Network{Layers: Layers{Conv{Out: 4, Kernel: 3}, flat, out(10)}}, "stride must be in [1,"},
		{"negative pad", mnist, Network{Layers: Layers{Conv{Out: 4, Kernel: 3, Stride: 1, Pad: -1}, flat, out(10)}}, "pad must be in [0,"},
		{"pad ≥ kernel", mnist, Network{Layers: Layers{Conv{Out: 4, Kernel: 3, Stride: 1, Pad: 3}, flat, out(10)}}, "pad 3 must be less than the kernel size 3"},
		{"no out", mnist, Network{Layers: Layers{flat, Dense{}}}, "out must be in [1,"},
		{"no groups", mnist, Network{Layers: Layers{conv, GroupNorm{}, flat, out(10)}}, "groups must be in [1,"},
		{"groups do not divide", mnist, Network{Layers: Layers{conv, GroupNorm{Groups: 3}, flat, out(10)}}, "3 groups do not divide 4 channels"},
		{"kernel too big", []int{1, 4, 4}, Network{Layers: Layers{Conv{Out: 4, Kernel: 5, Stride: 1}, flat, out(10)}}, "input too small: conv 5×5"},
		{"pool too big", []int{1, 4, 4}, Network{Layers: Layers{conv, AvgPool{Kernel: 3, Stride: 1}, flat, out(10)}}, "input too small: pool 3×3 sees 2×2"},
		{"pool before conv", mnist, Network{Layers: Layers{MaxPool{Kernel: 2, Stride: 2}, flat, out(10)}}, "pooling must follow a convolution"},
		{"norm before conv", mnist, Network{Layers: Layers{GroupNorm{Groups: 1}, flat, out(10)}}, "group norm must follow a convolution"},
		{"dense on image", mnist, Network{Layers: Layers{conv, out(10)}}, "needs a flatten first"},
		{"conv on flat", mnist, Network{Layers: Layers{flat, conv, out(10)}}, "its input is flat"},
		{"conv on vector", []int{784}, Network{Layers: Layers{conv, flat, out(10)}}, "its input is flat"},
		{"flatten twice", mnist, Network{Layers: Layers{flat, flat, out(10)}}, "already flat"},
		{"ends on image", mnist, Network{Layers: Layers{conv}}, "ends on an image"},
		{"wrong class count", mnist, Network{Layers: Layers{flat, out(7)}}, "outputs 7 values per example, but the spec has 10 classes"},
		{"no parameters", mnist, Network{Layers: Layers{ReLU{}, flat}}, "no parameters"},
		{"squared loss, 10 classes", mnist, Network{Loss: LossSquared, Layers: Layers{flat, out(10)}}, "needs Classes = 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nw := tc.nw
			_, err := New(Spec{Arch: "mine", InputShape: tc.shape, Classes: 10, Network: &nw}, 1)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	// The unknown-kind error lists every registered kind.
	if _, err := ParseNetwork([]byte(`{"layers": [{"kind": "lstm"}]}`)); err == nil || !strings.Contains(err.Error(), "(known: "+strings.Join(Kinds(), ", ")+")") {
		t.Errorf("unknown kind: %v, want the list %v", err, Kinds())
	}
	// A network of one's own may not take a registered name, and needs one.
	nw := Network{Layers: Layers{flat, out(10)}}
	for _, name := range []string{"tfp-cnn", ""} {
		if _, err := New(Spec{Arch: name, InputShape: mnist, Classes: 10, Network: &nw}, 1); err == nil {
			t.Errorf("network named %q accepted", name)
		}
	}
	// Misspelt fields, fields of other kinds, unknown kinds and trailing
	// data are errors, in JSON and YAML.
	for bad, want := range map[string]string{
		`{"layers": [{"kind": "dense", "outs": 10}]}`:                            `layer 0: dense: unknown field "outs"`,
		`{"layers": [{"kind": "dense", "out": 10}]} {}`:                          "trailing data",
		"layers:\n  - {kind: dense, outs: 10}\n":                                 `line 2: layer 0: dense: unknown field "outs"`,
		`{"layers": []}`:                                                         "no layers",
		`{"layers": [{"kind": "relu", "kernel": 2}]}`:                            `relu: unknown field "kernel"`,
		`{"layers": [{"kind": "max-pool", "kernel": 2, "stride": 2, "pad": 1}]}`: `max-pool: unknown field "pad"`,
		`{"layers": [{"kind": "lstm"}]}`:                                         `unknown layer kind "lstm" (known: avg-pool, `,
		"layers:\n  - {kind: flatten}\n  - {kind: lstm, out: 3}\n":               `line 3: layer 1: unknown layer kind "lstm"`,
		`{"layers": [{"out": 10}]}`:                                              "layer 0: layer has no kind",
		`{"layers": [{"kind": 3}]}`:                                              "layer 0: kind: cannot unmarshal number",
		`{"layers": [{"kind": "dense", "out": "ten"}]}`:                          "cannot unmarshal string",
		`{"layers": [7]}`:                                                        "layer 0: cannot unmarshal number",
		`{"layers": [{"kind": "conv", "out": 4, "kernel": 3, "stride": 1, "pad": 3}, {"kind": "flatten"}]}`: "layer 0 (conv): pad 3 must be less than the kernel size 3",
	} {
		if _, err := ParseNetwork([]byte(bad)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseNetwork(%q): error %v, want one containing %q", bad, err, want)
		}
	}
}

// lstm is a layer kind that is not registered.
type lstm struct{ Tanh }

func (lstm) Kind() string { return "lstm" }

// registerOnce registers the test architecture once (go test -count=N runs
// tests repeatedly in one process).
var registerOnce = func() func() {
	done := false
	return func() {
		if !done {
			Register("test-registered-mlp", func(s Spec) (Network, error) {
				if s.Classes > 100 {
					return Network{}, errTestClasses
				}
				l := Layers{Dense{Out: 8}, Tanh{}, Dense{Out: s.Classes}}
				if len(s.InputShape) == 3 {
					l = append(Layers{Flatten{}}, l...)
				}
				return Network{Init: InitTorch, Layers: l}, nil
			})
			done = true
		}
	}
}()

var errTestClasses = errors.New("test: at most 100 classes")

func TestRegister(t *testing.T) {
	registerOnce()
	names := Names()
	if !slices.IsSorted(names) {
		t.Errorf("Names not sorted: %v", names)
	}
	for _, want := range []string{"linreg", "logreg", "pdp-cnn-mnist", "pdp-cnn-svhn", "test-registered-mlp", "tfp-cnn"} {
		if !slices.Contains(names, want) {
			t.Errorf("Names %v lacks %s", names, want)
		}
	}
	m, err := New(Spec{Arch: "test-registered-mlp", InputShape: []int{6}, Classes: 3}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m.NumParams(), 6*8+8+8*3+3; got != want {
		t.Errorf("NumParams %d, want %d", got, want)
	}
	if _, err := New(Spec{Arch: "test-registered-mlp", InputShape: []int{6}, Classes: 101}, 1); err == nil || !strings.Contains(err.Error(), "at most 100 classes") {
		t.Errorf("builder error not passed on: %v", err)
	}
	_, err = New(Spec{Arch: "resnet", InputShape: []int{6}, Classes: 3}, 1)
	if err == nil || !strings.Contains(err.Error(), "test-registered-mlp") || !strings.Contains(err.Error(), "tfp-cnn") {
		t.Errorf("unknown-name error does not list the registered names: %v", err)
	}
	for _, bad := range []func(){
		func() { Register("tfp-cnn", func(Spec) (Network, error) { return Network{}, nil }) },
		func() { Register("", func(Spec) (Network, error) { return Network{}, nil }) },
		func() { Register("x-nil", nil) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("bad Register did not panic")
				}
			}()
			bad()
		}()
	}
}

// TestSaveLoadCustom saves and loads a model of its own network.
func TestSaveLoadCustom(t *testing.T) {
	s := customSpecs[0]
	m := perturbed(t, s, 2)
	path := filepath.Join(t.TempDir(), "m.bin")
	if err := Save(path, m); err != nil {
		t.Fatal(err)
	}
	back, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if !back.Spec().Network.Equal(s.Network) || !slices.Equal(back.Params(), m.Params()) {
		t.Fatalf("loaded %+v differs", back.Spec())
	}
	b := randomBatch(s, 5, rand.New(rand.NewPCG(1, 1)))
	o1, o2 := make([]float32, 5*s.Classes), make([]float32, 5*s.Classes)
	if err := m.Predict(b.X, 5, o1); err != nil {
		t.Fatal(err)
	}
	if err := back.Predict(b.X, 5, o2); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(o1, o2) {
		t.Errorf("predictions differ after load: %v vs %v", o1, o2)
	}
}

// TestReadNetworkFile reads the example network of testdata.
func TestReadNetworkFile(t *testing.T) {
	nw, err := ReadNetworkFile(filepath.Join("testdata", "mnist-gn.json"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(Spec{Arch: "mnist-gn", InputShape: []int{1, 28, 28}, Classes: 10, Network: &nw}, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadNetworkFile(filepath.Join("testdata", "missing.json")); err == nil || !os.IsNotExist(unwrapAll(err)) {
		t.Errorf("missing file: %v", err)
	}
	_ = math.Pi
}

func unwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return err
		}
		err = u.Unwrap()
	}
}

// TestSpecNetworkIsCopied: changing the caller's network after New, or the
// one Spec returns, does not change the model's.
func TestSpecNetworkIsCopied(t *testing.T) {
	s := customSpecs[4]
	nw := s.Network.clone()
	s.Network = nw
	m, err := New(s, 1)
	if err != nil {
		t.Fatal(err)
	}
	nw.Layers[1] = Dense{Out: 99}
	got := m.Spec()
	if got.Network.Layers[1].(Dense).Out != 7 {
		t.Fatalf("model's network changed with the caller's: %+v", got.Network)
	}
	got.Network.Layers[1] = Dense{Out: 98}
	if m.Spec().Network.Layers[1].(Dense).Out != 7 {
		t.Error("model's network changed through Spec's result")
	}
}

// TestConvNoBias: a convolution without bias computes what the same
// convolution with a zero bias does, and its per-example gradients are
// those of that network without the bias entries (up to rounding); the JSON form says
// "no_bias", and the default (no field) keeps the bias.
func TestConvNoBias(t *testing.T) {
	layers := func(noBias bool) Layers {
		return Layers{Conv{Out: 3, Kernel: 3, Stride: 1, Pad: 1, NoBias: noBias}, Tanh{}, Conv{Out: 2, Kernel: 2, Stride: 2, NoBias: noBias}, Flatten{}, Dense{Out: 4}}
	}
	with := Spec{Arch: "with-bias", InputShape: []int{2, 6, 6}, Classes: 4, Network: &Network{Init: InitTorch, Layers: layers(false)}}
	without := Spec{Arch: "without-bias", InputShape: []int{2, 6, 6}, Classes: 4, Network: &Network{Init: InitTorch, Layers: layers(true)}}
	mw, err := New(with, 1)
	if err != nil {
		t.Fatal(err)
	}
	mo := perturbed(t, without, 2)
	// Copy the kernels into the biased network, with zero biases:
	// with [k1 (54), b1 (3), k2 (24), b2 (2), dense (54+4)],
	// without [k1, k2, dense].
	po := mo.Params()
	if len(po) != mw.NumParams()-5 {
		t.Fatalf("%d parameters without biases, %d with", len(po), mw.NumParams())
	}
	keep := func(k int) bool { return !(k >= 54 && k < 57 || k >= 81 && k < 83) } // not a conv bias
	pw := make([]float32, 0, mw.NumParams())
	j := 0
	for k := 0; k < mw.NumParams(); k++ {
		if keep(k) {
			pw = append(pw, po[j])
			j++
		} else {
			pw = append(pw, 0)
		}
	}
	if err := mw.SetParams(pw); err != nil {
		t.Fatal(err)
	}
	const M = 37
	b := randomBatch(with, M, rand.New(rand.NewPCG(3, 3)))
	ow, oo := make([]float32, M*4), make([]float32, M*4)
	if err := mw.Predict(b.X, M, ow); err != nil {
		t.Fatal(err)
	}
	if err := mo.Predict(b.X, M, oo); err != nil {
		t.Fatal(err)
	}
	// Equal up to rounding: the kernels sit at other offsets of the
	// parameter vector, which can change the SIMD summation order.
	for i := range ow {
		if !closeTo(float64(oo[i]), float64(ow[i]), 1e-5, 1e-6) {
			t.Fatalf("output %d: %v without bias, %v with a zero bias", i, oo[i], ow[i])
		}
	}
	Pw, Po := mw.NumParams(), mo.NumParams()
	gw, gobias := make([]float32, M*Pw), make([]float32, M*Po)
	if err := mw.PerExampleGrads(b, gw, make([]float32, M)); err != nil {
		t.Fatal(err)
	}
	if err := mo.PerExampleGrads(b, gobias, make([]float32, M)); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < M; i++ {
		j := 0
		for k := 0; k < Pw; k++ {
			if !keep(k) {
				continue
			}
			if !closeTo(float64(gobias[i*Po+j]), float64(gw[i*Pw+k]), 1e-4, 1e-6) {
				t.Fatalf("example %d: gradient of parameter %d: %v without bias, %v with a zero bias", i, j, gobias[i*Po+j], gw[i*Pw+k])
			}
			j++
		}
	}
	js, err := json.Marshal(without.Network)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"kind":"conv","out":3,"kernel":3,"stride":1,"pad":1,"no_bias":true}`; !strings.Contains(string(js), want) {
		t.Errorf("JSON %s lacks %s", js, want)
	}
	nw, err := ParseNetwork([]byte(`{"layers": [{"kind": "conv", "out": 3, "kernel": 3, "stride": 1}, {"kind": "flatten"}, {"kind": "dense", "out": 4}]}`))
	if err != nil || nw.Layers[0].(Conv).NoBias {
		t.Errorf("conv without no_bias: %+v, %v", nw.Layers[0], err)
	}
}

// fakeConv claims the kind of Conv without being a Conv.
type fakeConv struct{ Tanh }

func (fakeConv) Kind() string { return KindConv }

// withKind is a layer type whose JSON form has a "kind" field.
type withKind struct {
	Tanh
	K string `json:"kind"`
}

func (withKind) Kind() string { return "with-kind" }

// notObject is a layer type whose JSON form is not an object.
type notObject int

func (notObject) Kind() string                                         { return "not-object" }
func (notObject) Validate() error                                      { return nil }
func (notObject) Resolve(in Shape) (Shape, []Param, error)             { return in, nil, nil }
func (notObject) Build(c *BuildContext) (*G.Node, ExampleGrads, error) { return c.Input, nil, nil }

// TestRegisterLayer checks RegisterLayer's panics and that a Go value
// whose type is not the one registered for its kind is rejected.
func TestRegisterLayer(t *testing.T) {
	for name, bad := range map[string]func(){
		"duplicate":       func() { RegisterLayer(KindConv, Conv{}) },
		"empty":           func() { RegisterLayer("", lstm{}) },
		"nil":             func() { RegisterLayer("nil-layer", nil) },
		"kind mismatch":   func() { RegisterLayer("not-lstm", lstm{}) },
		"kind field":      func() { RegisterLayer("with-kind", withKind{}) },
		"not an object":   func() { RegisterLayer("not-object", notObject(0)) },
		"duplicate other": func() { RegisterLayer(KindConv, fakeConv{}) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: RegisterLayer did not panic", name)
				}
			}()
			bad()
		}()
	}
	for _, k := range []string{"", "nil-layer", "not-lstm", "with-kind", "not-object"} {
		if _, ok := layerKinds.Lookup(k); ok {
			t.Errorf("kind %q registered by a panicking call", k)
		}
	}
	nw := Network{Layers: Layers{fakeConv{}, Flatten{}, Dense{Out: 10}}}
	if err := nw.Validate(); err == nil || !strings.Contains(err.Error(), `layer kind "conv" is registered for model.Conv, not model.fakeConv`) {
		t.Errorf("fake conv: %v", err)
	}
	if _, err := json.Marshal(nw); err == nil {
		t.Error("fake conv encoded")
	}
}
