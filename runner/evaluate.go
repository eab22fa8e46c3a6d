package runner

import (
	"fmt"

	"github.com/privtrain/privtrain/model"
)

// Accuracy returns the fraction of the n examples in x (n × dim) whose
// highest-scoring class equals the label.
func Accuracy(m model.Model, x []float32, labels []int, dim int) (float64, error) {
	n := len(labels)
	if n == 0 {
		return 0, fmt.Errorf("accuracy: empty evaluation set")
	}
	if len(x) != n*dim {
		return 0, fmt.Errorf("accuracy: %d features for %d examples of dimension %d", len(x), n, dim)
	}
	classes := m.Spec().Classes
	const chunk = 1000
	out := make([]float32, chunk*classes)
	correct := 0
	for lo := 0; lo < n; lo += chunk {
		hi := min(lo+chunk, n)
		k := hi - lo
		if err := m.Predict(x[lo*dim:hi*dim], k, out[:k*classes]); err != nil {
			return 0, fmt.Errorf("accuracy: %w", err)
		}
		correct += countCorrect(out[:k*classes], classes, labels[lo:hi])
	}
	return float64(correct) / float64(n), nil
}

// countCorrect counts the rows of scores (len(labels) × classes) whose
// highest-scoring class (the first on ties) equals the label.
func countCorrect[T float32 | float64](scores []T, classes int, labels []int) int {
	correct := 0
	for i, y := range labels {
		row := scores[i*classes : (i+1)*classes]
		best := 0
		for c := 1; c < classes; c++ {
			if row[c] > row[best] {
				best = c
			}
		}
		if best == y {
			correct++
		}
	}
	return correct
}
