package optim

import (
	"errors"
	"fmt"
	"math"
)

// Canaries inserts privacy-audit canaries into training: extra per-example
// gradients that join a step's batch after the real examples' gradients are
// computed (and corrupted) and before clipping, so that clipping,
// aggregation, noise and accounting treat them exactly like examples.
// A canary is "included" in the run when it may join batches at all; the
// run audit (Steinke, Nasr & Jagielski, NeurIPS 2023) includes each with
// probability ½ and guesses which were.
type Canaries interface {
	// StepRows returns the canary gradients (each of length p) that join
	// the batch of step.
	StepRows(step, p int) ([][]float32, error)
}

// SetCanaries installs audit canaries (nil removes them); call it before
// the first step. Canaries never count towards StepResult.BatchSize.
func (t *Trainer) SetCanaries(c Canaries) { t.cfg.Canaries = c }

// appendCanaries writes step's canary rows after the m example rows of the
// gradient buffer (growing it and the norm buffer if needed) and returns
// the new number of rows.
func (t *Trainer) appendCanaries(step, m int) (int, error) {
	rows, err := t.cfg.Canaries.StepRows(step, t.p)
	if err != nil {
		return m, fmt.Errorf("canaries: %w", err)
	}
	total := m + len(rows)
	if cap(t.grads) < total*t.p {
		g := make([]float32, (total+total/4+1)*t.p)
		copy(g, t.grads[:m*t.p])
		t.grads = g
	}
	t.grads = t.grads[:cap(t.grads)]
	if len(t.norms) < total {
		n := make([]float64, total+total/4+1)
		copy(n, t.norms[:m])
		t.norms = n
	}
	for i, r := range rows {
		if len(r) != t.p {
			return m, fmt.Errorf("canaries: row of length %d, want P = %d", len(r), t.p)
		}
		copy(t.grads[(m+i)*t.p:(m+i+1)*t.p], r)
	}
	return total, nil
}

// DiracCanaries are gradient-space canaries that each point along one
// coordinate of the parameter vector: canary i is Norm·e_{Coords[i]}
// (distinct coordinates make them orthogonal, so one canary's presence does
// not move another's score). An included canary joins each step's batch
// independently with probability Q — the run's Poisson rate, so each canary
// is sampled exactly like a training example — drawn from the stream
// StepRNG(Seed, step).
type DiracCanaries struct {
	Coords   []int
	Included []bool
	Norm     float64
	Q        float64
	Seed     uint64
}

// Validate checks the canary set against the gradient dimension p.
func (c *DiracCanaries) Validate(p int) error {
	if len(c.Coords) == 0 || len(c.Included) != len(c.Coords) {
		return fmt.Errorf("canaries: need one inclusion bit per canary (%d coordinates, %d bits)", len(c.Coords), len(c.Included))
	}
	if !(c.Norm > 0) || math.IsInf(c.Norm, 0) {
		return fmt.Errorf("canaries: norm must be finite and > 0, got %v", c.Norm)
	}
	if !(c.Q > 0 && c.Q <= 1) {
		return fmt.Errorf("canaries: sampling rate must be in (0, 1], got %v", c.Q)
	}
	seen := make(map[int]bool, len(c.Coords))
	for _, j := range c.Coords {
		if j < 0 || j >= p {
			return fmt.Errorf("canaries: coordinate %d outside [0, %d)", j, p)
		}
		if seen[j] {
			return errors.New("canaries: coordinates must be distinct")
		}
		seen[j] = true
	}
	return nil
}

// StepRows returns Norm·e_j for every included canary sampled at step.
func (c *DiracCanaries) StepRows(step, p int) ([][]float32, error) {
	if err := c.Validate(p); err != nil {
		return nil, err
	}
	rng := StepRNG(c.Seed, step)
	var rows [][]float32
	for i, j := range c.Coords {
		// Draw for every canary, included or not, so the sampling of one
		// canary never depends on another's inclusion bit.
		if rng.Float64() >= c.Q || !c.Included[i] {
			continue
		}
		r := make([]float32, p)
		r[j] = float32(c.Norm)
		rows = append(rows, r)
	}
	return rows, nil
}
