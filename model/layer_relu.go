package model

import G "gorgonia.org/gorgonia"

// KindReLU is the name of ReLU layers.
const KindReLU = "relu"

// ReLU is max(x, 0), elementwise, on any shape.
type ReLU struct{}

func init() { RegisterLayer(KindReLU, ReLU{}) }

// Kind implements Layer.
func (ReLU) Kind() string { return KindReLU }

// Validate implements Layer.
func (ReLU) Validate() error { return nil }

// Resolve implements Layer.
func (ReLU) Resolve(in Shape) (Shape, []Param, error) { return in, nil, nil }

// Build implements Layer.
func (ReLU) Build(c *BuildContext) (*G.Node, ExampleGrads, error) {
	y, err := G.ApplyOp(newReluOp(c.Name, c.N, c.In.Size()), c.Input)
	return y, nil, err
}
