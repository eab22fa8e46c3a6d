package model

import (
	"fmt"
	"math"

	"github.com/privtrain/privtrain/randstream"
)

// Size limits that keep every buffer allocatable.
const (
	maxParams = 1 << 27 // parameters
	maxUnfold = 1 << 24 // unfolded patch values per example and layer
	maxInput  = 1 << 24 // input values per example, and classes

	maxActivations = 1 << 28 // values per example of a layer's output
)

// layer is one layer of a compiled network: its description and what
// resolve derived from it.
type layer struct {
	desc    Layer
	in, out Shape   // one example's input and output
	params  []Param // the layer's parameters, in order
	sizes   []int   // their sizes
	off     int     // offset of the first in the parameter vector
	nP      int     // number of parameters (Σ sizes)
}

var lossCodes = map[string]int{"": lossSoftmaxCE, LossSoftmaxCE: lossSoftmaxCE, LossSquared: lossSquared}

// archLayers returns the layer list, initialisation scheme and loss of a
// spec's network (its own or its registered architecture's).
func archLayers(s Spec) (layers []layer, init string, loss int, err error) {
	nw, err := s.network()
	if err != nil {
		return nil, "", 0, err
	}
	if err := nw.Validate(); err != nil {
		return nil, "", 0, fmt.Errorf("model: %s: %w", s.Arch, err)
	}
	for _, l := range nw.Layers {
		layers = append(layers, layer{desc: l})
	}
	init = nw.Init
	if init == "" {
		init = InitGlorot
	}
	return layers, init, lossCodes[nw.Loss], nil
}

// resolve checks the spec against its layers and fills in shapes and
// parameter offsets; it returns the number of parameters.
func resolve(s Spec, layers []layer, loss int) (int, error) {
	size := 1
	for _, d := range s.InputShape {
		if d <= 0 {
			return 0, fmt.Errorf("model: %s: input shape %v has a non-positive dimension", s.Arch, s.InputShape)
		}
		if d > maxInput || size*d > maxInput {
			return 0, fmt.Errorf("model: %s: input shape %v has more than %d values", s.Arch, s.InputShape, maxInput)
		}
		size *= d
	}
	if s.Classes > maxInput {
		return 0, fmt.Errorf("model: %s: %d classes, more than %d", s.Arch, s.Classes, maxInput)
	}
	if len(s.InputShape) != 1 && len(s.InputShape) != 3 {
		return 0, fmt.Errorf("model: %s needs an input shape (C, H, W) or (D), got %v", s.Arch, s.InputShape)
	}
	if loss == lossSquared {
		if s.Classes != 1 {
			return 0, fmt.Errorf("model: %s (squared loss) needs Classes = 1, got %d", s.Arch, s.Classes)
		}
		if s.L2 < 0 || math.IsNaN(s.L2) || math.IsInf(s.L2, 0) {
			return 0, fmt.Errorf("model: %s: ridge penalty L2 = %v must be finite and ≥ 0", s.Arch, s.L2)
		}
	} else {
		if s.Classes < 2 {
			return 0, fmt.Errorf("model: %s needs at least 2 classes, got %d", s.Arch, s.Classes)
		}
		if s.L2 != 0 {
			return 0, fmt.Errorf("model: %s: L2 is only supported with the squared loss (linreg), got %v", s.Arch, s.L2)
		}
	}
	in := Shape{Layout: Flat, Len: s.InputShape[0]}
	if len(s.InputShape) == 3 {
		in = Shape{Layout: CHW, C: s.InputShape[0], H: s.InputShape[1], W: s.InputShape[2]}
	}
	off := 0
	for i := range layers {
		l := &layers[i]
		l.in = in
		out, params, err := l.desc.Resolve(in)
		if err == nil {
			err = out.valid()
		}
		if err != nil {
			return 0, fmt.Errorf("model: %s: input shape %v: layer %d: %w", s.Arch, s.InputShape, i, err)
		}
		l.out, l.params, l.sizes, l.off = out, params, make([]int, len(params)), off
		for k, p := range params {
			n := p.size()
			if n < 0 || p.Init == nil {
				return 0, fmt.Errorf("model: %s: input shape %v: layer %d (%s): parameter %d (%s) has shape %v and init %v: want 1 or 2 positive dimensions and an init",
					s.Arch, s.InputShape, i, l.desc.Kind(), k, p.Name, p.Shape, p.Init != nil)
			}
			l.sizes[k] = n
			l.nP += n
			if off += n; off > maxParams {
				return 0, fmt.Errorf("model: %s with input shape %v and %d classes has more than the supported %d parameters", s.Arch, s.InputShape, s.Classes, maxParams)
			}
		}
		in = out
	}
	if off == 0 {
		return 0, fmt.Errorf("model: %s: network has no parameters", s.Arch)
	}
	if in.IsImage() {
		return 0, fmt.Errorf("model: %s: the network ends on an image; flatten it and end on a dense layer", s.Arch)
	}
	if in.Len != s.Classes {
		return 0, fmt.Errorf("model: %s: the network outputs %d values per example, but the spec has %d classes", s.Arch, in.Len, s.Classes)
	}
	return off, nil
}

// initParams draws the initial parameters in parameter order.
func initParams(layers []layer, init string, p []float32, seed uint64) {
	rng := randstream.FromSeed(seed).Stream("model-init", 0) // public randomness
	for _, l := range layers {
		off := l.off
		for k, prm := range l.params {
			prm.Init(init, rng.Float64, p[off:off+l.sizes[k]])
			off += l.sizes[k]
		}
	}
}
