package aggregate

import (
	"fmt"
	"math/rand/v2"

	"github.com/privtrain/privtrain/privacy"
)

// Sum is DP-SGD's aggregate SUM(S) = Σ_i g_i + N(0, (σR)² I).
//
// Under add/remove adjacency with ‖g_i‖ ≤ R, SUM has L2 sensitivity R, so the
// step is the Gaussian mechanism with multiplier σ. With σ = 0 the exact sum
// is released and Report.Mechanism is nil.
//
// With Config.Secure the release is floating-point safe (see secureRelease)
// and post-processes the same Gaussian mechanism.
//
// Summation order (float noise): Aggregate and AggregateScaled add the rows
// in row order, each coordinate in float32 with one rounding per addition;
// AggregateChunks (ChunkSummer, the trainer's DP step when the model hands
// out rows by chunk) releases ChunkSum's order: each chunk in row order,
// then the chunk sums in chunk order. Either order is fixed by the batch
// size and the model, never by the number of goroutines. The secure
// release sums integers, so its order does not matter.
type Sum struct {
	clipNorm
	cfg Config
	s   scratch
	sec *secureRelease
}

func newSum(cfg Config) (Aggregator, error) {
	a := &Sum{clipNorm: clipNorm(cfg.ClipNorm), cfg: cfg}
	var err error
	if a.sec, err = secureIfAsked(cfg); err != nil {
		return nil, err
	}
	return a, nil
}

// Mechanism returns the step's mechanism (nil for σ = 0).
func (a *Sum) Mechanism() privacy.Mechanism { return gaussianStep(a.sec, a.cfg.Sigma) }

// Name returns "sum".
func (a *Sum) Name() string { return "sum" }

// Aggregate writes Σ g_i plus noise into out.
func (a *Sum) Aggregate(g Grads, rng *rand.Rand, out []float32) (Report, error) {
	private := a.cfg.Sigma > 0
	std := a.cfg.Sigma * a.cfg.ClipNorm
	if err := checkGrads(g, out, private, a.cfg.ClipNorm); err != nil {
		return Report{}, fmt.Errorf("sum: %w", err)
	}
	if err := needRNG(rng, std); err != nil {
		return Report{}, fmt.Errorf("sum: %w", err)
	}
	if a.sec != nil {
		if err := a.sec.sum(g, rng, out); err != nil {
			return Report{}, fmt.Errorf("sum: %w", err)
		}
		return Report{Mechanism: a.sec.Mechanism()}, nil
	}
	a.s.grow(g.M, g.P)
	idx := a.s.idx[:0]
	for i := 0; i < g.M; i++ {
		idx = append(idx, i)
	}
	sumRows(g, idx, a.s.acc, out)
	return a.release(rng, out)
}
