package model_test

import (
	"fmt"
	"log"
	"math"
	"os"
	"path/filepath"

	"github.com/privtrain/privtrain/model"
)

// A DP-SGD style use: per-example gradients of a small linear regression,
// each clipped to L2 norm 1 before summing.
func Example() {
	m, err := model.New(model.Spec{Arch: "linreg", InputShape: []int{2}, Classes: 1}, 1)
	if err != nil {
		log.Fatal(err)
	}
	if err := m.SetParams([]float32{1, -1}); err != nil {
		log.Fatal(err)
	}
	b := model.Batch{
		X:       []float32{1, 0, 1, 2, 3, 3},
		Targets: []float32{0, 0, 1},
		M:       3,
	}
	P := m.NumParams()
	grads := make([]float32, b.M*P)
	losses := make([]float32, b.M)
	if err := m.PerExampleGrads(b, grads, losses); err != nil {
		log.Fatal(err)
	}
	sum := make([]float64, P)
	for i := 0; i < b.M; i++ {
		g := grads[i*P : (i+1)*P]
		norm := math.Hypot(float64(g[0]), float64(g[1]))
		s := math.Min(1, 1/norm)
		fmt.Printf("example %d: loss %.2f, gradient %v, norm %.3f\n", i, losses[i], g, norm)
		for k, v := range g {
			sum[k] += s * float64(v)
		}
	}
	fmt.Printf("clipped sum: [%.3f %.3f]\n", sum[0], sum[1])
	// Output:
	// example 0: loss 0.50, gradient [1 0], norm 1.000
	// example 1: loss 0.50, gradient [-1 -2], norm 2.236
	// example 2: loss 0.50, gradient [-3 -3], norm 4.243
	// clipped sum: [-0.154 -1.602]
}

// Saving and loading a model.
func ExampleSave() {
	m, err := model.New(model.Spec{Arch: "tfp-cnn", InputShape: []int{1, 28, 28}, Classes: 10}, 7)
	if err != nil {
		log.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "privtrain-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "model.bin")
	if err := model.Save(path, m); err != nil {
		log.Fatal(err)
	}
	back, err := model.Load(path)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(back.Spec().Arch, back.NumParams())
	// Output: tfp-cnn 26010
}
