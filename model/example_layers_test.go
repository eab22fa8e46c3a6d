package model_test

import (
	"encoding/json"
	"fmt"
	"log"

	"github.com/privtrain/privtrain/model"
)

// A network as data: a small CNN with group normalisation, built as a Go
// value, trained like any built-in model, and written in its JSON form
// (what trainer train --model-file reads).
func ExampleLayers() {
	nw := model.Network{Init: model.InitTorch, Layers: model.Layers{
		model.Conv{Out: 8, Kernel: 5, Stride: 2, Pad: 2}, // 14×14×8
		model.GroupNorm{Groups: 2},
		model.Tanh{},
		model.AvgPool{Kernel: 2, Stride: 2}, // 7×7×8
		model.Flatten{},
		model.Dense{Out: 10},
	}}
	m, err := model.New(model.Spec{Arch: "small-gn", InputShape: []int{1, 28, 28}, Classes: 10, Network: &nw}, 1)
	if err != nil {
		log.Fatal(err)
	}
	// conv 25·8+8, group norm γ and β 2·8, dense 392·10+10.
	fmt.Println(m.NumParams(), "parameters")

	js, err := json.Marshal(nw)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(js))

	// Mistakes get a clear error.
	bad := model.Network{Layers: model.Layers{model.Conv{Out: 8, Kernel: 5, Stride: 1}, model.Dense{Out: 10}}}
	_, err = model.New(model.Spec{Arch: "bad", InputShape: []int{1, 28, 28}, Classes: 10, Network: &bad}, 1)
	fmt.Println(err)
	// Output:
	// 4154 parameters
	// {"layers":[{"kind":"conv","out":8,"kernel":5,"stride":2,"pad":2},{"kind":"group-norm","groups":2},{"kind":"tanh"},{"kind":"avg-pool","kernel":2,"stride":2},{"kind":"flatten"},{"kind":"dense","out":10}],"init":"torch"}
	// model: bad: input shape [1 28 28]: layer 1: dense on an image (8×24×24) needs a flatten first
}

// Registering an architecture under a name makes it available to New, to
// configuration checks and to the trainer's --model flag (call Register from
// an init function).
func ExampleRegister() {
	model.Register("mlp-64", func(s model.Spec) (model.Network, error) {
		if len(s.InputShape) != 3 {
			return model.Network{}, fmt.Errorf("mlp-64 wants image inputs, got %v", s.InputShape)
		}
		return model.Network{Init: model.InitTorch, Layers: model.Layers{
			model.Flatten{},
			model.Dense{Out: 64},
			model.ReLU{},
			model.Dense{Out: s.Classes},
		}}, nil
	})
	m, err := model.New(model.Spec{Arch: "mlp-64", InputShape: []int{1, 28, 28}, Classes: 10}, 1)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(m.NumParams())
	// Output: 50890
}
