package model

import (
	"fmt"
	"math"

	"github.com/privtrain/privtrain/randstream"
)

// Layer kinds of the compiled layer list.
const (
	layerConv = iota
	layerPool // max-pool
	layerReLU
	layerDense
	layerAvgPool
	layerTanh
	layerGroupNorm
	layerFlatten
)

// layerCodes maps Layer.Kind to the compiled kinds.
var layerCodes = map[string]int{
	KindConv: layerConv, KindMaxPool: layerPool, KindAvgPool: layerAvgPool, KindReLU: layerReLU,
	KindTanh: layerTanh, KindGroupNorm: layerGroupNorm, KindFlatten: layerFlatten, KindDense: layerDense,
}

// Size limits that keep every buffer allocatable.
const (
	maxParams = 1 << 27 // parameters
	maxUnfold = 1 << 24 // unfolded patch values per example and layer
	maxInput  = 1 << 24 // input values per example, and classes
)

// layer describes one layer; sizes are filled in by resolve.
type layer struct {
	kind int
	// conv: outC, k, stride, pad; pool: k, stride; dense: outC units;
	// group norm: groups.
	outC, k, stride, pad int
	groups               int
	bias                 bool

	conv  *convGeom
	pool  *poolGeom
	norm  *normGeom
	in    int // input features per example
	out   int // output features per example
	off   int // offset of the layer's weights in the parameter vector
	nW    int // number of weights (group norm: γ)
	nB    int // number of biases (group norm: β)
	fanIn int
	fanO  int
}

// init kinds.
const (
	initGlorot = iota // Keras: Glorot-uniform kernels, zero biases
	initTorch         // PyTorch: U(±1/√fan_in) kernels and biases
	initZero          // all zeros (convex models)
)

var (
	initCodes = map[string]int{"": initGlorot, InitGlorot: initGlorot, InitTorch: initTorch, InitZero: initZero}
	lossCodes = map[string]int{"": lossSoftmaxCE, LossSoftmaxCE: lossSoftmaxCE, LossSquared: lossSquared}
)

// archLayers returns the compiled layer list, initialisation and loss of a
// spec's network (its own or its registered architecture's).
func archLayers(s Spec) (layers []layer, init int, loss int, err error) {
	nw, err := s.network()
	if err != nil {
		return nil, 0, 0, err
	}
	if err := nw.Validate(); err != nil {
		return nil, 0, 0, fmt.Errorf("model: %s: %w", s.Arch, err)
	}
	for _, l := range nw.Layers {
		k := layerCodes[l.Kind]
		layers = append(layers, layer{kind: k, outC: l.Out, k: l.Kernel, stride: l.Stride, pad: l.Pad, groups: l.Groups,
			bias: (k == layerConv || k == layerDense) && !l.NoBias})
	}
	return layers, initCodes[nw.Init], lossCodes[nw.Loss], nil
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
	// Running shape: (c, h, w) for images, flat size f otherwise. raw: no
	// convolution yet, so an image is still in the input's (C, H, W) order.
	var c, h, w, f int
	image := len(s.InputShape) == 3
	if image {
		c, h, w = s.InputShape[0], s.InputShape[1], s.InputShape[2]
		f = c * h * w
	} else {
		f = s.InputShape[0]
	}
	raw := true
	off := 0
	for i := range layers {
		l := &layers[i]
		l.in = f
		bad := func(format string, a ...any) error {
			return fmt.Errorf("model: %s: input shape %v: layer %d: "+format, append([]any{s.Arch, s.InputShape, i}, a...)...)
		}
		switch l.kind {
		case layerConv:
			if !image {
				return 0, bad("convolution needs an image (C, H, W), but its input is flat")
			}
			if h+2*l.pad < l.k || w+2*l.pad < l.k {
				return 0, bad("input too small: conv %d×%d (pad %d) sees %d×%d", l.k, l.k, l.pad, h, w)
			}
			oh := (h+2*l.pad-l.k)/l.stride + 1
			ow := (w+2*l.pad-l.k)/l.stride + 1
			if int64(oh)*int64(ow)*int64(l.k*l.k)*int64(c) > maxUnfold {
				return 0, bad("input too large: would unfold %d×%d patches of %d values per example", oh*ow, l.k*l.k, c)
			}
			l.conv = &convGeom{inC: c, inH: h, inW: w, chw: raw && c > 1, outC: l.outC, k: l.k, stride: l.stride, pad: l.pad, outH: oh, outW: ow}
			c, h, w = l.outC, oh, ow
			f = c * h * w
			l.nW, l.nB = l.conv.cols()*l.outC, l.outC
			l.fanIn, l.fanO = l.k*l.k*l.conv.inC, l.k*l.k*l.outC
			raw = false
		case layerPool, layerAvgPool:
			if !image || raw {
				return 0, bad("pooling must follow a convolution (before one, images are in (C, H, W) order)")
			}
			if h < l.k || w < l.k {
				return 0, bad("input too small: pool %d×%d sees %d×%d", l.k, l.k, h, w)
			}
			oh, ow := (h-l.k)/l.stride+1, (w-l.k)/l.stride+1
			l.pool = &poolGeom{c: c, inH: h, inW: w, k: l.k, stride: l.stride, outH: oh, outW: ow}
			h, w = oh, ow
			f = c * h * w
		case layerGroupNorm:
			if !image || raw {
				return 0, bad("group norm must follow a convolution (before one, images are in (C, H, W) order)")
			}
			if c%l.groups != 0 {
				return 0, bad("group norm: %d groups do not divide %d channels", l.groups, c)
			}
			l.norm = &normGeom{c: c, hw: h * w, groups: l.groups}
			l.nW, l.nB = c, c
		case layerFlatten:
			if !image {
				return 0, bad("flatten: its input is already flat")
			}
			image = false
		case layerDense:
			if image {
				return 0, bad("dense on an image (%d×%d×%d) needs a flatten first", c, h, w)
			}
			l.nW = f * l.outC
			if l.bias {
				l.nB = l.outC
			}
			l.fanIn, l.fanO = f, l.outC
			f = l.outC
		case layerReLU, layerTanh:
		}
		if l.nW > 0 {
			l.off = off
			off += l.nW + l.nB
		}
		l.out = f
	}
	if off == 0 {
		return 0, fmt.Errorf("model: %s: network has no parameters", s.Arch)
	}
	if off > maxParams {
		return 0, fmt.Errorf("model: %s with input shape %v and %d classes has %d parameters, more than the supported %d", s.Arch, s.InputShape, s.Classes, off, maxParams)
	}
	if image {
		return 0, fmt.Errorf("model: %s: the network ends on an image; flatten it and end on a dense layer", s.Arch)
	}
	if f != s.Classes {
		return 0, fmt.Errorf("model: %s: the network outputs %d values per example, but the spec has %d classes", s.Arch, f, s.Classes)
	}
	return off, nil
}

// initParams draws the initial parameters in parameter order.
func initParams(layers []layer, init int, p []float32, seed uint64) {
	rng := randstream.FromSeed(seed).Stream("model-init", 0) // public randomness
	for _, l := range layers {
		if l.nW == 0 {
			continue
		}
		w := p[l.off : l.off+l.nW]
		b := p[l.off+l.nW : l.off+l.nW+l.nB]
		if l.kind == layerGroupNorm { // γ = 1, β = 0 (no random draws)
			for i := range w {
				w[i] = 1
			}
			clear(b)
			continue
		}
		var lim float64
		switch init {
		case initGlorot:
			lim = math.Sqrt(6 / float64(l.fanIn+l.fanO))
		case initTorch:
			lim = 1 / math.Sqrt(float64(l.fanIn))
		case initZero:
			clear(w)
			clear(b)
			continue
		}
		for i := range w {
			w[i] = float32((2*rng.Float64() - 1) * lim)
		}
		if init == initTorch {
			for i := range b {
				b[i] = float32((2*rng.Float64() - 1) * lim)
			}
		} else {
			clear(b)
		}
	}
}
