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
	// Trimmed is how many gradients the rule dropped (robust rules; it
	// depends on the batch, so it is operator-only).
	Trimmed int `json:"trimmed"`
	// Mechanism is the (not yet subsampled) privacy mechanism of this step,
	// with sensitivity normalized to 1; nil when the rule adds no noise.
	Mechanism privacy.Mechanism `json:"-"`
	// Diagnostics is the rule's own record of the step (nil: none), e.g.
	// PTRDiagnostics or TrimDiagnostics.
	Diagnostics Diagnostics `json:"-"`
}

// Aggregator is a (possibly private) aggregation rule.
//
// A private rule states the mechanism its every release is by implementing
// Planned, which the trainer accounts (PlannedMechanism), and reports its
// own per-step record in Report.Diagnostics (its own type, with a release-
// safe Public part; ptr-tsum's PTRDiagnostics carry the typed test outcome
// PTROutcome). A rule states the clipping norm R it assumes by implementing
// Clipping (the trainer clips to it), and a rule with state across steps
// implements Stateful (a run checkpoints it) and Summarizer (its run
// statistics go to the summary), so the run needs no knowledge of which rule
// it drives.
type Aggregator interface {
	// Name is the rule's registered name, e.g. "sum", "ptr-tsum".
	Name() string
	// Aggregate writes the released aggregate of g into out (len P) and
	// reports what happened. rng drives all noise.
	Aggregate(g Grads, rng *rand.Rand, out []float32) (Report, error)
}
