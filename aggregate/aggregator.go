package aggregate

import (
	"math/rand/v2"

	"github.com/privtrain/privtrain/privacy"
)

// Grads is a batch of M per-example gradients of dimension P.
type Grads struct {
	// G holds the gradients, M × P row-major; row i is example i.
	G []float32
	// Norms holds the L2 norm of each row (len M).
	Norms []float64
	// M and P are the batch size and the gradient dimension.
	M, P int
	// ClipNorm is R, the L2 bound every row satisfies (0: not clipped).
	ClipNorm float64
}

// Report says what one aggregation did.
type Report struct {
	// Branch is the PTR outcome (NoPTRTest for rules without a test).
	Branch PTROutcome `json:"branch,omitempty"`
	// Delta is Δ(S), the PTR safety margin; DeltaHat its noisy version.
	Delta    int     `json:"delta,omitempty"`
	DeltaHat float64 `json:"delta_hat,omitempty"`
	// Trimmed is how many gradients were dropped; F the trim parameter used.
	Trimmed int `json:"trimmed"`
	F       int `json:"f,omitempty"`
	// Mechanism is the (not yet subsampled) privacy mechanism of this step,
	// with sensitivity normalized to 1; nil when the rule adds no noise.
	Mechanism privacy.Mechanism `json:"-"`
}

// Aggregator is a (possibly private) aggregation rule.
type Aggregator interface {
	// Name is the rule's registered name, e.g. "sum", "ptr-tsum".
	Name() string
	// Aggregate writes the released aggregate of g into out (len P) and
	// reports what happened. rng drives all noise.
	Aggregate(g Grads, rng *rand.Rand, out []float32) (Report, error)
}
