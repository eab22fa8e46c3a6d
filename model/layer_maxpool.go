package model

import G "gorgonia.org/gorgonia"

// KindMaxPool is the name of MaxPool layers.
const KindMaxPool = "max-pool"

// MaxPool is 2-D max pooling over Kernel × Kernel windows (Kernel ≥ 1) at
// Stride ≥ 1, without padding, on an (H, W, C) image. Ties go to the first
// element in (row, column) order.
type MaxPool struct {
	Kernel int `json:"kernel,omitempty" yaml:"kernel,omitempty"`
	Stride int `json:"stride,omitempty" yaml:"stride,omitempty"`
}

func init() { RegisterLayer(KindMaxPool, MaxPool{}) }

// Kind implements Layer.
func (MaxPool) Kind() string { return KindMaxPool }

// Validate implements Layer.
func (l MaxPool) Validate() error {
	return firstErr(checkRange("kernel", l.Kernel, 1), checkRange("stride", l.Stride, 1))
}

// Resolve implements Layer.
func (l MaxPool) Resolve(in Shape) (Shape, []Param, error) {
	g, err := poolShape(in, l.Kernel, l.Stride)
	if err != nil {
		return Shape{}, nil, err
	}
	return g.outShape(), nil, nil
}

// Build implements Layer.
func (l MaxPool) Build(c *BuildContext) (*G.Node, ExampleGrads, error) {
	g, err := poolShape(c.In, l.Kernel, l.Stride)
	if err != nil {
		return nil, nil, err
	}
	y, err := G.ApplyOp(newPoolOp(c.Name, c.N, g), c.Input)
	return y, nil, err
}
