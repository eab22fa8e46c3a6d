package optim

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/privtrain/privtrain/aggregate"
	"github.com/privtrain/privtrain/internal/vec"
	"github.com/privtrain/privtrain/model"
)

// matrixVisitor is a model.ChunkVisitor over a fixed gradient matrix: it
// hands out the rows of g (m × p) by the chunks starts, the chunks dealt
// round-robin to `workers` goroutines, each taking its chunks last first,
// every row copied into a scratch buffer first (visit may change it).
type matrixVisitor struct {
	g       []float32
	p       int
	starts  []int
	workers int
	calls   int // passes run
}

func (v *matrixVisitor) ExampleChunks(m int, dst []int) []int { return append(dst[:0], v.starts...) }

func (v *matrixVisitor) PerExampleVisit(b model.Batch, losses []float32, visit func(k, i int, row []float32, sq float64) error) error {
	v.calls++
	nk := len(v.starts) - 1
	errs := make([]error, v.workers)
	var wg sync.WaitGroup
	for w := 0; w < v.workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			row := make([]float32, v.p)
			for k := nk - 1; k >= 0; k-- {
				if k%v.workers != w {
					continue
				}
				for i := v.starts[k]; i < v.starts[k+1]; i++ {
					copy(row, v.g[i*v.p:(i+1)*v.p])
					losses[i] = float32(i)
					if err := visit(k, i, row, rowSq(row)); err != nil {
						errs[w] = err
						return
					}
				}
			}
		}(w)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// rowSq is a row's sum of squares as the models compute it.
func rowSq(row []float32) float64 { return vec.SumSquares(row) }

// chunkTrainer is a trainer with just what clipSumChunks reads.
func chunkTrainer(a aggregate.Aggregator, r float64, p, m int) *Trainer {
	return &Trainer{cfg: Config{Aggregator: a, ClipNorm: r}, p: p, out: make([]float32, p), losses: make([]float32, m)}
}

// TestClipSumChunks runs the chunked DP sum on the MNIST CNN's per-example
// gradients and checks the released vector against (1) a plain float32
// implementation of the order — clipRows' clipped rows, each chunk summed
// in row order, the chunk sums in chunk order, then the rule's noise
// stream — bit for bit, with the model's own pass and with 1, 2 and 3
// goroutines handing out the chunks in other orders; and (2) without
// noise, an independent float64 recomputation of Σ_i min(1, R/‖g_i‖)·g_i
// within the bound of the clip margin and float32 summation.
func TestClipSumChunks(t *testing.T) {
	mod, err := model.New(model.Spec{Arch: "tfp-cnn", InputShape: []int{1, 28, 28}, Classes: 10}, 7)
	if err != nil {
		t.Fatal(err)
	}
	data := mnistSlice(t, 150)
	const m, sigma = 150, 0.9
	p := mod.NumParams()
	b := model.Batch{X: data.X[:m*data.Dim()], Labels: data.Labels[:m], M: m}
	g := make([]float32, m*p)
	sq := make([]float64, m)
	if err := mod.(model.PerExampleNormer).PerExampleGradsNorms(b, g, make([]float32, m), sq); err != nil {
		t.Fatal(err)
	}
	// R: the median norm, so that half the rows are clipped.
	ns := make([]float64, m)
	for i := range ns {
		ns[i] = math.Sqrt(sq[i])
	}
	slices.Sort(ns)
	r := ns[m/2]
	starts := mod.(model.ChunkVisitor).ExampleChunks(m, nil)
	if len(starts) < 4 {
		t.Fatalf("chunks %v: want several", starts)
	}
	clipped := append([]float32(nil), g...)
	if err := clipRows(clipped, m, p, r, sq, make([]float64, m), 1); err != nil {
		t.Fatal(err)
	}
	unclipped := 0
	for i := 0; i < m; i++ {
		if math.Sqrt(sq[i]) <= r {
			unclipped++
		}
	}
	if unclipped == 0 || unclipped == m {
		t.Fatalf("%d of %d rows below R: want both kinds", unclipped, m)
	}
	ref := func(noise *rand.Rand, std float64) []float32 {
		out := make([]float32, p)
		for k := 0; k+1 < len(starts); k++ {
			acc := make([]float32, p)
			copy(acc, clipped[starts[k]*p:(starts[k]+1)*p])
			for i := starts[k] + 1; i < starts[k+1]; i++ {
				for j := range acc {
					acc[j] += clipped[i*p+j]
				}
			}
			for j := range out {
				if k == 0 {
					out[j] = acc[j]
				} else {
					out[j] += acc[j]
				}
			}
		}
		if std > 0 {
			for j := range out {
				out[j] += float32(std * noise.NormFloat64())
			}
		}
		return out
	}
	want := ref(rand.New(rand.NewPCG(3, 4)), sigma*r)
	a, err := aggregate.New("sum", aggregate.Config{Sigma: sigma, ClipNorm: r, FloatNoise: true})
	if err != nil {
		t.Fatal(err)
	}
	visitors := []model.ChunkVisitor{mod.(model.ChunkVisitor)}
	for w := 1; w <= 3; w++ {
		visitors = append(visitors, &matrixVisitor{g: g, p: p, starts: starts, workers: w})
	}
	for vi, v := range visitors {
		tr := chunkTrainer(a, r, p, m)
		var res StepResult
		if _, err := tr.clipSumChunks(b, a.(aggregate.ChunkSummer), v, rand.New(rand.NewPCG(3, 4)), &res); err != nil {
			t.Fatal(err)
		}
		for j := range want {
			if math.Float32bits(tr.out[j]) != math.Float32bits(want[j]) {
				t.Fatalf("visitor %d: out[%d] = %v, the plain chunk order gives %v", vi, j, tr.out[j], want[j])
			}
		}
		for i, n := range tr.chunks.Norms() {
			if n > r {
				t.Fatalf("visitor %d: row %d measured norm %v > R", vi, i, n)
			}
		}
	}

	// Without noise, against float64: each clipped value is
	// fl32(s_i·g_ij) with s_i = fl32(R(1−κ)/n̂_i) (or 1), so it is within
	// (κ + 3u)·|c_i·g_ij| of c_i·g_ij (c_i = min(1, R/‖g_i‖), κ =
	// clipMargin, u = 2⁻²⁴; n̂_i's own error is below u), and the float32
	// sum adds at most γ_m·Σ|·| (Higham, §4.2).
	exact, err := aggregate.New("sum", aggregate.Config{ClipNorm: r})
	if err != nil {
		t.Fatal(err)
	}
	tr := chunkTrainer(exact, r, p, m)
	var res StepResult
	if _, err := tr.clipSumChunks(b, exact.(aggregate.ChunkSummer), mod.(model.ChunkVisitor), nil, &res); err != nil {
		t.Fatal(err)
	}
	noNoise := ref(nil, 0)
	const u = 0x1p-24
	gamma := float64(m) * u / (1 - float64(m)*u)
	c := make([]float64, m)
	for i := range c {
		var ss float64
		for _, v := range g[i*p : (i+1)*p] {
			ss += float64(v) * float64(v)
		}
		c[i] = min(1, r/math.Sqrt(ss))
	}
	worst := 0.0
	for j := 0; j < p; j++ {
		if tr.out[j] != noNoise[j] {
			t.Fatalf("σ = 0: out[%d] = %v, plain chunk order %v", j, tr.out[j], noNoise[j])
		}
		var sum, abs float64
		for i := 0; i < m; i++ {
			x := c[i] * float64(g[i*p+j])
			sum += x
			abs += math.Abs(x)
		}
		tol := (clipMargin+3*u+gamma)*abs*(1+1e-6) + 1e-30
		d := math.Abs(float64(tr.out[j]) - sum)
		if d > tol {
			t.Fatalf("out[%d] = %v, float64 Σ clip(g_i) = %v: |diff| %g > %g", j, tr.out[j], sum, d, tol)
		}
		if abs > 0 {
			worst = max(worst, d/abs)
		}
	}
	t.Logf("largest |out − Σ clip(g_i)| / Σ|clip(g_i)| = %.3g (bound %.3g)", worst, clipMargin+3*u+gamma)
	if res.Loss == 0 {
		t.Error("no loss recorded")
	}
}

// TestClipSumChunksExactBound runs the adversarial rows of
// TestClipExactBound through the chunked path, one row per batch: the row
// the rule sums has exact norm ≤ R (big.Float) and equals clipRows' row
// bit for bit, including rows the one-pass factor leaves above R (their
// scaled values subnormal), which must go through the in-place fallback.
func TestClipSumChunksExactBound(t *testing.T) {
	fallbacks := 0
	for k, c := range exactBoundCases() {
		p := len(c.row)
		a, err := aggregate.New("sum", aggregate.Config{Sigma: 1, ClipNorm: c.r, FloatNoise: true})
		if err != nil {
			t.Fatal(err)
		}
		v := &matrixVisitor{g: c.row, p: p, starts: []int{0, 1}, workers: 1}
		tr := chunkTrainer(a, c.r, p, 1)
		var res StepResult
		if _, err := tr.clipSumChunks(model.Batch{M: 1}, a.(aggregate.ChunkSummer), v, rand.New(rand.NewPCG(1, 1)), &res); err != nil {
			t.Fatalf("case %d (%s): %v", k, c.name, err)
		}
		if v.calls == 2 {
			fallbacks++
		}
		summed := make([]float32, p) // one row: the sum is the row itself
		if err := tr.chunks.Sum(summed); err != nil {
			t.Fatal(err)
		}
		if exceedsExactly(summed, c.r) {
			t.Errorf("case %d (%s, p=%d, R=%v): summed row has exact norm > R", k, c.name, p, c.r)
		}
		want := append([]float32(nil), c.row...)
		if err := clipRows(want, 1, p, c.r, nil, make([]float64, 1), 1); err != nil {
			t.Fatal(err)
		}
		for j := range want {
			if math.Float32bits(summed[j]) != math.Float32bits(want[j]) {
				t.Fatalf("case %d (%s): summed value %d = %v, clipRows %v", k, c.name, j, summed[j], want[j])
			}
		}
	}
	if fallbacks == 0 {
		t.Error("no row needed the in-place fallback: the subnormal cases do not exercise it")
	}
	t.Logf("%d rows went through the in-place fallback", fallbacks)
}

// TestClipSumChunksNotFinite: NaN rows in two chunks; the error names the
// lowest, whatever the number of goroutines, and nothing is released.
func TestClipSumChunksNotFinite(t *testing.T) {
	const m, p = 40, 8
	g := make([]float32, m*p)
	for i := range g {
		g[i] = 0.1
	}
	g[33*p+2] = float32(math.Inf(1))
	g[12*p+5] = float32(math.NaN())
	g[13*p] = float32(math.NaN())
	a, err := aggregate.New("sum", aggregate.Config{Sigma: 1, ClipNorm: 1, FloatNoise: true})
	if err != nil {
		t.Fatal(err)
	}
	for w := 1; w <= 3; w++ {
		v := &matrixVisitor{g: g, p: p, starts: []int{0, 10, 20, 30, 40}, workers: w}
		tr := chunkTrainer(a, 1, p, m)
		rng := rand.New(rand.NewPCG(1, 1))
		var res StepResult
		_, err := tr.clipSumChunks(model.Batch{M: m}, a.(aggregate.ChunkSummer), v, rng, &res)
		if err == nil || !strings.Contains(err.Error(), "batch row 12 ") {
			t.Errorf("workers %d: got %v, want the error naming row 12", w, err)
		}
		if rng.Uint64() != rand.New(rand.NewPCG(1, 1)).Uint64() {
			t.Errorf("workers %d: noise drawn for a batch with a NaN row", w)
		}
	}
}

// TestClipSumChunksSecure: with the secure release the chunked path takes
// the exact integer sum on the grid inside the per-example pass, and its
// release equals, bit for bit, the secure matrix path's (Aggregate on
// clipRows' clipped matrix) from the same stream — with the model's own
// pass and with 1, 2 and 3 goroutines handing out the chunks.
func TestClipSumChunksSecure(t *testing.T) {
	mod, err := model.New(model.Spec{Arch: "tfp-cnn", InputShape: []int{1, 28, 28}, Classes: 10}, 7)
	if err != nil {
		t.Fatal(err)
	}
	data := mnistSlice(t, 100)
	const m, sigma = 100, 1.1
	p := mod.NumParams()
	b := model.Batch{X: data.X[:m*data.Dim()], Labels: data.Labels[:m], M: m}
	g := make([]float32, m*p)
	sq := make([]float64, m)
	if err := mod.(model.PerExampleNormer).PerExampleGradsNorms(b, g, make([]float32, m), sq); err != nil {
		t.Fatal(err)
	}
	ns := make([]float64, m)
	for i := range ns {
		ns[i] = math.Sqrt(sq[i])
	}
	slices.Sort(ns)
	r := ns[m/2]
	starts := mod.(model.ChunkVisitor).ExampleChunks(m, nil)
	clipped := append([]float32(nil), g...)
	if err := clipRows(clipped, m, p, r, sq, make([]float64, m), 1); err != nil {
		t.Fatal(err)
	}
	norms := make([]float64, m)
	for i := range norms {
		var ss float64
		for _, v := range clipped[i*p : (i+1)*p] {
			ss += float64(v) * float64(v)
		}
		norms[i] = math.Sqrt(ss)
	}
	cfg := aggregate.Config{Sigma: sigma, ClipNorm: r}
	ref, err := aggregate.New("sum", cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]float32, p)
	if _, err := ref.Aggregate(aggregate.Grads{G: clipped, Norms: norms, M: m, P: p, ClipNorm: r}, rand.New(rand.NewPCG(3, 4)), want); err != nil {
		t.Fatal(err)
	}
	a, err := aggregate.New("sum", cfg)
	if err != nil {
		t.Fatal(err)
	}
	visitors := []model.ChunkVisitor{mod.(model.ChunkVisitor)}
	for w := 1; w <= 3; w++ {
		visitors = append(visitors, &matrixVisitor{g: g, p: p, starts: starts, workers: w})
	}
	for vi, v := range visitors {
		tr := chunkTrainer(a, r, p, m)
		var res StepResult
		rep, err := tr.clipSumChunks(b, a.(aggregate.ChunkSummer), v, rand.New(rand.NewPCG(3, 4)), &res)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Mechanism == nil {
			t.Fatal("no mechanism")
		}
		for j := range want {
			if math.Float32bits(tr.out[j]) != math.Float32bits(want[j]) {
				t.Fatalf("visitor %d: out[%d] = %v, secure matrix path %v", vi, j, tr.out[j], want[j])
			}
		}
	}
}
