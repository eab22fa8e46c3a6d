package aggregate

import (
	"errors"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/privtrain/privtrain/privacy"
)

// chunkRows builds m rows of p values whose magnitudes span 12 decades (so
// that any change of the summation order changes bits) and clip factors:
// 1 for every third row, else a random factor in (0, 1).
func chunkRows(rng *rand.Rand, m, p int) ([]float32, []float32) {
	g := make([]float32, m*p)
	for i := range g {
		g[i] = float32(rng.NormFloat64() * math.Pow(10, 12*rng.Float64()-6))
	}
	s := make([]float32, m)
	for i := range s {
		s[i] = 1
		if i%3 != 0 {
			s[i] = float32(rng.Float64())
		}
	}
	return g, s
}

// refChunkSum is the chunk order written out plainly in float32: each
// chunk's first scaled row, then its further rows added in row order; then
// the chunk sums added in chunk order.
func refChunkSum(g, s []float32, p int, starts []int) []float32 {
	out := make([]float32, p)
	for k := 0; k+1 < len(starts); k++ {
		acc := make([]float32, p)
		for i := starts[k]; i < starts[k+1]; i++ {
			for j := 0; j < p; j++ {
				v := s[i] * g[i*p+j]
				if i == starts[k] {
					acc[j] = v
				} else {
					acc[j] += v
				}
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
	return out
}

// fillChunks adds every row of g to c, the chunks dealt round-robin to
// `workers` goroutines, each taking its chunks last first (so chunks finish
// in a different order for every worker count).
func fillChunks(t *testing.T, c *ChunkSum, g, s []float32, p int, starts []int, workers int) {
	t.Helper()
	nk := len(starts) - 1
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for k := nk - 1; k >= 0; k-- {
				if k%workers != w {
					continue
				}
				for i := starts[k]; i < starts[k+1]; i++ {
					if _, err := c.Add(k, i, g[i*p:(i+1)*p], s[i]); err != nil {
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
			t.Fatal(err)
		}
	}
}

// TestChunkSum checks the chunked sum against (1) the chunk order written
// out plainly in float32, bit for bit, for 1, 2 and 3 goroutines adding the
// chunks in different orders, (2) the exact sum Σ s_i·g_i recomputed in
// float64, within the bound of recursive float32 summation, and (3) each
// added row's measured norm against a float64 recomputation.
func TestChunkSum(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	cases := []struct {
		p      int
		starts []int
	}{
		{3, []int{0, 1}},
		{17, []int{0, 5}},
		{33, []int{0, 64, 128, 192, 256, 270}},
		{1000, []int{0, 16, 32, 48, 49}},
		{26010, []int{0, 64, 128, 192, 250}},
		{4099, []int{0, 1, 2, 7, 30, 31}},
	}
	const u = 0x1p-24 // float32 unit roundoff
	for _, tc := range cases {
		p, starts := tc.p, tc.starts
		m := starts[len(starts)-1]
		g, s := chunkRows(rng, m, p)
		want := refChunkSum(g, s, p, starts)
		var first []float32
		for _, workers := range []int{1, 2, 3} {
			var c ChunkSum
			if err := c.Reset(p, starts); err != nil {
				t.Fatal(err)
			}
			fillChunks(t, &c, g, s, p, starts, workers)
			got := make([]float32, p)
			if err := c.Sum(got); err != nil {
				t.Fatal(err)
			}
			for j := range got {
				if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
					t.Fatalf("p=%d m=%d workers=%d: out[%d] = %v, the plain chunk order gives %v", p, m, workers, j, got[j], want[j])
				}
			}
			if first == nil {
				first = got
			}
			for i := 0; i < m; i++ {
				var ss float64
				for _, v := range g[i*p : (i+1)*p] {
					f := float64(s[i] * v)
					ss += f * f
				}
				if n := c.Norms()[i]; math.Abs(n-math.Sqrt(ss)) > 1e-12*math.Sqrt(ss) {
					t.Fatalf("p=%d row %d: measured norm %v, float64 %v", p, i, n, math.Sqrt(ss))
				}
			}
		}
		// Σ_i s_i·g_i exactly (float64 holds every product of two float32s
		// exactly; its own sum errs by ≤ m·2⁻⁵³ relative to Σ|·|). Each
		// value is one product rounding (u) and at most m−1 float32
		// additions on its path through the chunks, so |out − Σ| ≤
		// γ_{m+1}·Σ|s_i·g_i| with γ_n = nu/(1−nu) (Higham, Accuracy and
		// Stability of Numerical Algorithms, §4.2 and Lemma 3.1).
		gamma := float64(m+1) * u / (1 - float64(m+1)*u)
		worst := 0.0
		for j := 0; j < p; j++ {
			var sum, abs float64
			for i := 0; i < m; i++ {
				x := float64(s[i]) * float64(g[i*p+j])
				sum += x
				abs += math.Abs(x)
			}
			tol := gamma*abs + float64(m)*0x1p-53*abs
			if d := math.Abs(float64(first[j]) - sum); d > tol {
				t.Fatalf("p=%d m=%d: out[%d] = %v, float64 Σ = %v: |diff| %g > %g", p, m, j, first[j], sum, d, tol)
			} else if abs > 0 {
				worst = max(worst, d/(gamma*abs))
			}
		}
		t.Logf("p=%d m=%d chunks=%d: largest error %.3g of the γ_{m+1}·Σ|x| bound", p, m, len(starts)-1, worst)
	}
}

// TestChunkSumOrderMatters makes sure the rows of TestChunkSum do detect a
// change of order: the row-order sum differs from the chunk order.
func TestChunkSumOrderMatters(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 33))
	p, starts := 1000, []int{0, 16, 32, 48, 49}
	g, s := chunkRows(rng, 49, p)
	a, b := refChunkSum(g, s, p, starts), refChunkSum(g, s, p, []int{0, 49})
	diff := 0
	for j := range a {
		if a[j] != b[j] {
			diff++
		}
	}
	if diff == 0 {
		t.Fatal("chunk order and row order agree on every value: the rows cannot tell orders apart")
	}
	t.Logf("%d of %d values differ between the chunk order and the row order", diff, p)
}

func TestChunkSumErrors(t *testing.T) {
	var c ChunkSum
	for _, starts := range [][]int{nil, {1, 3}, {0, 2, 2}, {0, 3, 1}} {
		if err := c.Reset(4, starts); err == nil {
			t.Errorf("starts %v accepted", starts)
		}
	}
	if err := c.Reset(0, []int{0, 1}); err == nil {
		t.Error("rows of 0 values accepted")
	}
	if err := c.Reset(2, []int{0, 2, 3}); err != nil {
		t.Fatal(err)
	}
	row := []float32{1, 2}
	out := make([]float32, 2)
	if err := c.Sum(out); err == nil {
		t.Error("sum of an incomplete batch accepted")
	}
	for _, bad := range []struct{ k, i int }{{0, 1}, {1, 0}, {2, 3}, {-1, 0}, {1, 3}} {
		if _, err := c.Add(bad.k, bad.i, row, 1); err == nil {
			t.Errorf("row %d added to chunk %d", bad.i, bad.k)
		}
	}
	if _, err := c.Add(0, 0, row[:1], 1); err == nil {
		t.Error("short row accepted")
	}
	for _, a := range []struct{ k, i int }{{1, 2}, {0, 0}, {0, 1}} {
		if _, err := c.Add(a.k, a.i, row, 1); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Add(0, 2, row, 1); err == nil {
		t.Error("a chunk took a row beyond its end")
	}
	if err := c.Sum(out[:1]); err == nil {
		t.Error("short output accepted")
	}
	if err := c.Sum(out); err != nil || out[0] != 3 || out[1] != 6 {
		t.Errorf("sum %v, %v; want [3 6]", out, err)
	}
	// An empty batch sums to zeros.
	if err := c.Reset(2, []int{0}); err != nil {
		t.Fatal(err)
	}
	out[0] = 7
	if err := c.Sum(out); err != nil || out[0] != 0 || out[1] != 0 {
		t.Errorf("empty batch: %v, %v", out, err)
	}
}

// TestSumAggregateChunks checks the rule's side: the release is the chunk
// sum plus the noise stream of Aggregate (same generator, same order of
// draws); a row above R is refused with ErrNotClipped before any draw; a
// NaN row and an incomplete batch are refused; and no rule other than sum
// offers the path (TestSecureAggregateChunks covers the secure release).
func TestSumAggregateChunks(t *testing.T) {
	const p, r, sigma = 300, 1.0, 0.8
	rng := rand.New(rand.NewPCG(41, 42))
	starts := []int{0, 4, 9}
	g, s := chunkRows(rng, 9, p)
	for i := 0; i < 9; i++ { // scale every row to norm ≤ R/2
		var ss float64
		for _, v := range g[i*p : (i+1)*p] {
			ss += float64(v) * float64(v)
		}
		s[i] = float32(0.5 * r / math.Sqrt(ss))
	}
	a, err := New("sum", Config{Sigma: sigma, ClipNorm: r, FloatNoise: true})
	if err != nil {
		t.Fatal(err)
	}
	cs, ok := a.(ChunkSummer)
	if !ok || !cs.SumsChunks() {
		t.Fatal("sum does not offer the chunk path")
	}
	var c ChunkSum
	if err := cs.ResetChunks(&c, p, starts); err != nil {
		t.Fatal(err)
	}
	fillChunks(t, &c, g, s, p, starts, 2)
	got := make([]float32, p)
	rep, err := cs.AggregateChunks(&c, r, rand.New(rand.NewPCG(7, 8)), got)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Mechanism == nil {
		t.Error("no mechanism reported")
	}
	want := refChunkSum(g, s, p, starts)
	noise := rand.New(rand.NewPCG(7, 8))
	for j := range want {
		want[j] += float32(sigma * r * noise.NormFloat64())
		if got[j] != want[j] {
			t.Fatalf("out[%d] = %v, chunk sum + noise = %v", j, got[j], want[j])
		}
	}

	// Row 5 added unscaled (norm far above R): refused before any draw.
	s2 := append([]float32(nil), s...)
	s2[5] = 1
	c.Reset(p, starts)
	fillChunks(t, &c, g, s2, p, starts, 1)
	gen := rand.New(rand.NewPCG(7, 8))
	_, err = cs.AggregateChunks(&c, r, gen, got)
	if !errors.Is(err, ErrNotClipped) {
		t.Fatalf("row above R: got %v, want ErrNotClipped", err)
	}
	if gen.Uint64() != rand.New(rand.NewPCG(7, 8)).Uint64() {
		t.Error("noise was drawn before the rows were certified")
	}
	// A NaN row.
	g2 := append([]float32(nil), g...)
	g2[3*p+7] = float32(math.NaN())
	c.Reset(p, starts)
	fillChunks(t, &c, g2, s, p, starts, 1)
	if _, err := cs.AggregateChunks(&c, r, rand.New(rand.NewPCG(7, 8)), got); err == nil || errors.Is(err, ErrNotClipped) {
		t.Errorf("NaN row: got %v", err)
	}
	// Incomplete: the last chunk lacks a row.
	c.Reset(p, starts)
	for i := 0; i < 8; i++ {
		k := 0
		if i >= 4 {
			k = 1
		}
		if _, err := c.Add(k, i, g[i*p:(i+1)*p], s[i]); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cs.AggregateChunks(&c, r, rand.New(rand.NewPCG(7, 8)), got); err == nil {
		t.Error("incomplete batch released")
	}

	built := 0
	for _, name := range Names() {
		if name == "sum" {
			continue
		}
		var a Aggregator
		var err error
		for _, cfg := range []Config{
			{Sigma: 1.1, ClipNorm: 1, Tau: 0.5, B: 1, Delta0: 1e-8, F: 2, FloatNoise: true},
			{Sigma: 1, ClipNorm: 1, F: 1, FloatNoise: true},
			{ClipNorm: 1, F: 1},
			{F: 1},
			{},
		} {
			if a, err = New(name, cfg); err == nil {
				break
			}
		}
		if err != nil {
			t.Logf("%s: not built (%v)", name, err)
			continue
		}
		built++
		if c, ok := a.(ChunkSummer); ok && c.SumsChunks() {
			t.Errorf("rule %s takes chunk sums: its release is not the plain sum", name)
		}
	}
	if built < 3 {
		t.Errorf("only %d other rules built", built)
	}
}

// TestSecureAggregateChunks: the secure sum's integer sum taken chunk by
// chunk (grid mode) releases bit for bit what the matrix path (Aggregate
// on the rows fl32(s_i·g_i)) releases from the same stream, for 1, 2 and 3
// goroutines; it keeps at most one accumulator per goroutine; an unclipped
// row is refused with ErrNotClipped before any draw; a row on the grid just
// above R' is shrunk by the careful path to within ⌊R'²⌋ (and reported
// with its norm above R, so the trainer clips it and retries).
func TestSecureAggregateChunks(t *testing.T) {
	const p, r, sigma = 5000, 1.0, 1.1
	rng := rand.New(rand.NewPCG(51, 52))
	starts := []int{0, 3, 7, 8, 12, 16}
	m := starts[len(starts)-1]
	g, s := chunkRows(rng, m, p)
	for i := 0; i < m; i++ { // scale every row to norm R·u, u ∈ (0.3, 1)
		var ss float64
		for _, v := range g[i*p : (i+1)*p] {
			ss += float64(v) * float64(v)
		}
		target := r * (0.3 + 0.7*rng.Float64())
		s[i] = float32(target / math.Sqrt(ss))
	}
	a, err := New("sum", Config{Sigma: sigma, ClipNorm: r})
	if err != nil {
		t.Fatal(err)
	}
	cs := a.(ChunkSummer)
	if !cs.SumsChunks() {
		t.Fatal("the secure sum does not take chunk sums")
	}
	// The matrix path on the scaled rows.
	scaled := make([]float32, m*p)
	norms := make([]float64, m)
	for i := 0; i < m; i++ {
		for j := 0; j < p; j++ {
			scaled[i*p+j] = s[i] * g[i*p+j]
		}
		norms[i] = rowNorm(scaled[i*p : (i+1)*p])
	}
	ref, err := New("sum", Config{Sigma: sigma, ClipNorm: r})
	if err != nil {
		t.Fatal(err)
	}
	want := make([]float32, p)
	if _, err := ref.Aggregate(Grads{G: scaled, Norms: norms, M: m, P: p, ClipNorm: r}, rand.New(rand.NewPCG(9, 10)), want); err != nil {
		t.Fatal(err)
	}
	for _, workers := range []int{1, 2, 3} {
		var c ChunkSum
		if err := cs.ResetChunks(&c, p, starts); err != nil {
			t.Fatal(err)
		}
		fillChunks(t, &c, g, s, p, starts, workers)
		if n := len(c.grid.slots); n > workers {
			t.Errorf("%d workers used %d accumulators", workers, n)
		}
		got := make([]float32, p)
		rep, err := cs.AggregateChunks(&c, r, rand.New(rand.NewPCG(9, 10)), got)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Mechanism != (privacy.Gaussian{Sigma: sigma}) {
			t.Errorf("mechanism %#v", rep.Mechanism)
		}
		for j := range want {
			if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
				t.Fatalf("workers=%d: out[%d] = %v, matrix path %v", workers, j, got[j], want[j])
			}
		}
		if err := c.Sum(got); err == nil {
			t.Error("a grid-mode chunk sum handed out a float sum")
		}
	}
	// An unscaled row: refused before any draw.
	s2 := append([]float32(nil), s...)
	s2[2] = 1
	var c ChunkSum
	if err := cs.ResetChunks(&c, p, starts); err != nil {
		t.Fatal(err)
	}
	fillChunks(t, &c, g, s2, p, starts, 2)
	gen := rand.New(rand.NewPCG(7, 8))
	if _, err := cs.AggregateChunks(&c, r, gen, make([]float32, p)); !errors.Is(err, ErrNotClipped) {
		t.Fatalf("unclipped row: got %v, want ErrNotClipped", err)
	}
	if gen.Uint64() != rand.New(rand.NewPCG(7, 8)).Uint64() {
		t.Error("noise was drawn before the rows were certified")
	}
	// A row of exact grid values (3·2¹², 4·2¹²)·γ·(1 + 2⁻¹¹): integer norm
	// 5·2¹²·(1 + 2⁻¹¹) > R' = 2¹⁴·… — truncation keeps it above ⌊R'²⌋ —
	// is shrunk within ⌊R'²⌋ and reported with its norm above R.
	sec := a.(*Sum).sec
	rp := math.Sqrt(float64(sec.rowMax))
	over := []float32{float32(0.6 * rp * (1 + 1.0/2048) * sec.gamma), float32(0.8 * rp * (1 + 1.0/2048) * sec.gamma)}
	var c1 ChunkSum
	if err := cs.ResetChunks(&c1, 2, []int{0, 1}); err != nil {
		t.Fatal(err)
	}
	n, err := c1.Add(0, 0, over, 1)
	if err != nil {
		t.Fatal(err)
	}
	tot := make([]int64, 2)
	c1.gridTotal(tot)
	if sq := uint64(tot[0]*tot[0] + tot[1]*tot[1]); sq > sec.rowMax || sq < sec.rowMax*99/100 || n <= r {
		t.Errorf("over-norm row: ‖n‖² = %d (bound %d), measured norm %v", sq, sec.rowMax, n)
	}
	if _, err := cs.AggregateChunks(&c1, r, rand.New(rand.NewPCG(7, 8)), make([]float32, 2)); !errors.Is(err, ErrNotClipped) {
		t.Errorf("over-norm row: got %v, want ErrNotClipped", err)
	}
	// A float chunk sum is refused by the secure rule.
	var f ChunkSum
	if err := f.Reset(p, starts); err != nil {
		t.Fatal(err)
	}
	fillChunks(t, &f, g, s, p, starts, 1)
	if _, err := cs.AggregateChunks(&f, r, rand.New(rand.NewPCG(7, 8)), make([]float32, p)); err == nil {
		t.Error("secure sum released a float chunk sum")
	}
}
