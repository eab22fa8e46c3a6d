package optim

import (
	"fmt"
	"math"

	"github.com/privtrain/privtrain/aggregate"
)

// TrimController adapts the trim level F of TSGD+PTR after each PTR test
// (Algorithm 2 and Remark 5.3 of Wang et al., NeurIPS 2022): by default a
// failed test ("+": the SUM was released) increases F by Rate·batch and a
// passed test ("-") decreases it, keeping F in [0, batch/2).
//
// Appendix B.1.3 of the same paper states the opposite direction; we treat
// that as a typo and follow Remark 5.3, but IncreaseOnPass selects the other
// direction for experiments.
type TrimController struct {
	// Rate is the change per test as a fraction of the batch size (0.02 in
	// the paper).
	Rate float64
	// Batch is the (expected) batch size the rate refers to.
	Batch float64
	// IncreaseOnPass reverses the direction (appendix B.1.3's reading).
	IncreaseOnPass bool
}

// Validate checks 0 < Rate < 0.5 and Batch ≥ 1.
func (c *TrimController) Validate() error {
	if !(c.Rate > 0 && c.Rate < 0.5) {
		return fmt.Errorf("dynamic F: rate must be in (0, 0.5), got %v", c.Rate)
	}
	if !(c.Batch >= 1) || math.IsInf(c.Batch, 0) {
		return fmt.Errorf("dynamic F: batch size must be ≥ 1, got %v", c.Batch)
	}
	return nil
}

// Next returns the trim level after a test with outcome branch at level f.
func (c *TrimController) Next(f int, branch aggregate.PTROutcome) int {
	step := int(math.Round(c.Rate * c.Batch))
	if step < 1 {
		step = 1
	}
	up := branch == aggregate.PTRFailed
	if c.IncreaseOnPass {
		up = !up
	}
	if up {
		f += step
	} else {
		f -= step
	}
	maxF := int(math.Ceil(c.Batch/2)) - 1 // F < batch/2
	if f > maxF {
		f = maxF
	}
	if f < 0 {
		f = 0
	}
	return f
}
