package aggregate

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/privtrain/privtrain/internal/vec"
)

// ChunkSummer is an optional fast path of a rule whose release is the plain
// sum of the clipped rows plus noise (Sum, float or secure): the caller
// takes that sum inside its per-example pass, chunk by chunk, while each
// row is still in cache (ChunkSum), and the rule checks what was summed and
// adds the noise. Rules whose release depends on more than the sum (tsum,
// ptr-tsum, the robust rules) do not implement it and receive the full
// matrix through Aggregate.
type ChunkSummer interface {
	Aggregator
	// SumsChunks reports whether AggregateChunks is available in the
	// rule's configuration.
	SumsChunks() bool
	// ResetChunks prepares c for a batch of rows of p values cut into the
	// chunks starting at starts (ChunkSum.Reset), in the rule's mode: the
	// float chunk sum, or (secure release) the exact integer sum on the
	// rule's grid.
	ResetChunks(c *ChunkSum, p int, starts []int) error
	// AggregateChunks releases the sum held in c (every row of the batch
	// added, in ChunkSum's order) plus the rule's noise. clipNorm is the R
	// the rows were clipped to. For a private rule every added row must
	// satisfy ‖row‖ ≤ R exactly: the rule checks n_i·(1 + e) ≤ R on the
	// norms ChunkSum measured on the values it added (e = vec.NormErr(P));
	// if a row fails it returns an error wrapping ErrNotClipped before
	// drawing any randomness from rng, so the caller can clip the rows
	// itself, sum them again into c and call AggregateChunks with the same
	// rng.
	AggregateChunks(c *ChunkSum, clipNorm float64, rng *rand.Rand, out []float32) (Report, error)
}

// ChunkSum is the sum of a batch's clipped rows, taken chunk by chunk in a
// fixed order that does not depend on how many goroutines add to it or in
// which order the chunks are done. The M rows are cut into consecutive
// chunks [starts[k], starts[k+1]) (the caller's cut, e.g. the model's:
// model.ChunkVisitor.ExampleChunks, which depends on M alone). Chunk k's
// sum S_k is its first row's values, then each further row added in row
// order, one float32 rounding per addition: S_k ← fl32(S_k + fl32(s_i·g_i))
// (vec.AddScaled; the product is rounded to float32 before the addition).
// The batch's sum is S_0, then S_1, S_2, … added in chunk order, one
// float32 rounding per addition (vec.AddRows). Different chunks may be
// added concurrently; the rows of one chunk must be added by one goroutine
// at a time, in row order (Add checks the order).
//
// In grid mode (the secure sum's ResetChunks; securechunks.go) the rows are
// added as exact integer vectors on the secure release's grid instead, and
// the float sum (Sum) is not available.
type ChunkSum struct {
	p      int
	starts []int
	acc    []float32 // S_k at acc[k·p : (k+1)·p]
	added  []int     // rows added to each chunk so far
	norms  []float64 // measured norm of each added row
	grid   *chunkGrid
	onGrid bool // grid mode (ResetChunks of the secure release)
}

// Reset prepares c for a batch of M = starts[len(starts)−1] rows of p values
// cut into the chunks [starts[k], starts[k+1]): starts[0] = 0 and strictly
// increasing (M = 0: starts = [0]). Buffers are reused.
func (c *ChunkSum) Reset(p int, starts []int) error {
	if err := checkStarts(p, starts); err != nil {
		return err
	}
	nk := len(starts) - 1
	c.reset(p, starts)
	if cap(c.acc) < nk*p {
		c.acc = make([]float32, (nk+nk/4+1)*p)
	}
	c.acc = c.acc[:nk*p]
	return nil
}

// reset is Reset without the float chunk sums (grid mode has none).
func (c *ChunkSum) reset(p int, starts []int) {
	nk, m := len(starts)-1, starts[len(starts)-1]
	c.p, c.onGrid = p, false
	c.starts = append(c.starts[:0], starts...)
	c.added = append(c.added[:0], make([]int, nk)...)
	if cap(c.norms) < m {
		c.norms = make([]float64, m+m/4+1)
	}
	c.norms = c.norms[:m]
	for i := range c.norms {
		c.norms[i] = math.NaN() // not added yet
	}
}

// checkStarts validates Reset's arguments.
func checkStarts(p int, starts []int) error {
	if p <= 0 {
		return fmt.Errorf("chunk sum: rows of %d values", p)
	}
	if len(starts) == 0 || starts[0] != 0 {
		return fmt.Errorf("chunk sum: chunk starts %v do not begin at row 0", starts)
	}
	for k := 1; k < len(starts); k++ {
		if starts[k] <= starts[k-1] {
			return fmt.Errorf("chunk sum: chunk starts %v are not increasing", starts)
		}
	}
	return nil
}

// Rows is the batch size M.
func (c *ChunkSum) Rows() int { return c.starts[len(c.starts)-1] }

// Norms returns the measured norm of every added row (len M; owned by c).
func (c *ChunkSum) Norms() []float64 { return c.norms }

// Add adds fl32(s·row) to chunk k as batch row i, which must be the chunk's
// next row, and returns the norm of the added values as measured in the
// same pass (vec.AddScaled: exact squares, float64 sums; relative error ≤
// vec.NormErr(P)). s = 1 adds row as it is. row is not modified.
func (c *ChunkSum) Add(k, i int, row []float32, s float32) (float64, error) {
	if k < 0 || k >= len(c.added) {
		return 0, fmt.Errorf("chunk sum: chunk %d of %d", k, len(c.added))
	}
	lo := c.starts[k]
	if want := lo + c.added[k]; i != want || i >= c.starts[k+1] {
		return 0, fmt.Errorf("chunk sum: row %d added to chunk %d (rows %d–%d), whose next row is %d", i, k, lo, c.starts[k+1]-1, want)
	}
	if len(row) != c.p {
		return 0, fmt.Errorf("chunk sum: row of %d values, want %d", len(row), c.p)
	}
	var n float64
	if c.onGrid {
		n = c.addGrid(k, i, row, s)
	} else {
		n = math.Sqrt(vec.AddScaled(c.acc[k*c.p:(k+1)*c.p], row, s, i == lo))
	}
	c.norms[i] = n
	c.added[k]++
	return n, nil
}

// Sum writes the batch's sum into out (len P): S_0, then S_1, S_2, … added
// in chunk order (all zeros for M = 0). Every row must have been added.
func (c *ChunkSum) Sum(out []float32) error {
	if len(out) != c.p {
		return fmt.Errorf("chunk sum: output of %d values, want %d", len(out), c.p)
	}
	if err := c.complete(); err != nil {
		return err
	}
	if c.onGrid {
		return fmt.Errorf("chunk sum: the rows were summed on the secure grid, not in float32")
	}
	nk := len(c.added)
	if nk == 0 {
		clear(out)
		return nil
	}
	copy(out, c.acc[:c.p])
	vec.AddRows(out, c.acc[c.p:], nk-1)
	return nil
}

// complete reports a chunk that is missing rows.
func (c *ChunkSum) complete() error {
	if len(c.starts) == 0 {
		return fmt.Errorf("chunk sum: no batch (Reset not called)")
	}
	for k, n := range c.added {
		if want := c.starts[k+1] - c.starts[k]; n != want {
			return fmt.Errorf("chunk sum: chunk %d has %d of its %d rows", k, n, want)
		}
	}
	return nil
}

// SumsChunks implements ChunkSummer: the float release, and the secure
// release, whose exact integer sum is then taken on its grid chunk by
// chunk (ResetChunks puts the ChunkSum in grid mode).
func (a *Sum) SumsChunks() bool { return true }

// ResetChunks implements ChunkSummer: Reset, and grid mode for the secure
// release.
func (a *Sum) ResetChunks(c *ChunkSum, p int, starts []int) error {
	if a.sec == nil {
		return c.Reset(p, starts)
	}
	if err := checkStarts(p, starts); err != nil {
		return err
	}
	c.reset(p, starts)
	c.resetGrid(a.sec)
	c.onGrid = true
	return nil
}

// AggregateChunks implements ChunkSummer: the checks of AggregateScaled on
// the norms c measured, then c's sum (ChunkSum's order) and the noise; for
// the secure release, the integer sum on the grid and its exact noise.
func (a *Sum) AggregateChunks(c *ChunkSum, clipNorm float64, rng *rand.Rand, out []float32) (Report, error) {
	if err := c.complete(); err != nil {
		return Report{}, fmt.Errorf("sum: %w", err)
	}
	if a.sec != nil {
		return a.aggregateSecureChunks(c, clipNorm, rng, out)
	}
	if c.onGrid {
		return Report{}, fmt.Errorf("sum: the chunk sums were taken on a secure grid")
	}
	g := Grads{Norms: c.norms, M: c.Rows(), P: c.p, ClipNorm: clipNorm}
	private := a.cfg.Sigma > 0
	if err := checkClipped(g, vec.NormErr(c.p), private); err != nil {
		return Report{}, fmt.Errorf("sum: %w", err)
	}
	if err := checkNorms(g, private, a.cfg.ClipNorm); err != nil {
		return Report{}, fmt.Errorf("sum: %w", err)
	}
	if err := c.Sum(out); err != nil {
		return Report{}, fmt.Errorf("sum: %w", err)
	}
	return a.release(rng, out)
}
