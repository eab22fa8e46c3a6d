// Package modeltest checks a model's exact per-example gradients the way
// the model package checks its own layer kinds, so that the author of a
// new kind (model.RegisterLayer) can test its gradient rule
// (model.ExampleGrads) in a network:
//
//   - every row of PerExampleGrads is written, and row i equals the
//     gradient of a batch of example i alone (BatchGrad), with the same
//     loss;
//   - the rows sum to BatchGrad's gradient of the whole batch (across the
//     model's chunks when the batch is large: 300 examples span large and
//     small chunks of every network), the losses to its loss;
//   - the first examples' rows agree with central finite differences of
//     the model's own loss.
//
// The finite differences are taken on the float32 model, so the network
// should be smooth near its parameters (tanh rather than ReLU or max
// pooling, whose kinks a difference step may cross); the model package's
// own tests use an independent float64 reference instead.
package modeltest

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/privtrain/privtrain/model"
)

// Options tune Check; the zero value checks with the defaults.
type Options struct {
	// Coords are the parameters checked against finite differences; nil
	// means all of them when P ≤ 400, else 400 spread over [0, P) and the
	// last one.
	Coords []int
	// Examples is how many examples (the first ones) are checked against
	// finite differences (default 2).
	Examples int
	// Step is the central-difference step h (default 5e-3).
	Step float64
	// RelTol and AbsTol bound |g − fd| ≤ AbsTol + RelTol·|fd| (defaults
	// 5e-3 and 2e-4, for float32 differences).
	RelTol, AbsTol float64
}

func (o *Options) defaults(p int) {
	if o.Coords == nil {
		if p <= 400 {
			for k := 0; k < p; k++ {
				o.Coords = append(o.Coords, k)
			}
		} else {
			for j := 0; j < 400; j++ {
				o.Coords = append(o.Coords, j*p/400)
			}
			o.Coords = append(o.Coords, p-1)
		}
	}
	if o.Examples == 0 {
		o.Examples = 2
	}
	if o.Step == 0 {
		o.Step = 5e-3
	}
	if o.RelTol == 0 {
		o.RelTol = 5e-3
	}
	if o.AbsTol == 0 {
		o.AbsTol = 2e-4
	}
}

func closeTo(got, want, rel, abs float64) bool {
	return math.Abs(got-want) <= abs+rel*math.Abs(want)
}

// example returns example i of b as a batch of one.
func example(b model.Batch, i, d int) model.Batch {
	e := model.Batch{X: b.X[i*d : (i+1)*d], M: 1}
	if b.Labels != nil {
		e.Labels = b.Labels[i : i+1]
	}
	if b.Targets != nil {
		e.Targets = b.Targets[i : i+1]
	}
	return e
}

// rows returns the examples compared with batches of one: all of a small
// batch, else a spread that includes both sides of every chunk boundary
// the model may use.
func rows(m int) []int {
	if m <= 40 {
		r := make([]int, m)
		for i := range r {
			r[i] = i
		}
		return r
	}
	seen := map[int]bool{}
	var r []int
	for _, i := range []int{0, 1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 255, 256, 257, m / 2, m - 2, m - 1} {
		if i < m && !seen[i] {
			seen[i] = true
			r = append(r, i)
		}
	}
	return r
}

// Check runs the checks of the package documentation on m and batch b
// (M ≥ 1) and returns what failed (at most a few cases per check), or nil.
// It leaves m's parameters as it found them.
func Check(m model.Model, b model.Batch, o Options) error {
	p := m.NumParams()
	o.defaults(p)
	if b.M < 1 || len(b.X)%b.M != 0 {
		return fmt.Errorf("modeltest: need a batch of at least one example, got M = %d with %d inputs", b.M, len(b.X))
	}
	for _, k := range o.Coords {
		if k < 0 || k >= p {
			return fmt.Errorf("modeltest: coordinate %d outside [0, %d)", k, p)
		}
	}
	d := len(b.X) / b.M
	var errs []error
	fail := func(format string, a ...any) bool {
		errs = append(errs, fmt.Errorf(format, a...))
		return len(errs) >= 8
	}
	done := func() error { return errors.Join(errs...) }

	grads := make([]float32, b.M*p)
	losses := make([]float32, b.M)
	for i := range grads {
		grads[i] = float32(math.NaN()) // must be overwritten
	}
	for i := range losses {
		losses[i] = float32(math.NaN())
	}
	if err := m.PerExampleGrads(b, grads, losses); err != nil {
		return fmt.Errorf("modeltest: PerExampleGrads: %w", err)
	}
	for i, v := range grads {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			if fail("example %d parameter %d: per-example gradient %v (not written, or not finite)", i/p, i%p, v) {
				return done()
			}
		}
	}
	batch := make([]float32, p)
	for i := range batch {
		batch[i] = 7 // must be overwritten
	}
	lossSum, err := m.BatchGrad(b, batch)
	if err != nil {
		return fmt.Errorf("modeltest: BatchGrad: %w", err)
	}

	// Σ rows = batch gradient, Σ losses = batch loss.
	var sumLoss float64
	for _, l := range losses {
		sumLoss += float64(l)
	}
	if !closeTo(lossSum, sumLoss, 1e-5, 1e-5) {
		fail("BatchGrad loss %v, sum of the per-example losses %v", lossSum, sumLoss)
	}
	for k := 0; k < p; k++ {
		var s float64
		for i := 0; i < b.M; i++ {
			s += float64(grads[i*p+k])
		}
		if !closeTo(float64(batch[k]), s, 1e-3, 1e-4) {
			if fail("parameter %d: BatchGrad %v, sum of the per-example gradients %v", k, batch[k], s) {
				return done()
			}
		}
	}

	// Each row = the gradient of a batch of one.
	one := make([]float32, p)
	for _, i := range rows(b.M) {
		e := example(b, i, d)
		l1, err := m.BatchGrad(e, one)
		if err != nil {
			return fmt.Errorf("modeltest: BatchGrad of example %d: %w", i, err)
		}
		if !closeTo(l1, float64(losses[i]), 1e-5, 1e-6) {
			fail("example %d: loss %v, batch-of-one loss %v", i, losses[i], l1)
		}
		for k := 0; k < p; k++ {
			if g, w := grads[i*p+k], one[k]; !closeTo(float64(g), float64(w), 1e-4, 1e-6) {
				if fail("example %d parameter %d: per-example gradient %v, batch-of-one gradient %v", i, k, g, w) {
					return done()
				}
				break
			}
		}
	}

	// Central differences of each example's loss.
	theta := m.Params()
	defer m.SetParams(theta)
	shifted := make([]float32, p)
	loss := func(e model.Batch, k int, delta float64) (float64, error) {
		copy(shifted, theta)
		shifted[k] = float32(float64(theta[k]) + delta)
		if err := m.SetParams(shifted); err != nil {
			return 0, err
		}
		return m.BatchGrad(e, one)
	}
	for i := 0; i < min(o.Examples, b.M); i++ {
		e := example(b, i, d)
		for _, k := range o.Coords {
			// The step actually taken in float32.
			hp := float64(float32(float64(theta[k])+o.Step)) - float64(theta[k])
			hm := float64(theta[k]) - float64(float32(float64(theta[k])-o.Step))
			lp, err := loss(e, k, o.Step)
			if err != nil {
				return fmt.Errorf("modeltest: %w", err)
			}
			lm, err := loss(e, k, -o.Step)
			if err != nil {
				return fmt.Errorf("modeltest: %w", err)
			}
			fd := (lp - lm) / (hp + hm)
			if g := float64(grads[i*p+k]); !closeTo(g, fd, o.RelTol, o.AbsTol) {
				if fail("example %d parameter %d: per-example gradient %v, central difference %v", i, k, g, fd) {
					return done()
				}
			}
		}
	}
	return done()
}

// RandomBatch returns m examples for a spec, drawn from seed: inputs
// uniform on [0, 1) for images and standard normal for vectors, uniform
// labels for classifiers, standard normal targets for regression
// (Classes = 1).
func RandomBatch(s model.Spec, m int, seed uint64) model.Batch {
	rng := rand.New(rand.NewPCG(seed, 0x6d6f64656c74))
	d := 1
	for _, v := range s.InputShape {
		d *= v
	}
	b := model.Batch{X: make([]float32, m*d), M: m}
	for i := range b.X {
		if len(s.InputShape) == 3 {
			b.X[i] = rng.Float32()
		} else {
			b.X[i] = float32(rng.NormFloat64())
		}
	}
	if s.Classes == 1 {
		b.Targets = make([]float32, m)
		for i := range b.Targets {
			b.Targets[i] = float32(rng.NormFloat64())
		}
	} else {
		b.Labels = make([]int, m)
		for i := range b.Labels {
			b.Labels[i] = rng.IntN(s.Classes)
		}
	}
	return b
}

// Perturb adds N(0, σ²) noise drawn from seed to m's parameters, so that
// zero or constant initial values (biases, γ = 1) are checked away from
// where they start.
func Perturb(m model.Model, sigma float64, seed uint64) error {
	rng := rand.New(rand.NewPCG(seed, 0x70657274))
	p := m.Params()
	for i := range p {
		p[i] += float32(sigma * rng.NormFloat64())
	}
	return m.SetParams(p)
}
