package corruption_test

import (
	"fmt"

	"github.com/privtrain/privtrain/corruption"
)

func Example() {
	labels := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	p, err := corruption.New(corruption.TargetedLabelFlip, 0.3, len(labels), 1)
	if err != nil {
		panic(err)
	}
	if err := p.ApplyData(nil, 0, labels, 10); err != nil {
		panic(err)
	}
	for _, i := range p.Indices() {
		fmt.Printf("example %d: label %d → %d\n", i, i, labels[i])
	}
	// Output:
	// example 0: label 0 → 9
	// example 2: label 2 → 7
	// example 6: label 6 → 3
}
