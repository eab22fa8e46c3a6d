package model

import (
	"errors"
	"fmt"

	G "gorgonia.org/gorgonia"
)

// KindGroupNorm is the name of GroupNorm layers.
const KindGroupNorm = "group-norm"

// GroupNorm is group normalisation (ε = 1e-5) of an (H, W, C) image: the C
// channels form Groups ≥ 1 groups of consecutive channels (Groups must
// divide C), each example's group is normalised over its positions and
// channels, then scaled and shifted per channel: z = γ_c·x̂ + β_c.
// Parameters: γ (1 × C, initially 1), then β (C, initially 0), whatever
// the network's initialisation.
type GroupNorm struct {
	Groups int `json:"groups,omitempty" yaml:"groups,omitempty"`
}

func init() { RegisterLayer(KindGroupNorm, GroupNorm{}) }

// Kind implements Layer.
func (GroupNorm) Kind() string { return KindGroupNorm }

// Validate implements Layer.
func (l GroupNorm) Validate() error { return checkRange("groups", l.Groups, 1) }

// Resolve implements Layer.
func (l GroupNorm) Resolve(in Shape) (Shape, []Param, error) {
	if in.Layout != HWC {
		return Shape{}, nil, errors.New("group norm must follow a convolution (before one, images are in (C, H, W) order)")
	}
	if in.C%l.Groups != 0 {
		return Shape{}, nil, fmt.Errorf("group norm: %d groups do not divide %d channels", l.Groups, in.C)
	}
	return in, []Param{
		{Name: "gamma", Shape: []int{1, in.C}, Init: ConstInit(1)},
		{Name: "beta", Shape: []int{in.C}, Init: ConstInit(0)},
	}, nil
}

// Build implements Layer.
func (l GroupNorm) Build(c *BuildContext) (*G.Node, ExampleGrads, error) {
	op := newGroupNormOp(c.Name, c.N, &normGeom{c: c.In.C, hw: c.In.H * c.In.W, groups: l.Groups})
	z, err := G.ApplyOp(op, c.Input, c.Params[0], c.Params[1], c.E)
	if err != nil {
		return nil, nil, err
	}
	return z, groupNormGrads{op}, nil
}

// groupNormGrads: example i's gradients are ∂ℓ_i/∂γ_c = Σ_q dz·x̂ and
// ∂ℓ_i/∂β_c = Σ_q dz over its positions q (groupNormOp.exampleGrads).
type groupNormGrads struct{ op *groupNormOp }

// ExampleGrad implements ExampleGrads.
func (r groupNormGrads) ExampleGrad(i int, dz, dst []float32) {
	C := r.op.g.c
	r.op.exampleGrads(i, dz, dst[:C], dst[C:])
}
