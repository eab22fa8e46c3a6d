package optim

import (
	"math"
	"strings"
	"testing"

	"github.com/privtrain/privtrain/aggregate"
	"github.com/privtrain/privtrain/model"
)

// opaqueRule hides every method of a rule but Aggregator's (no Clipping).
type opaqueRule struct{ aggregate.Aggregator }

// TestTrainerTakesClipNormFromRule: with Config.ClipNorm 0 the trainer
// clips to the R the rule states (aggregate.Clipping); the update then
// equals −lr·Σ clip_R(∇ℓ_i)/E[batch] computed by hand from the model's
// per-example gradients. A different Config.ClipNorm is refused; a rule
// that states no R is clipped to Config.ClipNorm, or not at all.
func TestTrainerTakesClipNormFromRule(t *testing.T) {
	const R, lr, expected = 0.05, 0.5, 10.0
	data := mnistSlice(t, 64)
	idx := []int{3, 5, 8, 13, 21, 34}
	// The reference: per-example gradients of the same model, clipped (or
	// not) in float64.
	ref := logreg(t)
	p := ref.NumParams()
	b := model.Batch{X: make([]float32, len(idx)*784), Labels: make([]int, len(idx)), M: len(idx)}
	if err := data.Gather(idx, b.X, b.Labels, nil); err != nil {
		t.Fatal(err)
	}
	g := make([]float32, len(idx)*p)
	if err := ref.PerExampleGrads(b, g, make([]float32, len(idx))); err != nil {
		t.Fatal(err)
	}
	want := func(r float64) []float64 {
		th := ref.Params()
		w := make([]float64, p)
		for j := range w {
			w[j] = float64(th[j])
		}
		clipped := 0
		for i := range idx {
			row := g[i*p : (i+1)*p]
			var ss float64
			for _, v := range row {
				ss += float64(v) * float64(v)
			}
			s := 1.0
			if r > 0 && math.Sqrt(ss) > r {
				s, clipped = r/math.Sqrt(ss), clipped+1
			}
			for j, v := range row {
				w[j] -= lr * s * float64(v) / expected
			}
		}
		if r > 0 && clipped == 0 {
			t.Fatalf("no gradient is longer than R = %v: the test would not see the clipping", r)
		}
		return w
	}
	step := func(agg aggregate.Aggregator, clip float64) ([]float32, error) {
		m := logreg(t)
		tr, err := NewTrainer(Config{Model: m, Data: data, Labels: true, Aggregator: agg, LR: lr, ClipNorm: clip,
			Sampler: listSampler{[][]int{idx}, expected}})
		if err != nil {
			return nil, err
		}
		if _, err := tr.Step(0); err != nil {
			t.Fatal(err)
		}
		return m.Params(), nil
	}
	sum, err := aggregate.New("sum", aggregate.Config{ClipNorm: R})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		agg  aggregate.Aggregator
		clip float64
		want float64 // the R of the reference (0: unclipped)
	}{
		{"R from the rule", sum, 0, R},
		{"R stated twice, equal", sum, R, R},
		{"rule without Clipping, Config.ClipNorm", opaqueRule{sum}, R, R},
		{"rule without Clipping, no R", opaqueRule{sum}, 0, 0},
	} {
		got, err := step(c.agg, c.clip)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		w := want(c.want)
		for j := range w {
			if math.Abs(float64(got[j])-w[j]) > 1e-6 {
				t.Fatalf("%s: parameter %d = %v, want %v", c.name, j, got[j], w[j])
			}
		}
	}
	if _, err := step(sum, 2*R); err == nil || !strings.Contains(err.Error(), "clips to R = 0.05") {
		t.Errorf("Config.ClipNorm 0.1 with a rule clipping to 0.05: %v", err)
	}
}
