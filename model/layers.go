package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
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

// Layers is a sequential list of layers, applied in order. Its JSON and
// YAML form is a list of objects {"kind": name, parameters…}, each decoded
// through its registered kind.
type Layers []Layer

// Network describes a sequential network as data: its layers, how its
// parameters are initialised and its loss. Its JSON (and YAML) form is
//
//	{"init": "torch", "loss": "softmax-cross-entropy",
//	 "layers": [{"kind": "conv", "out": 16, "kernel": 8, "stride": 2, "pad": 3},
//	            {"kind": "relu"}, …, {"kind": "dense", "out": 10}]}
//
// A Network is a sequential list of layers (Layers) with an initialisation
// (InitGlorot, InitTorch, InitZero) and a loss (LossSoftmaxCE,
// LossSquared); it is a Go value with a JSON and YAML form (ParseNetwork,
// ReadNetworkFile; unknown fields are errors). Each layer is a value of its
// kind's type: Conv, MaxPool, AvgPool, ReLU, Tanh, GroupNorm, Flatten and
// Dense are built in, and Kinds lists every registered kind. In JSON a
// layer is {"kind": name, its parameters…}, decoded through the kind
// registered under that name. New checks the network against the spec —
// kernel, stride and padding ranges, shapes that fit, group counts
// dividing the channels, a flatten before the first dense layer on images,
// pooling and group norm only after a convolution (before one, images are
// in (C, H, W) order), the output size equal to Classes — and says which
// layer is wrong. Convolutions and dense layers have a bias unless NoBias
// ("no_bias": true). Group norm (ε = 1e-5, γ = 1 and β = 0 initially
// whatever the init) normalises each example's group of channels over its
// positions and has per-channel γ and β, whose exact per-example gradients
// are Σ ∂ℓ/∂z·x̂ and Σ ∂ℓ/∂z. Flatten only changes the shape bookkeeping:
// activations are already one row per example, in (H, W, C) order after a
// convolution and in the input's (C, H, W) order before one.
type Network struct {
	// Layers are applied in order; the last one's output size must equal
	// Spec.Classes.
	Layers Layers `json:"layers" yaml:"layers"`
	// Init is InitGlorot (the default when empty), InitTorch or InitZero.
	Init string `json:"init,omitempty" yaml:"init,omitempty"`
	// Loss is LossSoftmaxCE (the default when empty) or LossSquared.
	Loss string `json:"loss,omitempty" yaml:"loss,omitempty"`
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
		if l == nil {
			return fmt.Errorf("layer %d is nil", i)
		}
		if err := checkRegistered(l); err != nil {
			return fmt.Errorf("layer %d: %w", i, err)
		}
		if err := l.Validate(); err != nil {
			return fmt.Errorf("layer %d (%s): %w", i, l.Kind(), err)
		}
	}
	return nil
}

// maxSize bounds a layer's integer parameters: far above any sensible
// size, it keeps products in range.
const maxSize = 1 << 20

// checkRange checks that a layer's parameter name = v lies in [lo, maxSize].
func checkRange(name string, v, lo int) error {
	if v < lo || v > maxSize {
		return fmt.Errorf("%s must be in [%d, %d], got %d", name, lo, maxSize, v)
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
	return n.Init == o.Init && n.Loss == o.Loss && len(n.Layers) == len(o.Layers) &&
		(len(n.Layers) == 0 || reflect.DeepEqual(n.Layers, o.Layers))
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

// firstErr returns the first non-nil error.
func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
