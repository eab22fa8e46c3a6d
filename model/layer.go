package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	reg "github.com/privtrain/privtrain/internal/registry"

	"gopkg.in/yaml.v3"
	G "gorgonia.org/gorgonia"
)

// Layer is one layer of a network description: a value of a layer kind's
// own type, holding that kind's parameters (the built-in kinds are Conv,
// MaxPool, AvgPool, ReLU, Tanh, GroupNorm, Flatten and Dense). A kind is
// registered with RegisterLayer; from then on networks using it can be
// built, written and read as JSON or YAML, and checked like the built-in
// ones. Layer values are descriptions: they are copied, compared
// (reflect.DeepEqual) and encoded, so they should be plain values.
//
// A kind provides, in order of use:
//
//   - Validate: its parameters make sense on their own (no shapes yet);
//   - Resolve: given the shape of one example's input, the shape of its
//     output and the parameters it has (their shapes and initialisation);
//   - Build: its forward op(s) in the Gorgonia graph of one chunk of
//     examples, and, for a layer with parameters, its rule for exact
//     per-example gradients (ExampleGrads).
//
// Per-example gradients follow one pattern for every kind: the model adds
// a zero-valued input e to the output z of each layer with parameters
// (BuildContext.E), differentiates the loss with respect to e once per
// chunk, which gives every example's ∂ℓ_i/∂z_i, and hands it to the
// layer's ExampleGrads, which forms ∂ℓ_i/∂θ from it and what its forward
// op kept (its input, unfolded patches, normalised values…). The package
// modeltest checks such a rule against batch-of-one runs, the batch
// gradient and finite differences.
//
// A layer kind is a type implementing Layer, registered from an init
// function with RegisterLayer(name, zero value), as image.RegisterFormat
// registers image formats; a kind of another module works exactly as the
// built-in ones (see ExampleRegisterLayer, whose "scale" kind is defined in
// a test of another package). The type's exported fields, with JSON tags,
// are the layer's parameters in a network description. Its methods:
//
//   - Validate checks the parameters alone; errors name the field.
//   - Resolve(in Shape) checks the input shape (Flat, or an image in CHW
//     or HWC order) and returns the output shape and the parameter tensors
//     (Param: a name, a 1- or 2-dimensional shape, and an Init:
//     KernelInit, BiasInit, ConstInit or one's own, drawing from the
//     model's initialisation stream). The model lays the tensors out one
//     after the other in the parameter vector, in layer order.
//   - Build(*BuildContext) adds the forward op(s) for a chunk of N
//     examples to the Gorgonia graph, reading the input node and the
//     parameter nodes the context gives; a layer with parameters must add
//     the context's zero node E to its output (z = f(a; θ) + e) and return
//     its gradient rule, or nil: a layer written only from Gorgonia's own
//     operators then gets exact per-example gradients from a generic,
//     slower path (fallback.go; about 1.9× the built-in dense rule's time
//     on a 784-64-10 MLP, BenchmarkFallbackDense).
//   - The rule (ExampleGrads, one per kind, as Opacus's grad samplers)
//     writes example i's parameter gradient from ∂ℓ/∂z, which the model
//     obtains by differentiating the loss with respect to E once per chunk,
//     and from what the layer's op kept from the run (its input, unfolded
//     patches, normalised values). It may also sum a chunk itself
//     (BatchGrads); otherwise the model sums its rows. What the rule reads
//     must be kept by the layer's own op: Gorgonia may reuse the memory of
//     a value that no later op reads.
//
// The package modeltest checks a kind's gradients in a network as the
// built-in kinds are checked: every row equals the gradient of a batch of
// one, the rows sum to the batch gradient across chunks, and the rows agree
// with finite differences.
type Layer interface {
	// Kind is the name the kind is registered under.
	Kind() string
	// Validate checks the parameters on their own.
	Validate() error
	// Resolve checks the layer against the shape of one example's input
	// and returns its output shape and its parameters, in the order they
	// take in the model's parameter vector.
	Resolve(in Shape) (out Shape, params []Param, err error)
	// Build adds the layer's forward op(s) for one chunk to c.Graph and
	// returns the output node (c.N × c.Out.Size()) and, for a layer with
	// parameters, its per-example gradient rule (nil otherwise; nil for a
	// layer with parameters selects the generic rule, fallback.go). It is
	// called once per compiled graph (several per model), after Resolve
	// accepted c.In.
	Build(c *BuildContext) (out *G.Node, grads ExampleGrads, err error)
}

// Layout is the order of one example's activations.
type Layout int

const (
	// Flat is a vector of Len values.
	Flat Layout = iota
	// CHW is an image channel by channel: the model input's order, kept
	// until a layer (a convolution) reorders it.
	CHW
	// HWC is an image position by position, the C channels of each
	// position together (the output of a convolution).
	HWC
)

// Shape is the shape of one example's activations, one row of Size()
// values of a chunk's N × Size() matrix.
type Shape struct {
	Layout  Layout
	C, H, W int // images (CHW, HWC)
	Len     int // flat vectors
}

// IsImage reports whether s is an image (CHW or HWC).
func (s Shape) IsImage() bool { return s.Layout != Flat }

// Size is the number of values per example.
func (s Shape) Size() int {
	if s.Layout == Flat {
		return s.Len
	}
	return s.C * s.H * s.W
}

func (s Shape) String() string {
	switch s.Layout {
	case Flat:
		return fmt.Sprintf("(%d)", s.Len)
	case CHW:
		return fmt.Sprintf("(C, H, W) = (%d, %d, %d)", s.C, s.H, s.W)
	}
	return fmt.Sprintf("(H, W, C) = (%d, %d, %d)", s.H, s.W, s.C)
}

// valid checks a shape a layer returned.
func (s Shape) valid() error {
	ok := false
	switch s.Layout {
	case Flat:
		ok = s.Len >= 1 && s.Len <= maxActivations && s.C == 0 && s.H == 0 && s.W == 0
	case CHW, HWC:
		ok = s.Len == 0 && s.C >= 1 && s.H >= 1 && s.W >= 1 && s.C <= maxActivations && s.H <= maxActivations &&
			s.W <= maxActivations && int64(s.C)*int64(s.H)*int64(s.W) <= maxActivations
	}
	if !ok {
		return fmt.Errorf("invalid output shape %+v", s)
	}
	return nil
}

// Param is one parameter tensor of a layer.
type Param struct {
	// Name names the tensor within its layer ("kernel", "bias"…).
	Name string
	// Shape is the shape of its graph node: one dimension (a vector) or
	// two (a matrix), row-major in the parameter vector.
	Shape []int
	// Init fills its initial values.
	Init Init
}

// size is the number of values of p, or −1 if its shape is invalid.
func (p Param) size() int {
	if len(p.Shape) < 1 || len(p.Shape) > 2 {
		return -1
	}
	n := 1
	for _, d := range p.Shape {
		if d < 1 || d > maxParams || n*d > maxParams {
			return -1
		}
		n *= d
	}
	return n
}

// Init fills a parameter's initial values dst for the network's
// initialisation scheme (InitGlorot, InitTorch or InitZero), drawing any
// randomness from u, uniform on [0, 1): the model's public initialisation
// stream, shared by all parameters in parameter order.
type Init func(scheme string, u func() float64, dst []float32)

// KernelInit initialises a kernel with fan-in and fan-out as Keras
// (InitGlorot: U(±√(6/(fanIn+fanOut)))) or PyTorch (InitTorch:
// U(±1/√fanIn)) do, or to zero (InitZero).
func KernelInit(fanIn, fanOut int) Init {
	return func(scheme string, u func() float64, dst []float32) {
		var lim float64
		switch scheme {
		case InitGlorot:
			lim = math.Sqrt(6 / float64(fanIn+fanOut))
		case InitTorch:
			lim = 1 / math.Sqrt(float64(fanIn))
		default:
			clear(dst)
			return
		}
		for i := range dst {
			dst[i] = float32((2*u() - 1) * lim)
		}
	}
}

// BiasInit initialises a bias as PyTorch (InitTorch: U(±1/√fanIn)) or
// Keras (InitGlorot: zero) do, or to zero (InitZero).
func BiasInit(fanIn int) Init {
	return func(scheme string, u func() float64, dst []float32) {
		if scheme != InitTorch {
			clear(dst)
			return
		}
		lim := 1 / math.Sqrt(float64(fanIn))
		for i := range dst {
			dst[i] = float32((2*u() - 1) * lim)
		}
	}
}

// ConstInit sets every value to v, whatever the scheme, without drawing.
func ConstInit(v float32) Init {
	return func(_ string, _ func() float64, dst []float32) {
		for i := range dst {
			dst[i] = v
		}
	}
}

// BuildContext is what a layer's Build gets: the graph of one chunk of N
// examples and the layer's nodes in it.
type BuildContext struct {
	Graph *G.ExprGraph
	// N is the number of rows (examples) of the chunk.
	N int
	// Name is unique to the layer within the graph ("L3"): ops are told
	// apart by their names, so a layer's op names must start with it.
	Name string
	// In and Out are the shapes Resolve accepted and returned.
	In, Out Shape
	// Input is the layer's input, an N × In.Size() matrix.
	Input *G.Node
	// Params holds one node per Param of Resolve, of its shape, backed by
	// the model's parameter vector (the layer reads them; Gorgonia does
	// not differentiate them).
	Params []*G.Node
	// E is, for a layer with parameters, a zero N × Out.Size() matrix
	// that the layer must add to its output (z = f(a; θ) + e); the model
	// differentiates the loss with respect to it, which gives ∂loss/∂z.
	// It is nil for layers without parameters.
	E *G.Node
	// NeedInputGrad is false when no earlier layer has parameters: the
	// layer's op then need not differentiate its input.
	NeedInputGrad bool
}

// ExampleGrads is a layer's rule for exact per-example gradients of its
// parameters, the analogue of an Opacus grad sampler: one per layer kind.
type ExampleGrads interface {
	// ExampleGrad writes the gradient of example i's loss with respect
	// to the layer's parameters, concatenated in Param order, into dst.
	// dz is ∂loss/∂z of the chunk's last run (N × Out.Size(); row i is
	// ∂ℓ_i/∂z_i); the rule may also read what the layer's forward op kept
	// from that run.
	ExampleGrad(i int, dz, dst []float32)
}

// BatchGrads is optionally implemented by an ExampleGrads that sums a
// chunk faster than example by example (one matrix product). Without it,
// the model adds the N rows of ExampleGrad.
type BatchGrads interface {
	// AddBatchGrad adds the sum over the chunk's N rows of ExampleGrad
	// to dst (rows outside the batch have dz = 0).
	AddBatchGrad(dz, dst []float32)
}

// layerKinds maps kind names to the types of their Layer values.
var layerKinds = reg.New[reflect.Type]("model", "layer kind")

// RegisterLayer makes a layer kind available to networks under the name
// kind, with proto a value of its type (usually the zero value, e.g.
// Conv{}): JSON and YAML layers {"kind": kind, …} decode into that type,
// the other fields being its parameters (its JSON form; unknown fields are
// errors). Like image.RegisterFormat it is meant for init functions, and
// it panics if kind is empty or already registered, if proto is nil or its
// Kind is not kind, or if proto does not encode as a JSON object without a
// "kind" field.
func RegisterLayer(kind string, proto Layer) {
	if proto == nil || reflect.TypeOf(proto) == nil {
		panic("model: RegisterLayer " + strconv.Quote(kind) + " with a nil layer")
	}
	if kind != "" && proto.Kind() != kind {
		panic(fmt.Sprintf("model: RegisterLayer %q with a layer of kind %q", kind, proto.Kind()))
	}
	var fields map[string]json.RawMessage
	if b, err := json.Marshal(proto); err != nil || json.Unmarshal(b, &fields) != nil || fields == nil {
		panic(fmt.Sprintf("model: RegisterLayer %q: %T does not encode as a JSON object", kind, proto))
	}
	if _, ok := fields["kind"]; ok {
		panic(fmt.Sprintf("model: RegisterLayer %q: %T has a JSON field \"kind\"", kind, proto))
	}
	layerKinds.Register(kind, reflect.TypeOf(proto))
}

// Kinds lists the registered layer kinds, sorted.
func Kinds() []string { return layerKinds.Names() }

func unknownKind(kind string) error {
	return fmt.Errorf("unknown layer kind %q (known: %s)", kind, strings.Join(Kinds(), ", "))
}

// checkRegistered checks that l's kind is registered with l's type.
func checkRegistered(l Layer) error {
	t, ok := layerKinds.Lookup(l.Kind())
	if !ok {
		return unknownKind(l.Kind())
	}
	if t != reflect.TypeOf(l) {
		return fmt.Errorf("layer kind %q is registered for %v, not %T", l.Kind(), t, l)
	}
	return nil
}

// decodeLayer decodes the parameters of a layer of the named kind from
// the JSON object data (without its "kind" field).
func decodeLayer(kind string, data []byte) (Layer, error) {
	t, ok := layerKinds.Lookup(kind)
	if !ok {
		return nil, unknownKind(kind)
	}
	var p reflect.Value
	if t.Kind() == reflect.Pointer {
		p = reflect.New(t.Elem())
	} else {
		p = reflect.New(t)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(p.Interface()); err != nil {
		return nil, errors.New(strings.TrimPrefix(err.Error(), "json: "))
	}
	if t.Kind() != reflect.Pointer {
		p = p.Elem()
	}
	return p.Interface().(Layer), nil
}

// decodeLayerObject decodes one layer from its JSON object.
func decodeLayerObject(data []byte) (Layer, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return nil, errors.New(strings.TrimPrefix(err.Error(), "json: "))
	}
	if fields == nil {
		return nil, errors.New("a layer must be an object")
	}
	raw, ok := fields["kind"]
	if !ok {
		return nil, errors.New("layer has no kind")
	}
	var kind string
	if err := json.Unmarshal(raw, &kind); err != nil {
		return nil, fmt.Errorf("kind: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	if _, ok := layerKinds.Lookup(kind); !ok {
		return nil, unknownKind(kind)
	}
	delete(fields, "kind")
	rest, err := json.Marshal(fields)
	if err != nil {
		return nil, err
	}
	l, err := decodeLayer(kind, rest)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", kind, err)
	}
	return l, nil
}

// encodeLayer returns the JSON object of a layer: its kind, then its
// parameters.
func encodeLayer(l Layer) ([]byte, error) {
	if l == nil {
		return nil, errors.New("model: nil layer")
	}
	if err := checkRegistered(l); err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	p, err := json.Marshal(l)
	if err != nil {
		return nil, fmt.Errorf("model: layer %s: %w", l.Kind(), err)
	}
	if len(p) < 2 || p[0] != '{' {
		return nil, fmt.Errorf("model: layer %s does not encode as a JSON object", l.Kind())
	}
	k, _ := json.Marshal(l.Kind())
	out := append([]byte(`{"kind":`), k...)
	if string(p) != "{}" {
		out = append(out, ',')
	}
	return append(out, p[1:]...), nil
}

// MarshalJSON writes each layer as {"kind": …, parameters…}.
func (ls Layers) MarshalJSON() ([]byte, error) {
	if ls == nil {
		return []byte("null"), nil
	}
	var b bytes.Buffer
	b.WriteByte('[')
	for i, l := range ls {
		if i > 0 {
			b.WriteByte(',')
		}
		o, err := encodeLayer(l)
		if err != nil {
			return nil, err
		}
		b.Write(o)
	}
	b.WriteByte(']')
	return b.Bytes(), nil
}

// UnmarshalJSON reads layers through their registered kinds.
func (ls *Layers) UnmarshalJSON(data []byte) error {
	var raws []json.RawMessage
	if err := json.Unmarshal(data, &raws); err != nil {
		return err
	}
	if raws == nil {
		*ls = nil
		return nil
	}
	out := make(Layers, len(raws))
	for i, r := range raws {
		l, err := decodeLayerObject(r)
		if err != nil {
			return fmt.Errorf("layer %d: %w", i, err)
		}
		out[i] = l
	}
	*ls = out
	return nil
}

// MarshalYAML writes each layer as a mapping {kind: …, parameters…} (the
// fields of its JSON form).
func (ls Layers) MarshalYAML() (any, error) {
	nodes := make([]*yaml.Node, 0, len(ls))
	for _, l := range ls {
		o, err := encodeLayer(l)
		if err != nil {
			return nil, err
		}
		var doc yaml.Node
		if err := yaml.Unmarshal(o, &doc); err != nil || len(doc.Content) != 1 {
			return nil, fmt.Errorf("model: layer %s: %v", l.Kind(), err)
		}
		plainStyle(doc.Content[0])
		nodes = append(nodes, doc.Content[0])
	}
	return nodes, nil
}

// plainStyle resets the JSON styles (flow, quotes) of a node tree; the
// encoder still quotes strings that would read back as another type.
func plainStyle(n *yaml.Node) {
	n.Style = 0
	for _, c := range n.Content {
		plainStyle(c)
	}
}

// UnmarshalYAML reads layers through their registered kinds (a layer's
// mapping is read as its JSON form; unknown fields are errors).
func (ls *Layers) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.SequenceNode {
		return fmt.Errorf("line %d: layers must be a list", n.Line)
	}
	out := make(Layers, len(n.Content))
	for i, item := range n.Content {
		var fields map[string]any
		if err := item.Decode(&fields); err != nil {
			return fmt.Errorf("line %d: layer %d: %w", item.Line, i, err)
		}
		data, err := json.Marshal(fields)
		if err != nil {
			return fmt.Errorf("line %d: layer %d: %w", item.Line, i, err)
		}
		if out[i], err = decodeLayerObject(data); err != nil {
			return fmt.Errorf("line %d: layer %d: %w", item.Line, i, err)
		}
	}
	*ls = out
	return nil
}
