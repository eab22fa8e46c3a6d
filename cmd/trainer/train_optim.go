package main

import (
	"flag"
	"strings"

	"github.com/privtrain/privtrain/optim"
	"github.com/privtrain/privtrain/runner"
)

// addOptimizerFlags adds the optimizer, schedule and accumulation flags
// (runner.OptimizerSettings; post-processing, docs/optimizers.md).
func addOptimizerFlags(fs *flag.FlagSet, o *runner.OptimizerSettings) {
	fs.StringVar(&o.Optimizer, "optimizer", o.Optimizer, "optimizer: "+strings.Join(optim.Optimizers(), " | ")+" (default sgd; post-processing: ε unchanged)")
	fs.Float64Var(&o.Momentum, "momentum", o.Momentum, "momentum μ of momentum and nesterov")
	fs.Float64Var(&o.Beta1, "beta1", o.Beta1, "Adam β₁ (0: 0.9)")
	fs.Float64Var(&o.Beta2, "beta2", o.Beta2, "Adam β₂ (0: 0.999)")
	fs.Float64Var(&o.AdamEps, "adam-eps", o.AdamEps, "Adam ε (0: 1e-8)")
	fs.Float64Var(&o.WeightDecay, "weight-decay", o.WeightDecay, "weight decay λ (coupled; decoupled for adamw)")
	fs.StringVar(&o.LRSchedule, "lr-schedule", o.LRSchedule, "learning-rate schedule: "+strings.Join(optim.Schedules(), " | ")+" (default constant)")
	fs.IntVar(&o.WarmupSteps, "warmup-steps", o.WarmupSteps, "linear warm-up steps before the schedule")
	fs.IntVar(&o.LRStepSize, "lr-step-size", o.LRStepSize, "step schedule: multiply the rate by --lr-gamma every N steps")
	fs.Float64Var(&o.LRGamma, "lr-gamma", o.LRGamma, "step schedule: the factor γ in (0, 1]")
	fs.IntVar(&o.LRDecaySteps, "lr-decay-steps", o.LRDecaySteps, "cosine schedule: steps until the rate reaches 0 (0: the run length)")
	fs.IntVar(&o.Accumulate, "accumulate", o.Accumulate, "compute each batch in N physical batches, one private release per batch (--batch-size stays the logical batch)")
}
