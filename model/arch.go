package model

import (
	"errors"
	"fmt"
	"math"

	"github.com/privtrain/privtrain/randstream"
)

// Layer kinds of a network description.
const (
	layerConv = iota
	layerPool
	layerReLU
	layerDense
)

// Size limits that keep every buffer allocatable.
const (
	maxParams = 1 << 27 // parameters
	maxUnfold = 1 << 24 // unfolded patch values per example and layer
	maxInput  = 1 << 24 // input values per example, and classes
)

// layer describes one layer; sizes are filled in by resolve.
type layer struct {
	kind int
	// conv: outC, k, stride, pad; pool: k, stride; dense: outC units.
	outC, k, stride, pad int
	bias                 bool

	conv  *convGeom
	pool  *poolGeom
	in    int // input features per example
	out   int // output features per example
	off   int // offset of the layer's weights in the parameter vector
	nW    int // number of weights
	nB    int // number of biases
	fanIn int
	fanO  int
}

// init kinds.
const (
	initGlorot = iota // Keras: Glorot-uniform kernels, zero biases
	initTorch         // PyTorch: U(±1/√fan_in) kernels and biases
	initZero          // all zeros (convex models)
)

// archLayers returns the layer list and initialisation of an architecture.
func archLayers(s Spec) (layers []layer, init int, loss int, err error) {
	switch s.Arch {
	case "tfp-cnn", "pdp-cnn-mnist":
		layers = []layer{
			{kind: layerConv, outC: 16, k: 8, stride: 2, pad: 3, bias: true},
			{kind: layerReLU},
			{kind: layerPool, k: 2, stride: 1},
			{kind: layerConv, outC: 32, k: 4, stride: 2, bias: true},
			{kind: layerReLU},
			{kind: layerPool, k: 2, stride: 1},
			{kind: layerDense, outC: 32, bias: true},
			{kind: layerReLU},
			{kind: layerDense, outC: s.Classes, bias: true},
		}
		init = initGlorot
		if s.Arch == "pdp-cnn-mnist" {
			init = initTorch
		}
		return layers, init, lossSoftmaxCE, nil
	case "pdp-cnn-svhn":
		layers = []layer{
			{kind: layerConv, outC: 6, k: 5, stride: 1, bias: true},
			{kind: layerReLU},
			{kind: layerPool, k: 2, stride: 2},
			{kind: layerConv, outC: 16, k: 5, stride: 1, bias: true},
			{kind: layerReLU},
			{kind: layerPool, k: 2, stride: 2},
			{kind: layerDense, outC: 120, bias: true},
			{kind: layerReLU},
			{kind: layerDense, outC: 84, bias: true},
			{kind: layerReLU},
			{kind: layerDense, outC: s.Classes, bias: true},
		}
		return layers, initTorch, lossSoftmaxCE, nil
	case "logreg":
		return []layer{{kind: layerDense, outC: s.Classes, bias: true}}, initZero, lossSoftmaxCE, nil
	case "linreg":
		return []layer{{kind: layerDense, outC: 1}}, initZero, lossSquared, nil
	}
	return nil, 0, 0, fmt.Errorf("model: unknown architecture %q (want tfp-cnn, pdp-cnn-mnist, pdp-cnn-svhn, logreg or linreg)", s.Arch)
}

// resolve checks the spec and fills in shapes and parameter offsets; it
// returns the number of parameters.
func resolve(s Spec, layers []layer) (int, error) {
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
	conv := layers[0].kind == layerConv
	switch {
	case conv && len(s.InputShape) != 3:
		return 0, fmt.Errorf("model: %s needs an input shape (C, H, W), got %v", s.Arch, s.InputShape)
	case !conv && len(s.InputShape) != 1:
		return 0, fmt.Errorf("model: %s needs an input shape (D), got %v", s.Arch, s.InputShape)
	}
	if s.Arch == "linreg" {
		if s.Classes != 1 {
			return 0, fmt.Errorf("model: linreg needs Classes = 1, got %d", s.Classes)
		}
		if s.L2 < 0 || math.IsNaN(s.L2) || math.IsInf(s.L2, 0) {
			return 0, fmt.Errorf("model: linreg: ridge penalty L2 = %v must be finite and ≥ 0", s.L2)
		}
	} else {
		if s.Classes < 2 {
			return 0, fmt.Errorf("model: %s needs at least 2 classes, got %d", s.Arch, s.Classes)
		}
		if s.L2 != 0 {
			return 0, fmt.Errorf("model: %s: L2 is only supported by linreg, got %v", s.Arch, s.L2)
		}
	}
	// Running shape: (c, h, w) for images, flat size f otherwise.
	var c, h, w, f int
	image := conv
	if conv {
		c, h, w = s.InputShape[0], s.InputShape[1], s.InputShape[2]
		f = c * h * w
	} else {
		f = s.InputShape[0]
	}
	first := true
	off := 0
	for i := range layers {
		l := &layers[i]
		l.in = f
		switch l.kind {
		case layerConv:
			if !image {
				return 0, fmt.Errorf("model: %s: layer %d: convolution after flatten", s.Arch, i)
			}
			oh := (h+2*l.pad-l.k)/l.stride + 1
			ow := (w+2*l.pad-l.k)/l.stride + 1
			if h+2*l.pad < l.k || w+2*l.pad < l.k {
				return 0, fmt.Errorf("model: %s: input shape %v too small: layer %d (conv %d×%d) sees %d×%d", s.Arch, s.InputShape, i, l.k, l.k, h, w)
			}
			if int64(oh)*int64(ow)*int64(l.k*l.k)*int64(c) > maxUnfold {
				return 0, fmt.Errorf("model: %s: input shape %v too large: layer %d would unfold %d×%d patches of %d values per example", s.Arch, s.InputShape, i, oh*ow, l.k*l.k, c)
			}
			l.conv = &convGeom{inC: c, inH: h, inW: w, chw: first && c > 1, outC: l.outC, k: l.k, stride: l.stride, pad: l.pad, outH: oh, outW: ow}
			c, h, w = l.outC, oh, ow
			f = c * h * w
			l.nW, l.nB = l.conv.cols()*l.outC, l.outC
			l.fanIn, l.fanO = l.k*l.k*l.conv.inC, l.k*l.k*l.outC
		case layerPool:
			if !image || first {
				return 0, fmt.Errorf("model: %s: layer %d: pooling must follow a convolution", s.Arch, i)
			}
			if h < l.k || w < l.k {
				return 0, fmt.Errorf("model: %s: input shape %v too small: layer %d (pool %d×%d) sees %d×%d", s.Arch, s.InputShape, i, l.k, l.k, h, w)
			}
			oh, ow := (h-l.k)/l.stride+1, (w-l.k)/l.stride+1
			l.pool = &poolGeom{c: c, inH: h, inW: w, k: l.k, stride: l.stride, outH: oh, outW: ow}
			h, w = oh, ow
			f = c * h * w
		case layerReLU:
		case layerDense:
			image = false
			l.nW = f * l.outC
			if l.bias {
				l.nB = l.outC
			}
			l.fanIn, l.fanO = f, l.outC
			f = l.outC
		}
		if l.kind == layerConv || l.kind == layerDense {
			first = false
			l.off = off
			off += l.nW + l.nB
		}
		l.out = f
	}
	if off == 0 {
		return 0, errors.New("model: architecture has no parameters")
	}
	if off > maxParams {
		return 0, fmt.Errorf("model: %s with input shape %v and %d classes has %d parameters, more than the supported %d", s.Arch, s.InputShape, s.Classes, off, maxParams)
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
