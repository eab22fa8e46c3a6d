package optim

import (
	"math"
	"testing"

	"github.com/privtrain/privtrain/aggregate"
)

// With σ = 0 and canaries whose norm exceeds R, the update is the clipped
// example gradients plus exactly R·e_j at each sampled canary coordinate.
func TestCanariesJoinTheBatchAndAreClipped(t *testing.T) {
	data := mnistSlice(t, 64)
	idx := []int{1, 2, 3, 4}
	run := func(c Canaries) []float32 {
		m := logreg(t)
		before := m.Params()
		agg, err := aggregate.New("sum", aggregate.Config{ClipNorm: 0.5})
		if err != nil {
			t.Fatal(err)
		}
		tr, err := NewTrainer(Config{Model: m, Data: data, Labels: true, Aggregator: agg, LR: 1, ClipNorm: 0.5,
			Sampler: listSampler{[][]int{idx}, 1}, Canaries: c})
		if err != nil {
			t.Fatal(err)
		}
		res, err := tr.Step(0)
		if err != nil {
			t.Fatal(err)
		}
		if res.BatchSize != len(idx) {
			t.Errorf("batch size %d counts canaries", res.BatchSize)
		}
		after := m.Params()
		for i := range after {
			after[i] = before[i] - after[i]
		}
		return after
	}
	plain := run(nil)
	c := &DiracCanaries{Coords: []int{10, 500, 7000, 7001}, Included: []bool{true, false, true, true}, Norm: 3, Q: 1, Seed: 9}
	with := run(c)
	want := map[int]bool{10: true, 7000: true, 7001: true}
	for j := range plain {
		d := float64(with[j] - plain[j])
		exp := 0.0
		if want[j] {
			exp = 0.5 // clipped from 3 to R = 0.5
		}
		if math.Abs(d-exp) > 1e-5 {
			t.Fatalf("coordinate %d: canary contribution %v, want %v", j, d, exp)
		}
	}
}

func TestDiracCanarySampling(t *testing.T) {
	n := 400
	c := &DiracCanaries{Norm: 1, Q: 0.25, Seed: 4}
	for i := 0; i < n; i++ {
		c.Coords = append(c.Coords, i)
		c.Included = append(c.Included, i%2 == 0)
	}
	total := 0
	for step := 0; step < 50; step++ {
		rows, err := c.StepRows(step, n)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			for j, v := range r {
				if v != 0 && j%2 == 1 {
					t.Fatalf("excluded canary %d sampled", j)
				}
			}
		}
		total += len(rows)
		again, _ := c.StepRows(step, n)
		if len(again) != len(rows) {
			t.Fatal("sampling is not a function of the step")
		}
	}
	// 50 steps × 200 included × 0.25 = 2500 expected, sd ≈ 31.
	if total < 2350 || total > 2650 {
		t.Errorf("sampled %d canary rows, want ≈ 2500", total)
	}
	bad := []*DiracCanaries{
		{Coords: []int{1, 1}, Included: []bool{true, true}, Norm: 1, Q: 0.5},
		{Coords: []int{1}, Included: []bool{true}, Norm: 0, Q: 0.5},
		{Coords: []int{1}, Included: []bool{true}, Norm: 1, Q: 0},
		{Coords: []int{n}, Included: []bool{true}, Norm: 1, Q: 0.5},
		{Coords: []int{1}, Included: nil, Norm: 1, Q: 0.5},
	}
	for _, b := range bad {
		if _, err := b.StepRows(0, n); err == nil {
			t.Errorf("invalid canaries %+v accepted", b)
		}
	}
}
