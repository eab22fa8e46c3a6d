package model

import (
	"errors"

	G "gorgonia.org/gorgonia"
)

// KindFlatten is the name of Flatten layers.
const KindFlatten = "flatten"

// Flatten turns an image into a flat vector of its values in their order:
// (H, W, C) after a convolution, as Keras flattens, and the input's
// (C, H, W) before one. Activations are already one row per example, so
// it only changes the shape; it adds no op.
type Flatten struct{}

func init() { RegisterLayer(KindFlatten, Flatten{}) }

// Kind implements Layer.
func (Flatten) Kind() string { return KindFlatten }

// Validate implements Layer.
func (Flatten) Validate() error { return nil }

// Resolve implements Layer.
func (Flatten) Resolve(in Shape) (Shape, []Param, error) {
	if !in.IsImage() {
		return Shape{}, nil, errors.New("flatten: its input is already flat")
	}
	return Shape{Layout: Flat, Len: in.Size()}, nil, nil
}

// Build implements Layer: the input node is the output.
func (Flatten) Build(c *BuildContext) (*G.Node, ExampleGrads, error) { return c.Input, nil, nil }
