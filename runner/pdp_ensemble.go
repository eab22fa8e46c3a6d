package runner

import (
	"fmt"
	"math"

	"github.com/privtrain/privtrain/model"
)

// ensembleAccuracy is the accuracy of AdaPDP's output-weighted ensemble
// (appendix B.2): θ_ada(x) = Σ_T w_T·θ_T(x) / Σ_T w_T with w_T = τ_T·|D_T|,
// where θ_T(x) is model T's softmax output (class probabilities).
func ensembleAccuracy(models []model.Model, weights []float64, x []float32, labels []int, dim int) (float64, error) {
	n := len(labels)
	if len(models) == 0 || len(models) != len(weights) {
		return 0, fmt.Errorf("ensemble: %d models for %d weights", len(models), len(weights))
	}
	if n == 0 || len(x) != n*dim {
		return 0, fmt.Errorf("ensemble: %d features for %d examples of dimension %d", len(x), n, dim)
	}
	var wsum float64
	for _, w := range weights {
		if !(w >= 0) || math.IsInf(w, 0) {
			return 0, fmt.Errorf("ensemble: weight %v", w)
		}
		wsum += w
	}
	if !(wsum > 0) {
		return 0, fmt.Errorf("ensemble: weights sum to %v", wsum)
	}
	classes := models[0].Spec().Classes
	const chunk = 1000
	out := make([]float32, chunk*classes)
	mix := make([]float64, chunk*classes)
	correct := 0
	for lo := 0; lo < n; lo += chunk {
		hi := min(lo+chunk, n)
		k := hi - lo
		clear(mix)
		for t, m := range models {
			if m.Spec().Classes != classes {
				return 0, fmt.Errorf("ensemble: model %d has %d classes, model 0 %d", t, m.Spec().Classes, classes)
			}
			if err := m.Predict(x[lo*dim:hi*dim], k, out[:k*classes]); err != nil {
				return 0, fmt.Errorf("ensemble: %w", err)
			}
			for i := 0; i < k; i++ {
				softmaxAdd(out[i*classes:(i+1)*classes], weights[t]/wsum, mix[i*classes:(i+1)*classes])
			}
		}
		correct += countCorrect(mix[:k*classes], classes, labels[lo:hi])
	}
	return float64(correct) / float64(n), nil
}

// softmaxAdd adds w·softmax(logits) to acc.
func softmaxAdd(logits []float32, w float64, acc []float64) {
	m := math.Inf(-1)
	for _, v := range logits {
		m = math.Max(m, float64(v))
	}
	var z float64
	for _, v := range logits {
		z += math.Exp(float64(v) - m)
	}
	for c, v := range logits {
		acc[c] += w * math.Exp(float64(v)-m) / z
	}
}
