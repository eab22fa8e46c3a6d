package aggregate

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"sync"

	"github.com/privtrain/privtrain/internal/vec"
)

// chunkGrid is the grid mode of a ChunkSum (the secure release's integer
// sum taken inside the per-example pass): each added row becomes the
// integer vector n_i = trunc(fl32(s·g_i)/γ), its exact squared norm is
// checked against ⌊R'²⌋ as prepare does (a row above it is undone exactly
// and shrunk by the careful path), and n_i is added to an int64
// accumulator. Integer sums do not depend on the order of additions, so
// the accumulators are not tied to chunks: a chunk takes a free one at its
// first row and gives it back after its last, and the batch's sum is the
// sum of all accumulators. At most as many accumulators exist as chunks
// were in progress at once (about the number of workers), so the memory is
// a few rows, not the chunk count times P.
type chunkGrid struct {
	sec   *secureRelease
	k     float32   // 2^−exp
	lim   uint      // |n| < 2^lim keeps Σ n² exact in 64 bits
	slots [][]int64 // every accumulator (guarded by mu)
	free  []int     // indices of the free ones (guarded by mu)
	slot  []int     // per chunk: its accumulator's index, −1 when none
	cur   [][]int64 // per chunk: its accumulator, nil when none
	mu    sync.Mutex
}

// resetGrid puts c in grid mode for the secure release sec (after Reset).
func (c *ChunkSum) resetGrid(sec *secureRelease) {
	g := c.grid
	if g == nil || g.sec != sec {
		g = &chunkGrid{sec: sec}
		c.grid = g
	}
	g.k = float32(sec.scale)
	g.lim = uint(64-bits.Len(uint(c.p))) / 2
	for _, s := range g.slots {
		if len(s) != c.p {
			g.slots = nil
			break
		}
	}
	g.free = g.free[:0]
	for i, s := range g.slots {
		clear(s)
		g.free = append(g.free, i)
	}
	g.slot, g.cur = g.slot[:0], g.cur[:0]
	for range len(c.added) {
		g.slot, g.cur = append(g.slot, -1), append(g.cur, nil)
	}
}

// take returns chunk k's accumulator, taking a free one (or a new one) at
// the chunk's first row.
func (g *chunkGrid) take(k, p int) []int64 {
	if acc := g.cur[k]; acc != nil {
		return acc
	}
	g.mu.Lock()
	var s int
	if n := len(g.free); n > 0 {
		s, g.free = g.free[n-1], g.free[:n-1]
	} else {
		s = len(g.slots)
		g.slots = append(g.slots, make([]int64, p))
	}
	acc := g.slots[s]
	g.mu.Unlock()
	g.slot[k], g.cur[k] = s, acc
	return acc
}

// give returns chunk k's accumulator to the free list (after its last row).
func (g *chunkGrid) give(k int) {
	g.mu.Lock()
	g.free = append(g.free, g.slot[k])
	g.mu.Unlock()
	g.slot[k], g.cur[k] = -1, nil
}

// addGrid is Add in grid mode: it adds n_i = trunc(fl32(s·v)·2^−exp) for
// the values v of row (vec.AddGrid with the factor s·2^−exp, exact: a
// power-of-two multiple of s) and returns the row's measured norm: the
// exact integer norm times γ, or, for a row taken by the careful path, the
// float64 norm of fl32(s·row) before any shrinking (+Inf when the row
// cannot be brought within ⌊R'²⌋: it is then not added, and the rule's
// norm check refuses the batch with ErrNotClipped).
func (c *ChunkSum) addGrid(k, i int, row []float32, s float32) float64 {
	g := c.grid
	acc := g.take(k, c.p)
	kk := s * g.k
	sq, or := vec.AddGrid(acc, row, kk)
	var n float64
	if or>>g.lim == 0 && sq <= g.sec.rowMax {
		n = math.Sqrt(float64(sq)) * g.sec.gamma
	} else {
		vec.AddGrid(acc, row, -kk) // undo, exactly: trunc is odd (mod 2⁶⁴ sums)
		n = g.sec.addCareful(acc, row, s)
	}
	if c.added[k]+1 == c.starts[k+1]-c.starts[k] {
		g.give(k)
	}
	return n
}

// addCareful adds the row fl32(s·row) on the grid by prepareRow's careful
// path (exact squared norms with overflow checks, shrinking until within
// ⌊R'²⌋) and returns the float64 norm of fl32(s·row), or +Inf (nothing
// added) when it cannot be brought within the bound.
func (sec *secureRelease) addCareful(acc []int64, row []float32, s float32) float64 {
	var ss float64
	for _, v := range row {
		f := float64(s * v)
		ss += f * f
	}
	mult := 1.0
	for iter := 0; iter <= 60; iter++ {
		sum, ok := sec.scaledSumSq(row, s, mult)
		if !ok {
			return math.Inf(1)
		}
		if sum <= sec.rowMax {
			k := sec.scale * mult
			for j, v := range row {
				acc[j] += int64(float64(s*v) * k)
			}
			return math.Sqrt(ss)
		}
		mult *= math.Sqrt(float64(sec.rowMax)/float64(sum)) * (1 - 1.0/(1<<20))
	}
	return math.Inf(1)
}

// scaledSumSq returns Σ_j trunc(fl32(s·v_j)·mult/γ)² exactly (false on
// overflow). Every |n_j| ≤ 2³¹, so each square is < 2⁶²; the sum is
// accumulated in uint64 and the carry tested.
func (sec *secureRelease) scaledSumSq(r []float32, s float32, mult float64) (uint64, bool) {
	var sum uint64
	k := sec.scale * mult
	for _, v := range r {
		n := int64(float64(s*v) * k)
		if n > 1<<31 || n < -(1<<31) {
			return 0, false
		}
		var c uint64
		sum, c = bits.Add64(sum, uint64(n*n), 0)
		if c != 0 {
			return 0, false
		}
	}
	return sum, true
}

// gridTotal writes the batch's integer sum (every accumulator added) into
// total.
func (c *ChunkSum) gridTotal(total []int64) {
	clear(total)
	for _, s := range c.grid.slots {
		for j, v := range s {
			total[j] += v
		}
	}
}

// aggregateSecureChunks is Sum.AggregateChunks for the secure release: the
// same checks of the measured norms, then the integer sum of the
// accumulators and the exactly rounded Gaussian noise, drawn from rng as
// the matrix path (Aggregate) draws it, so both paths release the same
// values from the same integer rows and stream.
func (a *Sum) aggregateSecureChunks(c *ChunkSum, clipNorm float64, rng *rand.Rand, out []float32) (Report, error) {
	if !c.onGrid || c.grid == nil || c.grid.sec != a.sec {
		return Report{}, fmt.Errorf("sum: the chunk sums were not taken on this rule's grid (ResetChunks)")
	}
	g := Grads{Norms: c.norms, M: c.Rows(), P: c.p, ClipNorm: clipNorm}
	if err := checkClipped(g, vec.NormErr(c.p), true); err != nil {
		return Report{}, fmt.Errorf("sum: %w", err)
	}
	if err := checkNorms(g, true, a.cfg.ClipNorm); err != nil {
		return Report{}, fmt.Errorf("sum: %w", err)
	}
	if err := needRNG(rng, 1); err != nil {
		return Report{}, fmt.Errorf("sum: %w", err)
	}
	if len(out) != c.p {
		return Report{}, fmt.Errorf("sum: output of %d values, want %d", len(out), c.p)
	}
	if len(a.sec.total) != c.p {
		a.sec.total = make([]int64, c.p)
	}
	c.gridTotal(a.sec.total)
	a.sec.releaseTotal(c.p, a.sec.noise, rng, out)
	return Report{Mechanism: a.sec.Mechanism()}, nil
}
