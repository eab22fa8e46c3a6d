package modeltest_test

import (
	"fmt"
	"log"

	"github.com/privtrain/privtrain/model"
	"github.com/privtrain/privtrain/model/modeltest"
)

// Checking the per-example gradients of a network: here built-in kinds;
// a network with a kind of one's own is checked the same way.
func ExampleCheck() {
	s := model.Spec{Arch: "small", InputShape: []int{1, 8, 8}, Classes: 3, Network: &model.Network{Init: model.InitTorch, Layers: model.Layers{
		model.Conv{Out: 4, Kernel: 3, Stride: 1, NoBias: true},
		model.GroupNorm{Groups: 2},
		model.Tanh{},
		model.Flatten{},
		model.Dense{Out: 3},
	}}}
	m, err := model.New(s, 1)
	if err != nil {
		log.Fatal(err)
	}
	// Move the parameters off their initial values (γ = 1, β = 0).
	if err := modeltest.Perturb(m, 0.1, 1); err != nil {
		log.Fatal(err)
	}
	// 300 examples: large and small chunks.
	fmt.Println(modeltest.Check(m, modeltest.RandomBatch(s, 300, 1), modeltest.Options{}))
	// Output: <nil>
}
