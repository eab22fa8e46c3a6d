package model

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/privtrain/privtrain/internal/vec"
)

var testSpecs = []Spec{
	{Arch: "tfp-cnn", InputShape: []int{1, 28, 28}, Classes: 10},
	{Arch: "tfp-cnn", InputShape: []int{3, 32, 32}, Classes: 10},
	{Arch: "tfp-cnn", InputShape: []int{2, 16, 16}, Classes: 3},
	{Arch: "pdp-cnn-mnist", InputShape: []int{1, 28, 28}, Classes: 10},
	{Arch: "pdp-cnn-svhn", InputShape: []int{3, 32, 32}, Classes: 10},
	{Arch: "pdp-cnn-svhn", InputShape: []int{3, 16, 16}, Classes: 4},
	{Arch: "logreg", InputShape: []int{22}, Classes: 2},
	{Arch: "logreg", InputShape: []int{9}, Classes: 5},
	{Arch: "linreg", InputShape: []int{13}, Classes: 1, L2: 0.3},
	{Arch: "linreg", InputShape: []int{6}, Classes: 1},
}

func specName(s Spec) string { return fmt.Sprintf("%s%v/%d/%g", s.Arch, s.InputShape, s.Classes, s.L2) }

// randomBatch draws inputs in [0, 1) (or N(0,1) for vector models), labels
// and targets.
func randomBatch(s Spec, m int, rng *rand.Rand) Batch {
	d := 1
	for _, v := range s.InputShape {
		d *= v
	}
	b := Batch{X: make([]float32, m*d), M: m}
	for i := range b.X {
		if len(s.InputShape) == 3 {
			b.X[i] = rng.Float32()
		} else {
			b.X[i] = float32(rng.NormFloat64())
		}
	}
	if refSquared(s) {
		b.Targets = make([]float32, m)
		for i := range b.Targets {
			b.Targets[i] = float32(rng.NormFloat64())
		}
	} else {
		b.Labels = make([]int, m)
		for i := range b.Labels {
			b.Labels[i] = rng.IntN(s.Classes)
		}
	}
	return b
}

// perturbed returns a model whose parameters are its initialisation plus
// noise, so that zero-initialised models and biases are exercised too.
func perturbed(t *testing.T, s Spec, seed uint64) Model {
	t.Helper()
	m, err := New(s, seed)
	if err != nil {
		t.Fatalf("New(%v): %v", s, err)
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	p := m.Params()
	for i := range p {
		p[i] += float32(0.05 * rng.NormFloat64())
	}
	if err := m.SetParams(p); err != nil {
		t.Fatal(err)
	}
	return m
}

func example(b Batch, i, d int) Batch {
	e := Batch{X: b.X[i*d : (i+1)*d], M: 1}
	if b.Labels != nil {
		e.Labels = b.Labels[i : i+1]
	}
	if b.Targets != nil {
		e.Targets = b.Targets[i : i+1]
	}
	return e
}

func closeTo(got, want, rel, abs float64) bool {
	return math.Abs(got-want) <= abs+rel*math.Abs(want)
}

func TestNumParams(t *testing.T) {
	for _, tc := range []struct {
		s    Spec
		want int
	}{
		// TF-Privacy tutorial: 1040 + 8224 + 16416 + 330.
		{Spec{Arch: "tfp-cnn", InputShape: []int{1, 28, 28}, Classes: 10}, 26010},
		// CIFAR-shaped: 3072+16 + 8192+32 + 800·32+32 + 330.
		{Spec{Arch: "tfp-cnn", InputShape: []int{3, 32, 32}, Classes: 10}, 37274},
		{Spec{Arch: "tfp-cnn", InputShape: []int{1, 28, 28}, Classes: 26}, 26010 - 330 + 32*26 + 26},
		{Spec{Arch: "pdp-cnn-mnist", InputShape: []int{1, 28, 28}, Classes: 10}, 26010},
		// LeNet-5: 456 + 2416 + 48120 + 10164 + 850.
		{Spec{Arch: "pdp-cnn-svhn", InputShape: []int{3, 32, 32}, Classes: 10}, 62006},
		{Spec{Arch: "logreg", InputShape: []int{22}, Classes: 2}, 46},
		{Spec{Arch: "linreg", InputShape: []int{22}, Classes: 1}, 22},
	} {
		m, err := New(tc.s, 1)
		if err != nil {
			t.Fatalf("New(%v): %v", tc.s, err)
		}
		if got := m.NumParams(); got != tc.want || len(m.Params()) != tc.want {
			t.Errorf("%s: NumParams = %d, len(Params) = %d, want %d", specName(tc.s), got, len(m.Params()), tc.want)
		}
	}
}

func TestNewErrors(t *testing.T) {
	for _, s := range []Spec{
		{Arch: "resnet", InputShape: []int{1, 28, 28}, Classes: 10},
		{Arch: "tfp-cnn", InputShape: []int{784}, Classes: 10},
		{Arch: "tfp-cnn", InputShape: []int{1, 8, 8}, Classes: 10},
		{Arch: "tfp-cnn", InputShape: []int{1, 28, 0}, Classes: 10},
		{Arch: "tfp-cnn", InputShape: []int{3, 40000, 40000}, Classes: 10},
		{Arch: "logreg", InputShape: []int{1 << 20}, Classes: 1 << 10},
		{Arch: "tfp-cnn", InputShape: []int{1 << 40, 1 << 40, 1 << 40}, Classes: 10},
		{Arch: "logreg", InputShape: []int{10}, Classes: 1 << 40},
		{Arch: "tfp-cnn", InputShape: []int{1, 28, 28}, Classes: 1},
		{Arch: "logreg", InputShape: []int{1, 28, 28}, Classes: 10},
		{Arch: "logreg", InputShape: []int{10}, Classes: 2, L2: 1},
		{Arch: "linreg", InputShape: []int{10}, Classes: 2},
		{Arch: "linreg", InputShape: []int{10}, Classes: 1, L2: -1},
		{Arch: "linreg", InputShape: []int{10}, Classes: 1, L2: math.NaN()},
	} {
		if _, err := New(s, 1); err == nil {
			t.Errorf("New(%+v): no error", s)
		}
	}
}

// TestPredictMatchesReference checks the forward pass (and so the parameter
// layout) against the independent float64 reference.
func TestPredictMatchesReference(t *testing.T) {
	for _, s := range testSpecs {
		t.Run(specName(s), func(t *testing.T) {
			m := perturbed(t, s, 3)
			rng := rand.New(rand.NewPCG(4, 4))
			const n = 70
			b := randomBatch(s, n, rng)
			out := make([]float32, n*s.Classes)
			if err := m.Predict(b.X, n, out); err != nil {
				t.Fatal(err)
			}
			theta := f64(m.Params())
			d := len(b.X) / n
			for i := 0; i < n; i++ {
				want := refForward(s, theta, f64(b.X[i*d:(i+1)*d]))
				for c, w := range want {
					if g := float64(out[i*s.Classes+c]); !closeTo(g, w, 1e-4, 1e-4) {
						t.Fatalf("example %d output %d: got %v, want %v", i, c, g, w)
					}
				}
			}
		})
	}
}

func f64(x []float32) []float64 {
	r := make([]float64, len(x))
	for i, v := range x {
		r[i] = float64(v)
	}
	return r
}

// TestPerExampleGrads checks, for batch sizes around the chunk boundaries,
// that each per-example gradient equals the batch-of-one gradient, that the
// losses match the reference and that the rows sum to BatchGrad.
func TestPerExampleGrads(t *testing.T) {
	for _, s := range testSpecs {
		t.Run(specName(s), func(t *testing.T) {
			m := perturbed(t, s, 5)
			big, small := m.(*net).sizes[0], m.(*net).sizes[1]
			P := m.NumParams()
			theta := f64(m.Params())
			rng := rand.New(rand.NewPCG(6, 6))
			for _, M := range []int{0, 1, 2, 7, small + 1, big - 1, big, big + 1, 2*big + 3, 3*big - 5} {
				b := randomBatch(s, M, rng)
				d := 0
				if M > 0 {
					d = len(b.X) / M
				}
				grads := make([]float32, M*P)
				for i := range grads {
					grads[i] = float32(math.NaN()) // must be overwritten
				}
				losses := make([]float32, M)
				if err := m.PerExampleGrads(b, grads, losses); err != nil {
					t.Fatal(err)
				}
				batch := make([]float32, P)
				for i := range batch {
					batch[i] = 7 // must be overwritten
				}
				lossSum, err := m.BatchGrad(b, batch)
				if err != nil {
					t.Fatal(err)
				}
				var wantLoss float64
				for i := 0; i < M; i++ {
					wantLoss += float64(losses[i])
				}
				if !closeTo(lossSum, wantLoss, 1e-5, 1e-5) {
					t.Errorf("M=%d: BatchGrad loss %v, sum of per-example losses %v", M, lossSum, wantLoss)
				}
				// Rows sum to the batch gradient.
				for k := 0; k < P; k++ {
					var s64 float64
					for i := 0; i < M; i++ {
						s64 += float64(grads[i*P+k])
					}
					if !closeTo(float64(batch[k]), s64, 1e-3, 1e-4) {
						t.Fatalf("M=%d: param %d: BatchGrad %v, sum of per-example %v", M, k, batch[k], s64)
					}
				}
				// Each row equals the batch-of-one gradient (checked on a
				// spread of rows, including both sides of chunk boundaries).
				one := make([]float32, P)
				for _, i := range []int{0, 1, small - 1, small, big - 1, big, 2 * big, M - 2, M - 1} {
					if i < 0 || i >= M {
						continue
					}
					e := example(b, i, d)
					l1, err := m.BatchGrad(e, one)
					if err != nil {
						t.Fatal(err)
					}
					if !closeTo(l1, float64(losses[i]), 1e-5, 1e-6) {
						t.Errorf("M=%d example %d: loss %v, batch-of-one loss %v", M, i, losses[i], l1)
					}
					if rl := refLoss(s, theta, f64(e.X), labelOf(e), targetOf(e)); !closeTo(l1, rl, 1e-4, 1e-5) {
						t.Errorf("M=%d example %d: loss %v, reference %v", M, i, l1, rl)
					}
					for k := 0; k < P; k++ {
						if g, w := grads[i*P+k], one[k]; !closeTo(float64(g), float64(w), 1e-4, 1e-6) {
							t.Fatalf("M=%d example %d param %d: per-example %v, batch-of-one %v", M, i, k, g, w)
						}
					}
				}
			}
		})
	}
}

func labelOf(b Batch) int {
	if b.Labels == nil {
		return 0
	}
	return b.Labels[0]
}

func targetOf(b Batch) float64 {
	if b.Targets == nil {
		return 0
	}
	return float64(b.Targets[0])
}

// TestGradFiniteDifferences compares per-example gradients with central
// differences of the float64 reference loss on small models.
func TestGradFiniteDifferences(t *testing.T) {
	for _, s := range testSpecs {
		if len(s.InputShape) == 3 && s.InputShape[1] > 16 && testing.Short() {
			continue
		}
		t.Run(specName(s), func(t *testing.T) {
			m := perturbed(t, s, 8)
			P := m.NumParams()
			rng := rand.New(rand.NewPCG(9, 9))
			const M = 3
			b := randomBatch(s, M, rng)
			d := len(b.X) / M
			grads := make([]float32, M*P)
			losses := make([]float32, M)
			if err := m.PerExampleGrads(b, grads, losses); err != nil {
				t.Fatal(err)
			}
			theta := f64(m.Params())
			coords := rng.Perm(P)[:min(P, 40)]
			if s.Network != nil && P <= 1000 {
				coords = rng.Perm(P) // small networks of every layer kind: all coordinates
			}
			// Include the last parameters (the output layer's biases).
			coords = append(coords, P-1)
			const h = 1e-5
			for i := 0; i < M; i++ {
				e := example(b, i, d)
				x := f64(e.X)
				var bad int
				for _, k := range coords {
					old := theta[k]
					theta[k] = old + h
					lp := refLoss(s, theta, x, labelOf(e), targetOf(e))
					theta[k] = old - h
					lm := refLoss(s, theta, x, labelOf(e), targetOf(e))
					theta[k] = old
					fd := (lp - lm) / (2 * h)
					if g := float64(grads[i*P+k]); !closeTo(g, fd, 2e-3, 2e-4) {
						bad++
						t.Errorf("example %d param %d: gradient %v, central difference %v", i, k, g, fd)
					}
				}
				if bad > 0 {
					t.Fatalf("example %d: %d of %d coordinates disagree", i, bad, len(coords))
				}
			}
		})
	}
}

func TestMakePlan(t *testing.T) {
	m, err := New(Spec{Arch: "tfp-cnn", InputShape: []int{1, 28, 28}, Classes: 10}, 1)
	if err != nil {
		t.Fatal(err)
	}
	n := m.(*net)
	big, small := n.sizes[0], n.sizes[1]
	for M := 0; M <= 5*big; M++ {
		plan := n.makePlan(M)
		next := 0
		var load [numWorkers]int
		for _, c := range plan {
			size := big
			if c.small {
				size = small
			}
			if c.start != next || c.cnt < 1 || c.cnt > size {
				t.Fatalf("M=%d: bad chunk %+v after row %d", M, c, next)
			}
			next += c.cnt
			load[c.worker] += size
		}
		if next != M {
			t.Fatalf("M=%d: plan covers %d rows", M, next)
		}
		if d := load[0] - load[1]; d > big || d < -big {
			t.Errorf("M=%d: unbalanced padded rows %v", M, load)
		}
		// Padding wastes less than one large chunk.
		if load[0]+load[1]-M >= big {
			t.Errorf("M=%d: %d padded rows for %d", M, load[0]+load[1], M)
		}
	}
}

// TestArchsAreKnown checks that every listed name builds and that an
// unlisted one does not.
func TestArchsAreKnown(t *testing.T) {
	for _, a := range Archs() {
		if _, _, _, err := archLayers(Spec{Arch: a, InputShape: []int{1, 28, 28}, Classes: 10}); err != nil {
			t.Errorf("%s: %v", a, err)
		}
	}
	if _, _, _, err := archLayers(Spec{Arch: "resnet", InputShape: []int{1, 28, 28}, Classes: 10}); err == nil {
		t.Error("unknown architecture accepted")
	}
}

// TestPerExampleGradsNorms checks that the fused norms are exactly
// vec.SumSquares of the rows and the rows exactly those of PerExampleGrads.
func TestPerExampleGradsNorms(t *testing.T) {
	for _, s := range []Spec{
		{Arch: "tfp-cnn", InputShape: []int{1, 28, 28}, Classes: 10},
		{Arch: "linreg", InputShape: []int{7}, Classes: 1, L2: 0.3},
	} {
		mod, err := New(s, 3)
		if err != nil {
			t.Fatal(err)
		}
		const m = 37
		b := randomBatch(s, m, rand.New(rand.NewPCG(4, 4)))
		P := mod.NumParams()
		g1, g2 := make([]float32, m*P), make([]float32, m*P)
		l1, l2 := make([]float32, m), make([]float32, m)
		sq := make([]float64, m)
		if err := mod.PerExampleGrads(b, g1, l1); err != nil {
			t.Fatal(err)
		}
		if err := mod.(PerExampleNormer).PerExampleGradsNorms(b, g2, l2, sq); err != nil {
			t.Fatal(err)
		}
		for i := range g1 {
			if g1[i] != g2[i] {
				t.Fatalf("%s: gradient %d differs: %v vs %v", s.Arch, i, g1[i], g2[i])
			}
		}
		for i := 0; i < m; i++ {
			if want := vec.SumSquares(g2[i*P : (i+1)*P]); sq[i] != want || !(want > 0) {
				t.Errorf("%s: row %d: sq %v, want %v (> 0)", s.Arch, i, sq[i], want)
			}
		}
		if err := mod.(PerExampleNormer).PerExampleGradsNorms(b, g2, l2, sq[:m-1]); err == nil {
			t.Errorf("%s: short sq accepted", s.Arch)
		}
	}
}

// TestPerExampleVisit checks the chunked pass against PerExampleGradsNorms:
// every row, its sum of squares and every loss bit for bit, each row
// visited once, in its chunk (ExampleChunks) and in row order within the
// chunk; an error from visit is returned and a bad batch refused.
func TestPerExampleVisit(t *testing.T) {
	for _, s := range []Spec{
		{Arch: "tfp-cnn", InputShape: []int{1, 28, 28}, Classes: 10},
		{Arch: "linreg", InputShape: []int{7}, Classes: 1, L2: 0.3},
		{Arch: "logreg", InputShape: []int{5}, Classes: 3},
	} {
		mod, err := New(s, 3)
		if err != nil {
			t.Fatal(err)
		}
		v := mod.(ChunkVisitor)
		P := mod.NumParams()
		for _, m := range []int{1, 17, 70, 130, 270} {
			b := randomBatch(s, m, rand.New(rand.NewPCG(4, uint64(m))))
			want, wantL, wantSq := make([]float32, m*P), make([]float32, m), make([]float64, m)
			if err := mod.(PerExampleNormer).PerExampleGradsNorms(b, want, wantL, wantSq); err != nil {
				t.Fatal(err)
			}
			starts := v.ExampleChunks(m, nil)
			if starts[0] != 0 || starts[len(starts)-1] != m {
				t.Fatalf("%s m=%d: chunks %v", s.Arch, m, starts)
			}
			got, gotL := make([]float32, m*P), make([]float32, m)
			gotSq := make([]float64, m)
			next := append([]int(nil), starts[:len(starts)-1]...) // next row per chunk
			var mu sync.Mutex
			err := v.PerExampleVisit(b, gotL, func(k, i int, row []float32, sq float64) error {
				mu.Lock()
				defer mu.Unlock()
				if k < 0 || k >= len(next) || i != next[k] || i >= starts[k+1] {
					t.Errorf("%s m=%d: row %d visited in chunk %d (chunks %v, next %v)", s.Arch, m, i, k, starts, next)
					return nil
				}
				next[k]++
				copy(got[i*P:(i+1)*P], row)
				gotSq[i] = sq
				for j := range row { // visit may change the row
					row[j] = float32(math.NaN())
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			for k := range next {
				if next[k] != starts[k+1] {
					t.Errorf("%s m=%d: chunk %d visited up to row %d, ends at %d", s.Arch, m, k, next[k], starts[k+1])
				}
			}
			for j := range want {
				if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
					t.Fatalf("%s m=%d: gradient value %d = %v, PerExampleGradsNorms %v", s.Arch, m, j, got[j], want[j])
				}
			}
			for i := 0; i < m; i++ {
				if gotSq[i] != wantSq[i] || gotL[i] != wantL[i] {
					t.Fatalf("%s m=%d row %d: sq %v loss %v, want %v %v", s.Arch, m, i, gotSq[i], gotL[i], wantSq[i], wantL[i])
				}
			}
		}
		// An error from visit ends the pass and is returned.
		b := randomBatch(s, 40, rand.New(rand.NewPCG(5, 5)))
		stop := errors.New("stop")
		if err := v.PerExampleVisit(b, make([]float32, 40), func(k, i int, row []float32, sq float64) error {
			if i == 20 {
				return stop
			}
			return nil
		}); !errors.Is(err, stop) {
			t.Errorf("%s: visit's error: got %v", s.Arch, err)
		}
		if err := v.PerExampleVisit(b, make([]float32, 39), func(int, int, []float32, float64) error { return nil }); err == nil {
			t.Errorf("%s: short losses accepted", s.Arch)
		}
	}
}

// TestChunkSizesDoNotChangeRows checks that per-example gradients and
// losses do not depend on the chunk sizes (only sums over a chunk do):
// the rows that rules other than the plain sum receive are the same bits
// whatever chunkSizes chooses. It also pins chunkSizes.
func TestChunkSizesDoNotChangeRows(t *testing.T) {
	for _, c := range []struct {
		s    Spec
		want [2]int
	}{
		{Spec{Arch: "tfp-cnn", InputShape: []int{1, 28, 28}, Classes: 10}, [2]int{64, 16}},
		{Spec{Arch: "tfp-cnn", InputShape: []int{3, 32, 32}, Classes: 10}, [2]int{64, 16}},
		{Spec{Arch: "pdp-cnn-svhn", InputShape: []int{3, 32, 32}, Classes: 10}, [2]int{64, 16}},
		{Spec{Arch: "logreg", InputShape: []int{784}, Classes: 10}, [2]int{256, 32}},
	} {
		ref, err := newNet(c.s, 3)
		if err != nil {
			t.Fatal(err)
		}
		if ref.sizes != c.want {
			t.Errorf("%s %v: chunk sizes %v, want %v", c.s.Arch, c.s.InputShape, ref.sizes, c.want)
		}
		if testing.Short() && c.s.InputShape[0] == 3 {
			continue
		}
		P := ref.NumParams()
		for _, sizes := range [][2]int{{128, 16}, {16, 16}, {128, 32}} {
			alt, err := newNetChunks(c.s, 3, sizes)
			if err != nil {
				t.Fatal(err)
			}
			for _, M := range []int{17, 250, 270} {
				b := randomBatch(c.s, M, rand.New(rand.NewPCG(9, uint64(M))))
				g1, g2 := make([]float32, M*P), make([]float32, M*P)
				l1, l2 := make([]float32, M), make([]float32, M)
				if err := ref.PerExampleGrads(b, g1, l1); err != nil {
					t.Fatal(err)
				}
				if err := alt.PerExampleGrads(b, g2, l2); err != nil {
					t.Fatal(err)
				}
				for i := range g1 {
					if math.Float32bits(g1[i]) != math.Float32bits(g2[i]) {
						t.Fatalf("%s %v, chunks %v vs %v, M=%d: value %d: %v vs %v", c.s.Arch, c.s.InputShape, ref.sizes, sizes, M, i, g1[i], g2[i])
					}
				}
				for i := range l1 {
					if l1[i] != l2[i] {
						t.Fatalf("%s, chunks %v, M=%d: loss %d: %v vs %v", c.s.Arch, sizes, M, i, l1[i], l2[i])
					}
				}
			}
		}
	}
}
