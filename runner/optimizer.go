package runner

import (
	"fmt"
	"math"

	"github.com/privtrain/privtrain/optim"
)

// OptimizerSettings are the optimizer, learning-rate schedule and gradient
// accumulation of a run of the SGD family (optim.OptimizerConfig,
// optim.Config.Accumulate). Embedded in TrainConfig, its keys are
// top-level keys of config files and config.json, each omitted when unset,
// so a run that sets none is configured (and stored) exactly as before.
// All are post-processing of the released sums: they change neither the
// step mechanism nor the number of steps (docs/optimizers.md).
type OptimizerSettings struct {
	// Optimizer is sgd (default), momentum, nesterov, adam or adamw.
	Optimizer string  `json:"optimizer,omitempty" yaml:"optimizer,omitempty"`
	Momentum  float64 `json:"momentum,omitempty" yaml:"momentum,omitempty"`
	Beta1     float64 `json:"beta1,omitempty" yaml:"beta1,omitempty"`
	Beta2     float64 `json:"beta2,omitempty" yaml:"beta2,omitempty"`
	AdamEps   float64 `json:"adam_eps,omitempty" yaml:"adam_eps,omitempty"`
	// WeightDecay is coupled for sgd, momentum, nesterov and adam,
	// decoupled for adamw.
	WeightDecay float64 `json:"weight_decay,omitempty" yaml:"weight_decay,omitempty"`
	// LRSchedule is constant (default), step or cosine, after WarmupSteps
	// steps of linear warm-up. LRDecaySteps is the cosine horizon; 0 means
	// the planned run length (Steps, or Epochs in steps), resolved into
	// config.json when the run starts.
	LRSchedule   string  `json:"lr_schedule,omitempty" yaml:"lr_schedule,omitempty"`
	WarmupSteps  int     `json:"warmup_steps,omitempty" yaml:"warmup_steps,omitempty"`
	LRStepSize   int     `json:"lr_step_size,omitempty" yaml:"lr_step_size,omitempty"`
	LRGamma      float64 `json:"lr_gamma,omitempty" yaml:"lr_gamma,omitempty"`
	LRDecaySteps int     `json:"lr_decay_steps,omitempty" yaml:"lr_decay_steps,omitempty"`
	// Accumulate N > 1 computes each (logical) batch's per-example
	// gradients in N physical batches, with one release per step.
	Accumulate int `json:"accumulate,omitempty" yaml:"accumulate,omitempty"`
}

// optimConfig is the optim form of the settings.
func (o OptimizerSettings) optimConfig() optim.OptimizerConfig {
	return optim.OptimizerConfig{
		Name: o.Optimizer, Momentum: o.Momentum, Beta1: o.Beta1, Beta2: o.Beta2, Eps: o.AdamEps,
		WeightDecay: o.WeightDecay, Schedule: o.LRSchedule, WarmupSteps: o.WarmupSteps,
		StepSize: o.LRStepSize, Gamma: o.LRGamma, DecaySteps: o.LRDecaySteps,
	}
}

func (o OptimizerSettings) isZero() bool { return o == OptimizerSettings{} }

// validateOptimizer checks the settings for a run of method (sgdFamily: a
// method trained by optim.Trainer with the shared loop).
func (c *TrainConfig) validateOptimizer(sgdFamily bool) error {
	o := c.OptimizerSettings
	if o.isZero() {
		return nil
	}
	if !sgdFamily {
		return fmt.Errorf("invalid configuration: optimizer, schedule and accumulation settings apply to nonprivate, dpsgd, tsgd-gaussian, tsgd-ptr and nonprivate-robust, not %s", c.Method)
	}
	if o.Accumulate < 0 || o.Accumulate > 1<<16 {
		return fmt.Errorf("invalid configuration: accumulate must be in [0, 65536] physical batches, got %d", o.Accumulate)
	}
	if o.WarmupSteps > 1<<30 || o.LRStepSize > 1<<30 || o.LRDecaySteps > 1<<30 || o.LRDecaySteps < 0 {
		return fmt.Errorf("invalid configuration: schedule step counts must be in [0, 2³⁰]")
	}
	if o.WeightDecay > maxScale {
		return fmt.Errorf("invalid configuration: weight decay %v is above %g", o.WeightDecay, maxScale)
	}
	oc := o.optimConfig()
	if oc.Schedule == optim.ScheduleCosine && oc.DecaySteps == 0 {
		oc.DecaySteps = math.MaxInt32 // resolved from the run length (resolveDecaySteps)
	}
	if err := oc.Validate(); err != nil {
		return fmt.Errorf("invalid configuration: %w", err)
	}
	return nil
}

// resolveDecaySteps sets the cosine horizon to the planned run length
// when it is unset: Steps, or Epochs in steps of the expected batch.
func (c *TrainConfig) resolveDecaySteps(n int, expected float64) error {
	if c.LRSchedule != optim.ScheduleCosine || c.LRDecaySteps != 0 {
		return nil
	}
	switch {
	case c.Steps > 0:
		c.LRDecaySteps = c.Steps
	case c.Epochs > 0:
		c.LRDecaySteps = int(math.Ceil(c.Epochs * float64(n) / expected))
	default:
		return fmt.Errorf("invalid configuration: the cosine schedule of a run bounded only by its target ε needs lr_decay_steps (--lr-decay-steps)")
	}
	if c.LRDecaySteps <= c.WarmupSteps {
		return fmt.Errorf("invalid configuration: the cosine schedule's horizon (%d steps, the run length) must exceed the %d warm-up steps", c.LRDecaySteps, c.WarmupSteps)
	}
	return nil
}

// OptimizerFlags are the command-line flags of OptimizerSettings, which
// every method of the SGD family uses (SGDFlags).
func OptimizerFlags() []string {
	return []string{"optimizer", "momentum", "beta1", "beta2", "adam-eps", "weight-decay",
		"lr-schedule", "warmup-steps", "lr-step-size", "lr-gamma", "lr-decay-steps", "accumulate"}
}
