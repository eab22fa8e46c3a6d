package datasets_test

import (
	"fmt"
	"log"
	"strings"

	"github.com/privtrain/privtrain/datasets"
)

// Load MNIST (no download needed: it ships in a Go module) and draw a
// Poisson-sampled batch.
func Example() {
	train, err := datasets.Load("mnist", "train", datasets.ResolveDataDir(""))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(train.Name, train.N, train.Shape, train.Classes, "first label:", train.Labels[0])

	s, err := datasets.NewPoissonSampler(train.N, 256.0/60000, 1)
	if err != nil {
		log.Fatal(err)
	}
	idx := s.Batch(0)
	x := make([]float32, len(idx)*train.Dim())
	y := make([]int, len(idx))
	if err := train.Gather(idx, x, y, nil); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("expected batch size %.0f\n", s.ExpectedBatchSize())
	// Output:
	// mnist/train 60000 [1 28 28] 10 first label: 5
	// expected batch size 256
}

func ExampleLoadLIBSVM() {
	d, err := datasets.LoadLIBSVM(strings.NewReader("+1 1:0.5 3:2\n-1 2:1\n"), 0)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(d.N, d.Shape, d.X, d.Targets, d.Labels)
	// Output: 2 [3] [0.5 0 2 0 1 0] [1 -1] [1 0]
}

func ExampleNewShuffleSampler() {
	s, err := datasets.NewShuffleSampler(10, 4, 7)
	if err != nil {
		log.Fatal(err)
	}
	for step := 0; step < s.StepsPerEpoch(); step++ {
		fmt.Println(len(s.Batch(step)))
	}
	// Output:
	// 4
	// 4
	// 2
}

func ExampleNewPersonalizedPoissonSampler() {
	// Example 0 is never sampled, example 2 always.
	s, err := datasets.NewPersonalizedPoissonSampler([]float64{0, 0.5, 1}, 3)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(s.ExpectedBatchSize())
	for step := 0; step < 3; step++ {
		b := s.Batch(step)
		fmt.Println(b[len(b)-1] == 2, b[0] != 0)
	}
	// Output:
	// 1.5
	// true true
	// true true
	// true true
}
