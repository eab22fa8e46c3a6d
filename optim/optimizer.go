package optim

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
)

// Optimizer names (OptimizerConfig.Name).
const (
	OptSGD      = "sgd"
	OptMomentum = "momentum"
	OptNesterov = "nesterov"
	OptAdam     = "adam"
	OptAdamW    = "adamw"
)

// Learning-rate schedules (OptimizerConfig.Schedule).
const (
	ScheduleConstant = "constant"
	ScheduleStep     = "step"
	ScheduleCosine   = "cosine"
)

// Optimizers lists the optimizer names; Schedules the schedule names.
func Optimizers() []string { return []string{OptSGD, OptMomentum, OptNesterov, OptAdam, OptAdamW} }
func Schedules() []string  { return []string{ScheduleConstant, ScheduleStep, ScheduleCosine} }

// OptimizerConfig chooses how each step's released gradient estimate is
// turned into a parameter update. Its zero value is plain SGD at the
// constant learning rate, computed exactly as before optimizers existed.
//
// Every optimizer here is post-processing of the released (privatized)
// sums: the update is a function of the releases so far, the public
// hyperparameters and the parameters (themselves such a function), so it
// changes neither the mechanism composed per step nor the number of steps
// (docs/optimizers.md). Conventions follow PyTorch's torch.optim.
type OptimizerConfig struct {
	// Name is one of Optimizers() ("" means sgd).
	Name string
	// Momentum is μ of momentum and nesterov (PyTorch SGD, dampening 0):
	// b ← μ·b + g; update lr·b (momentum) or lr·(g + μ·b) (nesterov).
	Momentum float64
	// Beta1, Beta2 and Eps are Adam's β₁, β₂ and ε (0: 0.9, 0.999, 1e-8).
	Beta1, Beta2, Eps float64
	// WeightDecay λ ≥ 0: coupled (g ← g + λθ) for sgd, momentum, nesterov
	// and adam; decoupled (θ ← θ − lr·λ·θ) for adamw.
	WeightDecay float64
	// Schedule is one of Schedules() ("" means constant). The factor
	// multiplies the learning rate of each step (after a Policy's branch
	// rate): see LRFactor.
	Schedule string
	// WarmupSteps W ≥ 0: steps 0 … W−1 scale the rate by (step+1)/W.
	WarmupSteps int
	// StepSize and Gamma: the step schedule multiplies by γ every StepSize
	// steps after warm-up.
	StepSize int
	Gamma    float64
	// DecaySteps T is the cosine schedule's horizon (counted from step 0,
	// warm-up included): the rate reaches 0 at step T and stays there.
	DecaySteps int
}

// IsPlain reports whether c is plain SGD at a constant rate (the zero
// value's behaviour).
func (c OptimizerConfig) IsPlain() bool {
	return (c.Name == "" || c.Name == OptSGD) && c.WeightDecay == 0 &&
		(c.Schedule == "" || c.Schedule == ScheduleConstant) && c.WarmupSteps == 0
}

func (c OptimizerConfig) name() string {
	if c.Name == "" {
		return OptSGD
	}
	return c.Name
}

func (c OptimizerConfig) adamParams() (b1, b2, eps float64) {
	b1, b2, eps = c.Beta1, c.Beta2, c.Eps
	if b1 == 0 {
		b1 = 0.9
	}
	if b2 == 0 {
		b2 = 0.999
	}
	if eps == 0 {
		eps = 1e-8
	}
	return b1, b2, eps
}

// Validate checks the names and ranges, and that no hyperparameter is set
// that the chosen optimizer or schedule would ignore.
func (c OptimizerConfig) Validate() error {
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	name := c.name()
	adam := name == OptAdam || name == OptAdamW
	switch name {
	case OptSGD, OptMomentum, OptNesterov, OptAdam, OptAdamW:
	default:
		return fmt.Errorf("unknown optimizer %q (known: sgd, momentum, nesterov, adam, adamw)", c.Name)
	}
	switch {
	case !finite(c.Momentum) || c.Momentum < 0 || c.Momentum >= 1:
		return fmt.Errorf("momentum must be in [0, 1), got %v", c.Momentum)
	case c.Momentum != 0 && name != OptMomentum && name != OptNesterov:
		return fmt.Errorf("momentum is used by the optimizers momentum and nesterov, not %s", name)
	case (name == OptMomentum || name == OptNesterov) && c.Momentum == 0:
		return fmt.Errorf("optimizer %s needs a momentum μ in (0, 1)", name)
	}
	for _, b := range []struct {
		n string
		v float64
	}{{"beta1", c.Beta1}, {"beta2", c.Beta2}} {
		if !finite(b.v) || b.v < 0 || b.v >= 1 {
			return fmt.Errorf("Adam's %s must be in [0, 1) (0: the default), got %v", b.n, b.v)
		}
	}
	if !finite(c.Eps) || c.Eps < 0 {
		return fmt.Errorf("Adam's ε must be finite and > 0 (0: the default 1e-8), got %v", c.Eps)
	}
	if !adam && (c.Beta1 != 0 || c.Beta2 != 0 || c.Eps != 0) {
		return fmt.Errorf("beta1, beta2 and the Adam ε are used by adam and adamw, not %s", name)
	}
	if !finite(c.WeightDecay) || c.WeightDecay < 0 {
		return fmt.Errorf("weight decay must be finite and ≥ 0, got %v", c.WeightDecay)
	}
	if c.WarmupSteps < 0 {
		return fmt.Errorf("warm-up steps must be ≥ 0, got %d", c.WarmupSteps)
	}
	sched := c.Schedule
	if sched == "" {
		sched = ScheduleConstant
	}
	switch sched {
	case ScheduleConstant:
	case ScheduleStep:
		if c.StepSize < 1 || !finite(c.Gamma) || !(c.Gamma > 0 && c.Gamma <= 1) {
			return fmt.Errorf("the step schedule needs a step size ≥ 1 and γ in (0, 1], got %d and %v", c.StepSize, c.Gamma)
		}
	case ScheduleCosine:
		if c.DecaySteps <= c.WarmupSteps {
			return fmt.Errorf("the cosine schedule needs a horizon T (decay steps) beyond the %d warm-up steps, got %d", c.WarmupSteps, c.DecaySteps)
		}
	default:
		return fmt.Errorf("unknown learning-rate schedule %q (known: constant, step, cosine)", c.Schedule)
	}
	if sched != ScheduleStep && (c.StepSize != 0 || c.Gamma != 0) {
		return fmt.Errorf("the step size and γ are used by the step schedule, not %s", sched)
	}
	if sched != ScheduleCosine && c.DecaySteps != 0 {
		return fmt.Errorf("decay steps are used by the cosine schedule, not %s", sched)
	}
	return nil
}

// LRFactor is the schedule's multiplier of the learning rate at step s
// (0-based). With warm-up W: (s+1)/W for s < W; after it, with u = s − W:
// constant 1; step γ^⌊u/StepSize⌋; cosine ½(1 + cos(π·min(u, T−W)/(T−W))).
func (c OptimizerConfig) LRFactor(s int) float64 {
	w := c.WarmupSteps
	if s < w {
		return float64(s+1) / float64(w)
	}
	u := s - w
	switch c.Schedule {
	case ScheduleStep:
		return math.Pow(c.Gamma, float64(u/c.StepSize))
	case ScheduleCosine:
		span := c.DecaySteps - w
		return 0.5 * (1 + math.Cos(math.Pi*float64(min(u, span))/float64(span)))
	}
	return 1
}

// optimizerState is the state of a non-plain optimizer: the number of
// updates applied and the moments (momentum buffer or Adam's first and
// second moments), in float64.
type optimizerState struct {
	cfg   OptimizerConfig
	t     int
	m, v  []float64
	theta []float32 // scratch: the parameters, for weight decay
}

func newOptimizerState(c OptimizerConfig, p int) *optimizerState {
	s := &optimizerState{cfg: c}
	switch c.name() {
	case OptMomentum, OptNesterov:
		s.m = make([]float64, p)
	case OptAdam, OptAdamW:
		s.m, s.v = make([]float64, p), make([]float64, p)
	}
	return s
}

// update turns g (the released gradient estimate: the noisy sum divided by
// the expected batch size) into the update written to out, θ ← θ − out,
// at learning rate lr (the schedule already applied). theta is the current
// parameters (nil when no weight decay is configured).
func (s *optimizerState) update(g []float64, theta []float32, lr float64, out []float32) {
	c := s.cfg
	s.t++
	wd := c.WeightDecay
	name := c.name()
	if wd != 0 && name != OptAdamW {
		for j := range g {
			g[j] += wd * float64(theta[j]) // coupled (L2) decay
		}
	}
	switch name {
	case OptSGD:
		for j := range g {
			out[j] = float32(lr * g[j])
		}
	case OptMomentum, OptNesterov:
		mu := c.Momentum
		for j := range g {
			s.m[j] = mu*s.m[j] + g[j]
			d := s.m[j]
			if name == OptNesterov {
				d = g[j] + mu*s.m[j]
			}
			out[j] = float32(lr * d)
		}
	case OptAdam, OptAdamW:
		b1, b2, eps := c.adamParams()
		c1 := 1 - math.Pow(b1, float64(s.t))
		c2 := 1 - math.Pow(b2, float64(s.t))
		for j := range g {
			s.m[j] = b1*s.m[j] + (1-b1)*g[j]
			s.v[j] = b2*s.v[j] + (1-b2)*g[j]*g[j]
			d := lr * (s.m[j] / c1) / (math.Sqrt(s.v[j]/c2) + eps)
			if name == OptAdamW && wd != 0 {
				d += lr * wd * float64(theta[j]) // decoupled decay
			}
			out[j] = float32(d)
		}
	}
}

// stateJSON is the optimizer state as stored in a checkpoint: the update
// count and each moment vector as base64 of little-endian IEEE-754 float64
// (exact, so a resumed run is bit-identical).
type stateJSON struct {
	Optimizer string `json:"optimizer"`
	Updates   int    `json:"updates"`
	M         string `json:"m,omitempty"`
	V         string `json:"v,omitempty"`
}

func encodeF64(x []float64) string {
	if x == nil {
		return ""
	}
	b := make([]byte, 8*len(x))
	for i, v := range x {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(v))
	}
	return base64.StdEncoding.EncodeToString(b)
}

func decodeF64(s string, dst []float64) error {
	if dst == nil {
		if s != "" {
			return fmt.Errorf("a moment the optimizer does not have")
		}
		return nil
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return err
	}
	if len(b) != 8*len(dst) {
		return fmt.Errorf("%d values, want %d", len(b)/8, len(dst))
	}
	for i := range dst {
		dst[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return nil
}

func (s *optimizerState) marshal() ([]byte, error) {
	return json.Marshal(stateJSON{Optimizer: s.cfg.name(), Updates: s.t, M: encodeF64(s.m), V: encodeF64(s.v)})
}

func (s *optimizerState) unmarshal(data []byte) error {
	var st stateJSON
	if err := json.Unmarshal(data, &st); err != nil {
		return err
	}
	if st.Optimizer != s.cfg.name() {
		return fmt.Errorf("the state is of optimizer %q, this run uses %q", st.Optimizer, s.cfg.name())
	}
	if st.Updates < 0 {
		return fmt.Errorf("negative update count %d", st.Updates)
	}
	if err := decodeF64(st.M, s.m); err != nil {
		return fmt.Errorf("first moment: %w", err)
	}
	if err := decodeF64(st.V, s.v); err != nil {
		return fmt.Errorf("second moment: %w", err)
	}
	s.t = st.Updates
	return nil
}
