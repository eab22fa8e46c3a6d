package optim

import (
	"fmt"

	"github.com/privtrain/privtrain/model"
)

// Gradient accumulation (Config.Accumulate = N > 1). A step samples one
// logical batch (the Poisson batch the accountant charges for) and computes
// its per-example gradients in N physical batches, consecutive slices of
// the sampled rows, so that the model holds the activations of one slice at
// a time. Clipping, the rule's release and its noise happen once per
// logical batch, on all of its rows: one mechanism invocation per step, as
// without accumulation, and the accounting (q, steps, ε) is unchanged.
//
//   - sum (float or secure, the chunked path): every physical batch adds
//     its clipped rows to the one ChunkSum of the logical batch (its chunks
//     are the model's chunks of each slice, offset by the slice's first
//     row); the secure release sums exact integers on its grid, so the
//     released value is the same for any N (bit-identical when the model's
//     rows are), and the float sum is the same deterministic sum in a fixed
//     order. AggregateChunks then checks every row's norm and adds noise
//     once.
//   - tsum, ptr-tsum and the robust rules need every row of the logical
//     batch (the trimming and PTR's test are on the whole batch): the
//     physical batches fill the one M × P matrix of per-example gradients,
//     and the rule runs once on it. Accumulation then bounds the model's
//     activation memory, not the matrix's.
//   - nonprivate (no rule): the batch gradients of the slices are summed.

// pieces returns the physical batches of a logical batch of m rows:
// boundaries 0 = b₀ < b₁ < … < b_k = m of N near-equal slices (empty ones
// dropped; [0, m] without accumulation).
func (t *Trainer) pieces(m int) []int {
	n := t.cfg.Accumulate
	if n <= 1 || m <= 1 {
		return []int{0, m}
	}
	out := []int{0}
	for j := 1; j <= n; j++ {
		if b := j * m / n; b > out[len(out)-1] {
			out = append(out, b)
		}
	}
	return out
}

// slice returns rows [lo, hi) of b.
func (t *Trainer) slice(b model.Batch, lo, hi int) model.Batch {
	s := model.Batch{X: b.X[lo*t.d : hi*t.d], M: hi - lo}
	if b.Labels != nil {
		s.Labels = b.Labels[lo:hi]
	}
	if b.Targets != nil {
		s.Targets = b.Targets[lo:hi]
	}
	return s
}

// perExampleGrads writes the per-example gradients of b into g (M × P) and
// the losses into t.losses, one physical batch at a time; sq, when non-nil,
// receives each row's sum of squares (model.PerExampleNormer).
func (t *Trainer) perExampleGrads(b model.Batch, g []float32, sq []float64) error {
	bs := t.pieces(b.M)
	for j := 0; j+1 < len(bs); j++ {
		lo, hi := bs[j], bs[j+1]
		s := t.slice(b, lo, hi)
		var err error
		if sq != nil {
			err = t.cfg.Model.(model.PerExampleNormer).PerExampleGradsNorms(s, g[lo*t.p:hi*t.p], t.losses[lo:hi], sq[lo:hi])
		} else {
			err = t.cfg.Model.PerExampleGrads(s, g[lo*t.p:hi*t.p], t.losses[lo:hi])
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// batchGrad writes the batch gradient Σ_i ∇ℓ_i of b into t.out and returns
// the loss sum, summing the physical batches' gradients in order.
func (t *Trainer) batchGrad(b model.Batch) (float64, error) {
	bs := t.pieces(b.M)
	if len(bs) == 2 {
		return t.cfg.Model.BatchGrad(b, t.out)
	}
	var loss float64
	acc := make([]float32, t.p)
	for j := 0; j+1 < len(bs); j++ {
		l, err := t.cfg.Model.BatchGrad(t.slice(b, bs[j], bs[j+1]), t.out)
		if err != nil {
			return 0, fmt.Errorf("physical batch %d: %w", j, err)
		}
		loss += l
		for i, v := range t.out {
			acc[i] += v
		}
	}
	copy(t.out, acc)
	return loss, nil
}

// chunkCut is the chunk cut of a logical batch of m rows for the chunked
// clipped sum: the model's cut of each physical batch, offset by its first
// row. It returns the cut and, per physical batch, its first chunk.
func (t *Trainer) chunkCut(v model.ChunkVisitor, bs []int) (starts, first []int) {
	starts = append(t.starts[:0], 0)
	var cut []int
	for j := 0; j+1 < len(bs); j++ {
		first = append(first, len(starts)-1)
		cut = v.ExampleChunks(bs[j+1]-bs[j], cut)
		for _, s := range cut[1:] {
			starts = append(starts, bs[j]+s)
		}
	}
	return starts, first
}
