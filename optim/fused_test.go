package optim

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/privtrain/privtrain/aggregate"
	"github.com/privtrain/privtrain/internal/vec"
)

// plainOnly hides an aggregator's optional fast path.
type plainOnly struct{ aggregate.Aggregator }

// TestClipFactorsExactBound runs the one-pass clipping on the adversarial
// rows of TestClipExactBound: every row the sum rule accepts, i.e. the row
// fl32(s·g) it adds, has exact norm ≤ R (big.Float), and a rejected row
// (ErrNotClipped) goes through clipRows in clipAndAggregate.
func TestClipFactorsExactBound(t *testing.T) {
	rejected := 0
	for k, c := range exactBoundCases() {
		p := len(c.row)
		scale := make([]float32, 1)
		if err := clipFactors(c.row, 1, p, c.r, nil, scale, 1); err != nil {
			t.Fatalf("case %d (%s): %v", k, c.name, err)
		}
		a, err := aggregate.New("sum", aggregate.Config{Sigma: 1, ClipNorm: c.r, FloatNoise: true})
		if err != nil {
			t.Fatal(err)
		}
		g := append([]float32(nil), c.row...)
		_, err = a.(aggregate.ScaledAggregator).AggregateScaled(aggregate.Grads{G: g, Norms: make([]float64, 1), M: 1, P: p, ClipNorm: c.r}, scale, rand.New(rand.NewPCG(1, 1)), make([]float32, p))
		if errors.Is(err, aggregate.ErrNotClipped) {
			rejected++
			tr := &Trainer{cfg: Config{Aggregator: a, ClipNorm: c.r, Workers: 1}, p: p, out: make([]float32, p)}
			if _, err := tr.clipAndAggregate(g, 1, nil, make([]float64, 1), rand.New(rand.NewPCG(1, 1))); err != nil {
				t.Fatalf("case %d (%s): fallback: %v", k, c.name, err)
			}
			if exceedsExactly(g, c.r) {
				t.Errorf("case %d (%s): the fallback left a row above R", k, c.name)
			}
			continue
		}
		if err != nil {
			t.Fatalf("case %d (%s): %v", k, c.name, err)
		}
		clipped := make([]float32, p)
		for i, v := range c.row {
			clipped[i] = scale[0] * v
		}
		if exceedsExactly(clipped, c.r) {
			t.Errorf("case %d (%s, p=%d, R=%v): accepted scaled row has exact norm > R", k, c.name, p, c.r)
		}
	}
	t.Logf("%d rows rejected by the measured bound (clipped by clipRows instead)", rejected)
}

// TestClipAndAggregateFused checks that the one-pass path releases the same
// vector, bit for bit, as clipping in place and then aggregating, on a
// batch with clipped and unclipped rows, with and without the model's
// sums of squares.
func TestClipAndAggregateFused(t *testing.T) {
	const m, p, r = 9, 20000, 1.0
	rng := rand.New(rand.NewPCG(5, 5))
	g := make([]float32, m*p)
	for i := range g {
		g[i] = float32(rng.NormFloat64() * 0.01 * float64(1+i/p)) // norms ≈ 1.4·(i+1)
	}
	for _, withSq := range []bool{false, true} {
		var outs [2][]float32
		for v := 0; v < 2; v++ {
			a, err := aggregate.New("sum", aggregate.Config{Sigma: 0.7, ClipNorm: r, FloatNoise: true})
			if err != nil {
				t.Fatal(err)
			}
			if v == 1 {
				a = plainOnly{a}
			}
			h := append([]float32(nil), g...)
			var sq []float64
			if withSq {
				sq = make([]float64, m)
				for i := range sq {
					sq[i] = vec.SumSquares(h[i*p : (i+1)*p])
				}
			}
			tr := &Trainer{cfg: Config{Aggregator: a, ClipNorm: r, Workers: 2}, p: p, out: make([]float32, p)}
			norms := make([]float64, m)
			if _, err := tr.clipAndAggregate(h, m, sq, norms, rand.New(rand.NewPCG(9, 9))); err != nil {
				t.Fatal(err)
			}
			for i, n := range norms {
				if n > r || n < 0.99*r*min(1, 1.4*float64(i+1)) {
					t.Errorf("variant %d: norm %d = %v", v, i, n)
				}
			}
			outs[v] = tr.out
		}
		for j := range outs[0] {
			if outs[0][j] != outs[1][j] {
				t.Fatalf("sq=%v: fused out[%d] = %v, clip-then-aggregate %v", withSq, j, outs[0][j], outs[1][j])
			}
		}
	}
}
