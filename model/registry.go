package model

import (
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Builder returns the network of a named architecture for a spec (its
// InputShape and Classes; the last layer usually has Classes outputs).
type Builder func(Spec) (Network, error)

var registry = struct {
	sync.RWMutex
	m map[string]Builder
}{m: map[string]Builder{}}

// Register makes an architecture available to New (Spec.Arch), to
// configuration checks and to the command-line help under name. Like
// database/sql.Register it is meant for init functions, and it panics if
// name is empty or already registered, or if build is nil.
func Register(name string, build Builder) {
	registry.Lock()
	defer registry.Unlock()
	if name == "" || build == nil {
		panic("model: Register needs a name and a builder")
	}
	if _, dup := registry.m[name]; dup {
		panic("model: Register called twice for architecture " + name)
	}
	registry.m[name] = build
}

// Names lists the registered architectures, sorted.
func Names() []string {
	registry.RLock()
	defer registry.RUnlock()
	names := make([]string, 0, len(registry.m))
	for n := range registry.m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Archs lists the architecture names Spec.Arch accepts.
//
// Deprecated: use Names, which it returns.
func Archs() []string { return Names() }

// network returns the network of a spec: its own Network if set (Arch is
// then only a label and must not be a registered name), else the
// registered architecture's.
func (s Spec) network() (Network, error) {
	registry.RLock()
	build, ok := registry.m[s.Arch]
	registry.RUnlock()
	if s.Network != nil {
		switch {
		case s.Arch == "":
			return Network{}, fmt.Errorf("model: a spec with its own network needs a name (Arch)")
		case ok:
			return Network{}, fmt.Errorf("model: %q is a registered architecture; a spec with its own network needs another name", s.Arch)
		}
		return *s.Network.clone(), nil
	}
	if !ok {
		return Network{}, fmt.Errorf("model: unknown architecture %q (known: %s)", s.Arch, strings.Join(Names(), ", "))
	}
	n, err := build(s)
	if err != nil {
		return Network{}, fmt.Errorf("model: %s: %w", s.Arch, err)
	}
	return n, nil
}

// The built-in architectures (see the package documentation).
func init() {
	Register("tfp-cnn", func(s Spec) (Network, error) { return tfpCNN(s.Classes, InitGlorot), nil })
	Register("pdp-cnn-mnist", func(s Spec) (Network, error) { return tfpCNN(s.Classes, InitTorch), nil })
	Register("pdp-cnn-svhn", func(s Spec) (Network, error) {
		return Network{Init: InitTorch, Layers: Layers{
			Conv{Out: 6, Kernel: 5, Stride: 1},
			ReLU{},
			MaxPool{Kernel: 2, Stride: 2},
			Conv{Out: 16, Kernel: 5, Stride: 1},
			ReLU{},
			MaxPool{Kernel: 2, Stride: 2},
			Flatten{},
			Dense{Out: 120},
			ReLU{},
			Dense{Out: 84},
			ReLU{},
			Dense{Out: s.Classes},
		}}, nil
	})
	Register("logreg", func(s Spec) (Network, error) {
		return Network{Init: InitZero, Layers: Layers{Dense{Out: s.Classes}}}, nil
	})
	Register("linreg", func(s Spec) (Network, error) {
		return Network{Init: InitZero, Loss: LossSquared, Layers: Layers{Dense{Out: 1, NoBias: true}}}, nil
	})
}

// tfpCNN is the TF-Privacy tutorial CNN (also the PDP-SGD MNIST CNN).
func tfpCNN(classes int, init string) Network {
	return Network{Init: init, Layers: Layers{
		Conv{Out: 16, Kernel: 8, Stride: 2, Pad: 3},
		ReLU{},
		MaxPool{Kernel: 2, Stride: 1},
		Conv{Out: 32, Kernel: 4, Stride: 2},
		ReLU{},
		MaxPool{Kernel: 2, Stride: 1},
		Flatten{},
		Dense{Out: 32},
		ReLU{},
		Dense{Out: classes},
	}}
}
