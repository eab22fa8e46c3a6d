package model

import G "gorgonia.org/gorgonia"

// KindTanh is the name of Tanh layers.
const KindTanh = "tanh"

// Tanh is tanh(x), elementwise, on any shape.
type Tanh struct{}

func init() { RegisterLayer(KindTanh, Tanh{}) }

// Kind implements Layer.
func (Tanh) Kind() string { return KindTanh }

// Validate implements Layer.
func (Tanh) Validate() error { return nil }

// Resolve implements Layer.
func (Tanh) Resolve(in Shape) (Shape, []Param, error) { return in, nil, nil }

// Build implements Layer.
func (Tanh) Build(c *BuildContext) (*G.Node, ExampleGrads, error) {
	y, err := G.ApplyOp(newTanhOp(c.Name, c.N, c.In.Size()), c.Input)
	return y, nil, err
}
