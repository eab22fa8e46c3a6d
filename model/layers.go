package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// Layer kinds of a network description (Layer.Kind).
const (
	KindConv      = "conv"       // 2-D convolution: Out channels, Kernel × Kernel, Stride, Pad
	KindMaxPool   = "max-pool"   // max pooling: Kernel × Kernel windows, Stride, no padding
	KindAvgPool   = "avg-pool"   // average pooling: Kernel × Kernel windows, Stride, no padding
	KindReLU      = "relu"       // max(x, 0)
	KindTanh      = "tanh"       // tanh(x)
	KindGroupNorm = "group-norm" // group normalisation: Groups groups, per-channel γ, β
	KindFlatten   = "flatten"    // image (H, W, C) to a flat vector
	KindDense     = "dense"      // fully connected: Out units
)

// Initialisation schemes (Network.Init).
const (
	InitGlorot = "glorot" // Keras: Glorot-uniform kernels, zero biases
	InitTorch  = "torch"  // PyTorch: kernels and biases U(±1/√fan_in)
	InitZero   = "zero"   // all zeros
)

// Losses (Network.Loss).
const (
	LossSoftmaxCE = "softmax-cross-entropy" // −log softmax(z)_y; needs Classes ≥ 2
	LossSquared   = "squared"               // ½(z − y)² + (μ/2)‖θ‖²; needs Classes = 1
)

// Kinds lists the layer kinds a Network may use.
func Kinds() []string {
	return []string{KindConv, KindMaxPool, KindAvgPool, KindReLU, KindTanh, KindGroupNorm, KindFlatten, KindDense}
}

// Layer is one layer of a sequential network. Only the fields of its kind
// may be set:
//
//   - conv: Out ≥ 1 output channels, Kernel ≥ 1, Stride ≥ 1, 0 ≤ Pad < Kernel
//     (zero padding); convolutions always have a bias;
//   - max-pool, avg-pool: Kernel ≥ 1, Stride ≥ 1 (no padding);
//   - group-norm: Groups ≥ 1 dividing the channel count;
//   - dense: Out ≥ 1 units, NoBias;
//   - relu, tanh, flatten: nothing.
type Layer struct {
	Kind   string `json:"kind" yaml:"kind"`
	Out    int    `json:"out,omitempty" yaml:"out,omitempty"`
	Kernel int    `json:"kernel,omitempty" yaml:"kernel,omitempty"`
	Stride int    `json:"stride,omitempty" yaml:"stride,omitempty"`
	Pad    int    `json:"pad,omitempty" yaml:"pad,omitempty"`
	Groups int    `json:"groups,omitempty" yaml:"groups,omitempty"`
	NoBias bool   `json:"no_bias,omitempty" yaml:"no_bias,omitempty"`
}

// Layers is a sequential list of layers, applied in order.
type Layers []Layer

// Network describes a sequential network as data: its layers, how its
// parameters are initialised and its loss. Its JSON (and YAML) form is
//
//	{"init": "torch", "loss": "softmax-cross-entropy",
//	 "layers": [{"kind": "conv", "out": 16, "kernel": 8, "stride": 2, "pad": 3},
//	            {"kind": "relu"}, …, {"kind": "dense", "out": 10}]}
type Network struct {
	// Layers are applied in order; the last one's output size must equal
	// Spec.Classes.
	Layers Layers `json:"layers" yaml:"layers"`
	// Init is InitGlorot (the default when empty), InitTorch or InitZero.
	Init string `json:"init,omitempty" yaml:"init,omitempty"`
	// Loss is LossSoftmaxCE (the default when empty) or LossSquared.
	Loss string `json:"loss,omitempty" yaml:"loss,omitempty"`
}

// kindInfo says which fields a layer kind takes.
type kindInfo struct {
	out, kernel, pad, groups, bias bool
}

var kindInfos = map[string]kindInfo{
	KindConv:      {out: true, kernel: true, pad: true},
	KindMaxPool:   {kernel: true},
	KindAvgPool:   {kernel: true},
	KindReLU:      {},
	KindTanh:      {},
	KindGroupNorm: {groups: true},
	KindFlatten:   {},
	KindDense:     {out: true, bias: true},
}

// Validate checks what can be checked without an input shape: known kinds,
// init and loss, and each layer's sizes. Shapes are checked by New.
func (n Network) Validate() error {
	if len(n.Layers) == 0 {
		return errors.New("network has no layers")
	}
	switch n.Init {
	case "", InitGlorot, InitTorch, InitZero:
	default:
		return fmt.Errorf("unknown init %q (known: %s, %s, %s)", n.Init, InitGlorot, InitTorch, InitZero)
	}
	switch n.Loss {
	case "", LossSoftmaxCE, LossSquared:
	default:
		return fmt.Errorf("unknown loss %q (known: %s, %s)", n.Loss, LossSoftmaxCE, LossSquared)
	}
	for i, l := range n.Layers {
		if err := l.validate(); err != nil {
			return fmt.Errorf("layer %d (%s): %w", i, l.Kind, err)
		}
	}
	return nil
}

func (l Layer) validate() error {
	info, ok := kindInfos[l.Kind]
	if !ok {
		return fmt.Errorf("unknown layer kind %q (known: %s)", l.Kind, strings.Join(Kinds(), ", "))
	}
	const big = 1 << 20 // far above any sensible size; keeps products in range
	check := func(name string, v int, takes bool, lo int) error {
		switch {
		case !takes && v != 0:
			return fmt.Errorf("%s takes no %s (got %d)", l.Kind, name, v)
		case takes && (v < lo || v > big):
			return fmt.Errorf("%s must be in [%d, %d], got %d", name, lo, big, v)
		}
		return nil
	}
	if err := check("out", l.Out, info.out, 1); err != nil {
		return err
	}
	if err := check("kernel", l.Kernel, info.kernel, 1); err != nil {
		return err
	}
	if err := check("stride", l.Stride, info.kernel, 1); err != nil {
		return err
	}
	if err := check("pad", l.Pad, info.pad, 0); err != nil {
		return err
	}
	if err := check("groups", l.Groups, info.groups, 1); err != nil {
		return err
	}
	if info.pad && l.Pad >= l.Kernel {
		return fmt.Errorf("pad %d must be less than the kernel size %d", l.Pad, l.Kernel)
	}
	if !info.bias && l.NoBias {
		return fmt.Errorf("%s does not support no_bias", l.Kind)
	}
	return nil
}

// ParseNetwork decodes a network description from JSON or YAML (JSON is
// tried first when the data starts with '{'). Unknown fields are errors, so
// that a misspelt field is not silently ignored; the result is validated.
func ParseNetwork(data []byte) (Network, error) {
	var n Network
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && trimmed[0] == '{' {
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&n); err != nil {
			return Network{}, fmt.Errorf("model: network JSON: %w", err)
		}
		if dec.More() {
			return Network{}, errors.New("model: network JSON: trailing data after the object")
		}
	} else {
		dec := yaml.NewDecoder(bytes.NewReader(trimmed))
		dec.KnownFields(true)
		if err := dec.Decode(&n); err != nil {
			// yaml.v3 lists its errors on several lines: keep one line.
			return Network{}, fmt.Errorf("model: network YAML: %s", strings.Join(strings.Fields(err.Error()), " "))
		}
	}
	if err := n.Validate(); err != nil {
		return Network{}, fmt.Errorf("model: network: %w", err)
	}
	return n, nil
}

// ReadNetworkFile reads a network description from a JSON or YAML file.
func ReadNetworkFile(path string) (Network, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Network{}, fmt.Errorf("model: %w", err)
	}
	n, err := ParseNetwork(data)
	if err != nil {
		return Network{}, fmt.Errorf("%w (in %s)", err, filepath.Base(path))
	}
	return n, nil
}

// Equal reports whether n and o describe the same network (both nil
// counts as equal).
func (n *Network) Equal(o *Network) bool {
	if n == nil || o == nil {
		return n == o
	}
	return n.Init == o.Init && n.Loss == o.Loss && slices.Equal(n.Layers, o.Layers)
}

// clone returns a deep copy of n (nil for nil).
func (n *Network) clone() *Network {
	if n == nil {
		return nil
	}
	c := *n
	c.Layers = slices.Clone(n.Layers)
	return &c
}
