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
// By default (σ > 0 without Config.FloatNoise) the release is
// floating-point safe (see secureRelease) and post-processes the same
// Gaussian mechanism; with FloatNoise it adds float noise.
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
	cfg SumOptions
	s   scratch
	sec *secureRelease
}

// SumOptions are sum's settings (Config.Sigma, ClipNorm, FloatNoise).
type SumOptions struct {
	// Sigma is the noise multiplier σ (0: the exact sum).
	Sigma float64
	// ClipNorm is R, the L2 bound of every gradient (> 0 when σ > 0).
	ClipNorm float64
	// FloatNoise opts out of the floating-point-safe release of σ > 0:
	// float noise, whose guarantee does NOT hold against floating-point
	// attacks (see Config.FloatNoise).
	FloatNoise bool
}

func sumOptions(c Config) SumOptions {
	return SumOptions{Sigma: c.Sigma, ClipNorm: c.ClipNorm, FloatNoise: c.FloatNoise}
}

// Validate checks σ and R.
func (o SumOptions) Validate() error { return checkNoise(o.Sigma, o.ClipNorm) }

// SecureRequested reports !o.FloatNoise: sum has a secure release
// (SecureOptions).
func (o SumOptions) SecureRequested() bool { return !o.FloatNoise }

// NewSum returns the sum rule for validated options o.
func NewSum(o SumOptions) (*Sum, error) {
	a := &Sum{clipNorm: clipNorm(o.ClipNorm), cfg: o}
	var err error
	if a.sec, err = secureUnlessFloat(o.FloatNoise, o.Sigma, o.ClipNorm); err != nil {
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
