package model

import G "gorgonia.org/gorgonia"

// KindAvgPool is the name of AvgPool layers.
const KindAvgPool = "avg-pool"

// AvgPool is 2-D average pooling over Kernel × Kernel windows (Kernel ≥ 1)
// at Stride ≥ 1, without padding, on an (H, W, C) image.
type AvgPool struct {
	Kernel int `json:"kernel,omitempty" yaml:"kernel,omitempty"`
	Stride int `json:"stride,omitempty" yaml:"stride,omitempty"`
}

func init() { RegisterLayer(KindAvgPool, AvgPool{}) }

// Kind implements Layer.
func (AvgPool) Kind() string { return KindAvgPool }

// Validate implements Layer.
func (l AvgPool) Validate() error {
	return firstErr(checkRange("kernel", l.Kernel, 1), checkRange("stride", l.Stride, 1))
}

// Resolve implements Layer.
func (l AvgPool) Resolve(in Shape) (Shape, []Param, error) {
	g, err := poolShape(in, l.Kernel, l.Stride)
	if err != nil {
		return Shape{}, nil, err
	}
	return g.outShape(), nil, nil
}

// Build implements Layer.
func (l AvgPool) Build(c *BuildContext) (*G.Node, ExampleGrads, error) {
	g, err := poolShape(c.In, l.Kernel, l.Stride)
	if err != nil {
		return nil, nil, err
	}
	y, err := G.ApplyOp(newAvgPoolOp(c.Name, c.N, g), c.Input)
	return y, nil, err
}
