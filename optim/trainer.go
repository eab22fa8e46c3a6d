package optim

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"time"

	"github.com/privtrain/privtrain/aggregate"
	"github.com/privtrain/privtrain/datasets"
	"github.com/privtrain/privtrain/internal/jsonobj"
	"github.com/privtrain/privtrain/internal/vec"
	"github.com/privtrain/privtrain/model"
	"github.com/privtrain/privtrain/privacy"
	"github.com/privtrain/privtrain/randstream"
)

// Source is the training data as the optimizer sees it (datasets.Dataset
// satisfies it).
type Source interface {
	// Gather copies the rows idx into x (len(idx)·Dim()), labels and targets
	// (either may be nil).
	Gather(idx []int, x []float32, labels []int, targets []float32) error
	// Dim is the number of features per example.
	Dim() int
}

// Sampler yields the training-set indices of each step's batch; Batch must
// be a deterministic function of the step (datasets' samplers are). A
// private run (Config.Accountant set) requires a datasets.PoissonSubsampler.
type Sampler interface {
	Batch(step int) []int
	ExpectedBatchSize() float64
}

// GradientCorruption corrupts the per-example gradients of a fixed set of
// training examples before clipping (the gradient-corruption attack model).
type GradientCorruption interface {
	// IsCorrupted reports whether training example i is corrupted.
	IsCorrupted(i int) bool
	// CorruptGradient modifies row, the gradient of training example i, in
	// place (a no-op for uncorrupted examples).
	CorruptGradient(i int, row []float32, rng *rand.Rand) error
}

// Config configures a Trainer. Methods are configurations of one loop:
// nonprivate (Aggregator nil, ClipNorm 0), DP-SGD (aggregator "sum" with
// noise), TSGD+Gaussian ("tsum"), TSGD+PTR ("ptr-tsum"), robust non-private
// training (any rule with σ = 0).
//
// A private run (Accountant set) requires a Poisson sampler by type
// (datasets.PoissonSubsampler, whose rate q the accounting uses) and a noise
// key (NoiseKey, package randstream) for its privacy randomness; the step
// mechanism it accounts is the aggregator's own plan (aggregate.Planned).
// Method-specific adaptation (TSGD+PTR's per-branch learning rates and
// dynamic trim level, PTRPolicy) is a StepPolicy (Policy).
type Config struct {
	Model   model.Model
	Data    Source
	Labels  bool // the model is a classifier (use labels, else targets)
	Sampler Sampler
	// Aggregator releases each step's update; nil means the plain
	// non-private batch gradient (fast path without per-example gradients).
	Aggregator aggregate.Aggregator
	// ClipNorm is R, the per-example L2 clipping bound. Leave it 0 for an
	// aggregator that states the R it needs (aggregate.Clipping, as every
	// built-in rule but rgm-sum does): the trainer clips to the rule's R,
	// and a different non-zero value here is an error. Without such a rule,
	// 0 means no clipping (allowed only for non-private training).
	ClipNorm float64
	// LR is the learning rate (Policy may change it per step).
	LR float64
	// Q overrides the Poisson sampling rate used for privacy accounting.
	// A private run reads q from its sampler, which must be a
	// datasets.PoissonSubsampler; leave Q = 0 to take that rate. A non-zero
	// Q must be ≥ it (accounting at a larger rate is valid, see
	// PoissonSubsampler): personalized sampling accounts the worst case.
	Q float64
	// Accountant records the privacy cost of every step (nil: non-private):
	// any privacy.Accountant (privacy.NewAccountant). Only this trainer may
	// compose into it while training (the budget check counts its steps).
	// The step mechanism it composes is the aggregator's plan
	// (aggregate.Planned), Poisson-subsampled at q: a private run needs an
	// aggregator that states its mechanism.
	Accountant privacy.Accountant
	// Delta is the δ at which ε is reported after each step. Conversion is
	// kept for callers' records: the accountant carries its own
	// configuration, which is the one used.
	Delta      float64
	Conversion privacy.Conversion
	// Bound chooses the subsampling bound (auto: the best proven one).
	Bound         privacy.SubsampleBound
	AllowUnproven bool
	// Policy adapts the run to each step's aggregation report (nil: the
	// fixed learning rate LR): e.g. TSGD+PTR's per-branch learning rates
	// and dynamic trim level (PTRPolicy). The step loop itself does not
	// know which rule runs.
	Policy StepPolicy
	// Corruption corrupts gradients of corrupted examples (nil: none).
	Corruption GradientCorruption
	// NoiseKey keys the privacy randomness of every step: the aggregator's
	// noise and PTR test draw from NoiseKey.Stream("aggregate", step), so a
	// resumed run redraws them exactly. A private run requires a non-zero
	// key: randstream.NewSecret for a guarantee; a key from
	// randstream.FromSeed makes the noise a function of the seed, and the
	// guarantee then holds only while that seed is secret.
	NoiseKey randstream.Key
	// Seed is public randomness: it drives the attacker's gradient
	// corruption and, in a non-private run, the aggregator's stream.
	Seed uint64
	// Workers is the number of goroutines for clipping (0: GOMAXPROCS).
	Workers int
	// Canaries adds privacy-audit canary gradients to every step (nil: none).
	Canaries Canaries
	// Optimizer turns each release into an update (zero value: plain SGD
	// at the constant rate LR). Post-processing: see OptimizerConfig.
	Optimizer OptimizerConfig
	// Accumulate N > 1 computes each step's per-example gradients in N
	// physical batches (consecutive slices of the sampled batch) and
	// releases once per (logical) step: see accumulate.go.
	Accumulate int
}

// StepResult describes one training step, for the per-step log. As JSON
// (MarshalJSON) it is one flat object: the trainer's fields, then the
// rule's diagnostics, then the trimmed and corrupted counts. It holds
// values that are not privatized (batch size, loss, the rule's private
// diagnostics); PublicJSON is its release-safe part.
type StepResult struct {
	Step      int
	BatchSize int
	Loss      float64
	Epsilon   float64
	// Accountant names the accountant of Epsilon. Under PLD, Epsilon is the
	// certified ε after EpsilonSteps ≥ Step+1 steps of the history (on a
	// grid of step counts, see privacy.PLDAccountant.EpsilonBound), an upper
	// bound on the ε so far; under RDP it is the ε so far.
	Accountant   string
	EpsilonSteps int
	// Rule is the aggregation rule's own record of the step (nil: none).
	Rule aggregate.Diagnostics
	// LR is the learning rate the step's update used (not logged).
	LR        float64
	Trimmed   int
	Corrupted int
}

// stepHead and stepTail are StepResult's own fields as JSON, around the
// rule's diagnostics.
type stepHead struct {
	Step       int     `json:"step"`
	BatchSize  int     `json:"batch_size"`
	Loss       float64 `json:"loss"`
	Epsilon    float64 `json:"epsilon,omitempty"`
	Accountant string  `json:"accountant,omitempty"`
	// EpsilonSteps is absent under RDP (its ε is the ε so far).
	EpsilonSteps int `json:"epsilon_steps,omitempty"`
}

type stepTail struct {
	Trimmed   int `json:"trimmed,omitempty"`
	Corrupted int `json:"corrupted,omitempty"`
}

// MarshalJSON writes the full record (operator-only).
func (r StepResult) MarshalJSON() ([]byte, error) {
	var rule any
	if r.Rule != nil {
		rule = r.Rule
	}
	return jsonobj.Concat(stepHead{r.Step, r.BatchSize, r.Loss, r.Epsilon, r.Accountant, r.EpsilonSteps}, rule, stepTail{r.Trimmed, r.Corrupted})
}

// PublicJSON writes the release-safe part of the record: the step, ε so far
// and the rule's public diagnostics (aggregate.Diagnostics.Public).
func (r StepResult) PublicJSON() ([]byte, error) {
	head := struct {
		Step         int     `json:"step"`
		Epsilon      float64 `json:"epsilon,omitempty"`
		EpsilonSteps int     `json:"epsilon_steps,omitempty"`
	}{r.Step, r.Epsilon, r.EpsilonSteps}
	var pub any
	if r.Rule != nil {
		pub = r.Rule.Public()
	}
	return jsonobj.Concat(head, pub)
}

// Trainer runs training steps. It is not safe for concurrent use.
type Trainer struct {
	cfg  Config
	p, d int
	mech privacy.Mechanism // subsampled step mechanism, for accounting

	// Budget allowance: budgetN more steps of mech fit in budgetTarget
	// after the accountant's first budgetBase steps (see NextStepFits).
	budgetTarget                       float64
	budgetBase, budgetN, budgetHorizon int
	budgetValid                        bool
	// boundTime is the time spent on per-step PLD ε (EpsilonBound).
	boundTime time.Duration

	x       []float32
	labels  []int
	targets []float32
	grads   []float32
	losses  []float32
	norms   []float64
	sq      []float64 // per-example sums of squares from the model
	scale   []float32 // per-example clip factors (clipAndAggregate)
	chunks  aggregate.ChunkSum
	starts  []int // the model's chunks (clipSumChunks)
	badRow  []int // per chunk: its first non-finite row, or −1
	out     []float32
	opt     *optimizerState // nil: plain SGD at a constant rate
	gbuf    []float64       // the optimizer's gradient estimate
}

// NewTrainer validates cfg and allocates the step buffers.
func NewTrainer(cfg Config) (*Trainer, error) {
	if cfg.Model == nil || cfg.Data == nil || cfg.Sampler == nil {
		return nil, errors.New("optim: model, data and sampler are required")
	}
	if !(cfg.LR > 0) || math.IsInf(cfg.LR, 0) {
		return nil, fmt.Errorf("optim: learning rate must be finite and > 0, got %v", cfg.LR)
	}
	if b, ok := cfg.Policy.(interface {
		Bind(aggregate.Aggregator) error
	}); ok {
		if err := b.Bind(cfg.Aggregator); err != nil {
			return nil, fmt.Errorf("optim: policy: %w", err)
		}
	}
	if v, ok := cfg.Policy.(interface{ Validate() error }); ok {
		if err := v.Validate(); err != nil {
			return nil, fmt.Errorf("optim: policy: %w", err)
		}
	}
	if c, ok := cfg.Aggregator.(aggregate.Clipping); ok {
		// R is stated once, by the rule.
		if r := c.ClipNorm(); cfg.ClipNorm == 0 {
			cfg.ClipNorm = r
		} else if cfg.ClipNorm != r {
			return nil, fmt.Errorf("optim: clipping norm R = %v given, but rule %s clips to R = %v: leave Config.ClipNorm 0 to take the rule's", cfg.ClipNorm, cfg.Aggregator.Name(), r)
		}
	}
	if cfg.ClipNorm < 0 || math.IsNaN(cfg.ClipNorm) || math.IsInf(cfg.ClipNorm, 0) {
		return nil, fmt.Errorf("optim: clipping norm must be finite and ≥ 0, got %v", cfg.ClipNorm)
	}
	if cfg.Data.Dim() != inputSize(cfg.Model.Spec()) {
		return nil, fmt.Errorf("optim: data has %d features per example but the model expects %d", cfg.Data.Dim(), inputSize(cfg.Model.Spec()))
	}
	t := &Trainer{cfg: cfg, p: cfg.Model.NumParams(), d: cfg.Data.Dim()}
	if cfg.Accountant != nil {
		if cfg.Aggregator == nil || cfg.ClipNorm <= 0 {
			return nil, errors.New("optim: a private run needs an aggregator and a clipping norm R > 0")
		}
		base, err := aggregate.PlannedMechanism(cfg.Aggregator)
		if err != nil {
			return nil, fmt.Errorf("optim: %w", err)
		}
		ps, ok := cfg.Sampler.(datasets.PoissonSubsampler)
		if !ok {
			return nil, fmt.Errorf("optim: a private run needs a Poisson sampler (datasets.PoissonSubsampler), got %T: the accounting assumes Poisson subsampling", cfg.Sampler)
		}
		if rate := ps.Rate(); cfg.Q == 0 {
			cfg.Q = rate
		} else if !(cfg.Q >= rate) {
			return nil, fmt.Errorf("optim: accounting rate q = %v is below the sampler's rate %v", cfg.Q, rate)
		}
		if !(cfg.Q > 0 && cfg.Q <= 1) {
			return nil, fmt.Errorf("optim: sampling rate q must be in (0, 1], got %v", cfg.Q)
		}
		if cfg.NoiseKey.IsZero() {
			return nil, errors.New("optim: a private run needs a noise key (randstream.NewSecret; randstream.FromSeed only for a reproducible run whose seed stays secret)")
		}
		if !(cfg.Delta > 0 && cfg.Delta < 1) {
			return nil, fmt.Errorf("optim: δ must be in (0, 1), got %v", cfg.Delta)
		}
		bound := cfg.Bound
		if bound == "" {
			bound = privacy.SubsampleAuto
		}
		t.mech = privacy.PoissonSubsampled{Base: base, Q: cfg.Q, Bound: bound, AllowUnproven: cfg.AllowUnproven}
		if err := t.mech.Validate(); err != nil {
			return nil, fmt.Errorf("optim: step mechanism: %w", err)
		}
	}
	t.cfg.Conversion = t.cfg.Conversion.OrDefault()
	if t.cfg.Workers <= 0 {
		t.cfg.Workers = runtime.GOMAXPROCS(0)
	}
	if err := cfg.Optimizer.Validate(); err != nil {
		return nil, fmt.Errorf("optim: %w", err)
	}
	if cfg.Accumulate < 0 {
		return nil, fmt.Errorf("optim: accumulation over %d physical batches (want ≥ 0; 0 or 1: none)", cfg.Accumulate)
	}
	if !cfg.Optimizer.IsPlain() {
		t.opt = newOptimizerState(cfg.Optimizer, t.p)
		t.gbuf = make([]float64, t.p)
	}
	t.out = make([]float32, t.p)
	return t, nil
}

// StepEpsilonTime is the time Step spent on the per-step ε of the PLD
// accountant (part of a run's accounting overhead).
func (t *Trainer) StepEpsilonTime() time.Duration { return t.boundTime }

// StepMechanism is the subsampled mechanism composed per private step (nil
// for non-private training).
func (t *Trainer) StepMechanism() privacy.Mechanism { return t.mech }

// budgetLimit caps the allowance computed by NextStepFits.
const budgetLimit = 1 << 24

// NextStepFits reports whether composing one more step keeps ε(δ) ≤ target
// at the run's δ (always true for non-private training). The first call
// for a target asks the accountant how many steps of the step mechanism
// fit (MaxSteps: a bisection on the composed RDP curve, or O(log n)
// PLD convolutions), later calls only count the steps composed since, so
// the check never re-convolves the history.
func (t *Trainer) NextStepFits(target float64) (bool, error) {
	return t.NextStepFitsWithin(target, budgetLimit)
}

// NextStepFitsWithin is NextStepFits for a run with at most horizon more
// steps (this one included): the accountant's search looks no further, so
// its cost follows the run's length, not the size of the budget (a huge
// target ε with --steps 2 is two cheap steps).
func (t *Trainer) NextStepFitsWithin(target float64, horizon int) (bool, error) {
	if t.cfg.Accountant == nil {
		return true, nil
	}
	horizon = min(max(horizon, 1), budgetLimit)
	steps := t.cfg.Accountant.Steps()
	done := steps - t.budgetBase
	// A cached answer capped at its horizon says nothing past that horizon.
	capped := t.budgetN >= t.budgetHorizon && steps+horizon > t.budgetBase+t.budgetHorizon
	if !t.budgetValid || t.budgetTarget != target || done < 0 || capped {
		n, err := t.cfg.Accountant.MaxSteps(t.mech, target, t.cfg.Delta, horizon)
		if err != nil {
			return false, fmt.Errorf("optim: budget check: %w", err)
		}
		t.budgetTarget, t.budgetBase, t.budgetN, t.budgetHorizon, t.budgetValid = target, steps, n, horizon, true
		done = 0
	}
	return done < t.budgetN, nil
}

// Step runs training step `step` (0-based): sample, gather, per-example
// gradients, corrupt, clip, aggregate, update and account.
//
// Clipping: a row whose computed norm n̂ satisfies n̂(1+e) ≤ R is kept as it
// is, any other is scaled by fl32(R(1−κ)/n̂), and every scaled row's norm is
// measured on the values actually summed and certified ≤ R before any noise
// is drawn (clipRows, clipMargin).
//
// Chunked sums: when the rule releases the plain sum of the clipped rows
// (aggregate.ChunkSummer: sum with float noise) and the model hands out its
// rows by chunk (model.ChunkVisitor: every built-in model), with no gradient
// corruption and no canaries, the step takes that sum inside the per-example
// pass (clipSumChunks): each of the model's chunks is summed in row order by
// the goroutine that computed it, and the chunk sums are added in chunk
// order (aggregate.ChunkSum), so the released bits do not depend on the
// number of workers; the M × P matrix is never written. Every other step
// keeps the matrix, and every other rule receives it through Aggregate,
// summed in row order where it sums.
func (t *Trainer) Step(step int) (StepResult, error) {
	idx := t.cfg.Sampler.Batch(step)
	m := len(idx)
	res := StepResult{Step: step, BatchSize: m}
	t.ensure(m)
	b := model.Batch{X: t.x[:m*t.d], M: m}
	if t.cfg.Labels {
		b.Labels = t.labels[:m]
	} else {
		b.Targets = t.targets[:m]
	}
	if err := t.cfg.Data.Gather(idx, b.X, b.Labels, b.Targets); err != nil {
		return res, fmt.Errorf("step %d: %w", step, err)
	}
	rng := StepRNG(t.cfg.Seed, step)
	if !t.cfg.NoiseKey.IsZero() {
		rng = t.cfg.NoiseKey.Stream("aggregate", uint64(step))
	}

	if t.cfg.Aggregator == nil {
		return t.plainStep(b, res)
	}
	var rep aggregate.Report
	var err error
	if cs, v, ok := t.chunkPath(m); ok {
		rep, err = t.clipSumChunks(b, cs, v, rng, &res)
	} else {
		rep, err = t.matrixAggregate(step, idx, b, rng, &res)
	}
	if err != nil {
		return res, fmt.Errorf("step %d: %w", step, err)
	}
	res.Rule, res.Trimmed = rep.Diagnostics, rep.Trimmed
	if t.cfg.Accountant != nil {
		// Record the cost as soon as the aggregate is released, before it is
		// used: a step can never be applied without being accounted.
		if err := t.cfg.Accountant.Compose(t.mech, 1); err != nil {
			return res, fmt.Errorf("step %d: accounting: %w", step, err)
		}
	}
	lr := t.cfg.LR
	if t.cfg.Policy != nil {
		lr = t.cfg.Policy.LearningRate(rep.Diagnostics, lr)
	}
	// The released sum is divided by the expected batch size, never by the
	// actual (private) one (Opacus' convention for Poisson sampling).
	if res.LR, err = t.apply(step, lr, t.cfg.Sampler.ExpectedBatchSize()); err != nil {
		return res, fmt.Errorf("step %d: update: %w", step, err)
	}
	if t.cfg.Accountant != nil {
		// The ε so far; on PLD a certified bound composed on a grid of
		// step counts and cached (privacy.EpsilonSoFar), capped at the
		// budget's allowance when one is planned.
		limit := 0
		if t.budgetValid {
			limit = t.budgetBase + t.budgetN
		}
		t0 := time.Now()
		eps, ahead, err := privacy.EpsilonSoFar(t.cfg.Accountant, t.cfg.Delta, limit)
		t.boundTime += time.Since(t0)
		if err != nil {
			return res, fmt.Errorf("step %d: accounting: %w", step, err)
		}
		res.Epsilon, res.Accountant = eps.Epsilon, t.cfg.Accountant.Kind()
		if ahead {
			res.EpsilonSteps = eps.Steps
		}
	}
	if t.cfg.Policy != nil {
		t.cfg.Policy.Observe(rep.Diagnostics)
	}
	return res, nil
}

// matrixAggregate is the step's gradient work on the M × P matrix of
// per-example gradients: compute it, corrupt the corrupted examples' rows,
// append the canaries, clip and aggregate (clipAndAggregate). It sets
// res.Loss and res.Corrupted.
func (t *Trainer) matrixAggregate(step int, idx []int, b model.Batch, rng *rand.Rand, res *StepResult) (aggregate.Report, error) {
	m := b.M
	if cap(t.grads) < m*t.p {
		t.grads = make([]float32, (m+m/4+1)*t.p)
	}
	g := t.grads[:m*t.p]
	// sq, when the model provides it, holds each row's sum of squares,
	// computed while the row was in cache (nil: clipRows computes it).
	var sq []float64
	if _, ok := t.cfg.Model.(model.PerExampleNormer); ok && m > 0 {
		sq = t.sq[:m]
	}
	if m > 0 {
		if err := t.perExampleGrads(b, g, sq); err != nil {
			return aggregate.Report{}, fmt.Errorf("per-example gradients: %w", err)
		}
	}
	if m > 0 {
		res.Loss = meanLoss(t.losses[:m])
	}
	if t.cfg.Corruption != nil {
		// The attacker's noise has its own stream, so that the privacy
		// noise of a step does not depend on which examples were corrupted.
		crng := StepRNG(DeriveSeed(t.cfg.Seed, "gradient-corruption"), step)
		for i, ex := range idx {
			if t.cfg.Corruption.IsCorrupted(ex) {
				if err := t.cfg.Corruption.CorruptGradient(ex, g[i*t.p:(i+1)*t.p], crng); err != nil {
					return aggregate.Report{}, err
				}
				if sq != nil {
					sq[i] = vec.SumSquares(g[i*t.p : (i+1)*t.p])
				}
				res.Corrupted++
			}
		}
	}
	if t.cfg.Canaries != nil {
		var err error
		if m, err = t.appendCanaries(step, m); err != nil {
			return aggregate.Report{}, err
		}
		g = t.grads[:m*t.p]
		sq = nil // clipRows measures every row, the canaries' too
	}
	return t.clipAndAggregate(g, m, sq, t.norms[:m], rng)
}

// meanLoss is the mean of the per-example losses (float64 sum in row
// order); losses must not be empty.
func meanLoss(losses []float32) float64 {
	var sum float64
	for _, l := range losses {
		sum += float64(l)
	}
	return sum / float64(len(losses))
}

// plainStep is non-private SGD on the batch-mean gradient.
func (t *Trainer) plainStep(b model.Batch, res StepResult) (StepResult, error) {
	if b.M == 0 {
		return res, nil
	}
	lossSum, err := t.batchGrad(b)
	if err != nil {
		return res, fmt.Errorf("step %d: batch gradient: %w", res.Step, err)
	}
	if n := rowNorm(t.out); math.IsNaN(n) || math.IsInf(n, 0) {
		return res, fmt.Errorf("step %d: batch gradient is not finite", res.Step)
	}
	res.Loss = lossSum / float64(b.M)
	if res.LR, err = t.apply(res.Step, t.cfg.LR, float64(b.M)); err != nil {
		return res, fmt.Errorf("step %d: update: %w", res.Step, err)
	}
	return res, nil
}

// apply turns t.out, the step's released sum, into the update at learning
// rate lr (before the schedule) with the sum divided by div, applies it
// and returns the learning rate used. Plain SGD scales t.out by
// fl32(lr/div) in float32, exactly as before optimizers existed; any other
// optimizer gets g = t.out/div in float64 (OptimizerConfig).
func (t *Trainer) apply(step int, lr, div float64) (float64, error) {
	if t.opt == nil {
		scale := float32(lr / div)
		for j := range t.out {
			t.out[j] *= scale
		}
		return lr, t.cfg.Model.Step(t.out)
	}
	lr *= t.cfg.Optimizer.LRFactor(step)
	for j, v := range t.out {
		t.gbuf[j] = float64(v) / div
	}
	var theta []float32
	if t.cfg.Optimizer.WeightDecay != 0 {
		theta = t.cfg.Model.Params()
	}
	t.opt.update(t.gbuf, theta, lr, t.out)
	return lr, t.cfg.Model.Step(t.out)
}

// OptimizerState returns the optimizer's state (update count and moments)
// for a checkpoint, or nil for plain SGD, which has none.
func (t *Trainer) OptimizerState() ([]byte, error) {
	if t.opt == nil {
		return nil, nil
	}
	return t.opt.marshal()
}

// RestoreOptimizerState restores a state written by OptimizerState. Plain
// SGD accepts only an empty state.
func (t *Trainer) RestoreOptimizerState(data []byte) error {
	if t.opt == nil {
		if len(data) != 0 {
			return errors.New("optim: optimizer state given for plain SGD, which has none")
		}
		return nil
	}
	if len(data) == 0 {
		return fmt.Errorf("optim: no state of optimizer %s to resume from", t.cfg.Optimizer.name())
	}
	if err := t.opt.unmarshal(data); err != nil {
		return fmt.Errorf("optim: optimizer state: %w", err)
	}
	return nil
}

// ensure grows the batch buffers to hold m examples.
func (t *Trainer) ensure(m int) {
	if cap(t.losses) >= m {
		return
	}
	n := m + m/4 + 1
	t.x = make([]float32, n*t.d)
	t.labels = make([]int, n)
	t.targets = make([]float32, n)
	t.losses = make([]float32, n)
	t.norms = make([]float64, n)
	t.sq = make([]float64, n)
	// t.grads (M × P) is allocated by matrixAggregate, the only path that
	// needs the matrix.
}

func inputSize(s model.Spec) int {
	n := 1
	for _, v := range s.InputShape {
		n *= v
	}
	return n
}
