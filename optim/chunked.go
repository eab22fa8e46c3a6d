package optim

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/privtrain/privtrain/aggregate"
	"github.com/privtrain/privtrain/model"
)

// chunkPath returns the rule and the model of the chunked clipped sum
// (clipSumChunks) when this step can take it: a rule that releases the
// plain sum of the clipped rows (aggregate.ChunkSummer), a model that
// hands its rows out by chunk (model.ChunkVisitor), a non-empty batch, and
// nothing that needs the whole matrix before clipping (gradient corruption
// draws from one stream in batch-row order; canaries add rows). Every
// other step, and every other rule, goes through matrixAggregate.
func (t *Trainer) chunkPath(m int) (aggregate.ChunkSummer, model.ChunkVisitor, bool) {
	if m == 0 || t.cfg.Corruption != nil || t.cfg.Canaries != nil {
		return nil, nil, false
	}
	cs, ok := t.cfg.Aggregator.(aggregate.ChunkSummer)
	if !ok || !cs.SumsChunks() {
		return nil, nil, false
	}
	v, ok := t.cfg.Model.(model.ChunkVisitor)
	if !ok {
		return nil, nil, false
	}
	return cs, v, true
}

// clipSumChunks is the per-example pass, the clipping and the clipped sum
// in one: the model hands each row to the trainer while it is in cache
// (model.ChunkVisitor), the trainer computes its clip factor from the
// row's norm (1, or fl32(R(1−κ)/n̂) as clipFactors) and adds fl32(s·g_i)
// to its chunk's sum, measuring the added values' norm in the same pass
// (aggregate.ChunkSum: each chunk of the model's cut summed in row order,
// then the chunk sums in chunk order; neither the number of workers nor
// the order in which chunks finish changes a bit). The M × P matrix is
// never written. The rule then checks every measured norm against R
// before it draws any noise. If a row fails (aggregate.ErrNotClipped: only
// rows whose scaled values are subnormal can), the pass runs again with
// every row clipped in place by clipRow (rescaled until its measured bound
// holds) before it is added — the same values for every other row — and
// the rule is called again with the untouched rng. A row whose norm is NaN
// or infinite ends its chunk's sum (the rest of the pass runs, so that the
// error names the batch's lowest such row, whatever the order in which
// chunks are done), and nothing is released. It sets res.Loss.
func (t *Trainer) clipSumChunks(b model.Batch, cs aggregate.ChunkSummer, v model.ChunkVisitor, rng *rand.Rand, res *StepResult) (aggregate.Report, error) {
	m := b.M
	r := t.cfg.ClipNorm
	e, err := clipSetup(m, t.p, r, nil)
	if err != nil {
		return aggregate.Report{}, err
	}
	bs := t.pieces(m)
	var first []int // per physical batch: its first chunk
	if len(bs) == 2 {
		t.starts, first = v.ExampleChunks(m, t.starts), []int{0}
	} else {
		t.starts, first = t.chunkCut(v, bs)
	}
	nk := len(t.starts) - 1
	if cap(t.badRow) < nk {
		t.badRow = make([]int, nk+nk/4+1)
	}
	bad := t.badRow[:nk]
	pass := func(inPlace bool) error {
		if err := cs.ResetChunks(&t.chunks, t.p, t.starts); err != nil {
			return err
		}
		for k := range bad {
			bad[k] = -1
		}
		visit := func(k, i int, row []float32, ss float64) error {
			if bad[k] >= 0 {
				return nil // the chunk cannot be released: skip its rows
			}
			n := math.Sqrt(ss)
			if math.IsNaN(n) || math.IsInf(n, 0) {
				bad[k] = i
				return nil
			}
			s := float32(1)
			switch {
			case r <= 0:
			case inPlace:
				clipRow(row, n, r, e)
			default:
				s = clipFactor(n, r, e)
			}
			_, err := t.chunks.Add(k, i, row, s)
			return err
		}
		var err error
		for j := 0; j+1 < len(bs) && err == nil; j++ {
			lo, k0 := bs[j], first[j]
			sb := b
			if len(bs) > 2 {
				sb = t.slice(b, lo, bs[j+1])
			}
			err = v.PerExampleVisit(sb, t.losses[lo:bs[j+1]], func(k, i int, row []float32, ss float64) error {
				return visit(k0+k, lo+i, row, ss)
			})
		}
		// Every chunk is visited to its end and records its first bad row,
		// so the lowest recorded is the batch's lowest bad row.
		lowest := -1
		for _, i := range bad {
			if i >= 0 && (lowest < 0 || i < lowest) {
				lowest = i
			}
		}
		if lowest >= 0 {
			return notFinite(lowest)
		}
		if err != nil {
			return fmt.Errorf("per-example gradients: %w", err)
		}
		return nil
	}
	if err := pass(false); err != nil {
		return aggregate.Report{}, err
	}
	res.Loss = meanLoss(t.losses[:m])
	rep, err := cs.AggregateChunks(&t.chunks, r, rng, t.out)
	if errors.Is(err, aggregate.ErrNotClipped) {
		if err := pass(true); err != nil {
			return aggregate.Report{}, err
		}
		rep, err = cs.AggregateChunks(&t.chunks, r, rng, t.out)
	}
	if err != nil {
		return rep, fmt.Errorf("aggregate %s: %w", t.cfg.Aggregator.Name(), err)
	}
	return rep, nil
}
