// Package optim owns privtrain's training step: sample → corrupt → per-example
// gradients → clip → aggregate → update → account. DP-SGD, TSGD+Gaussian,
// TSGD+PTR, PDP-SGD and the non-private methods are configurations of one loop.
//
// MakePrivate is the one-call entry point for library users (like Opacus'
// make_private): given a model, a dataset and (σ, R, q) or a target (ε, δ)
// with a number of steps, it returns a ready DP-SGD trainer.
//
// A private run (Config.Accountant set) requires a Poisson sampler by type
// (datasets.PoissonSubsampler, whose rate q the accounting uses) and a noise
// key (Config.NoiseKey, package randstream) for its privacy randomness; the
// step mechanism it accounts is the aggregator's own plan
// (aggregate.Planned), stated nowhere else. The step loop does not know
// which rule runs: method-specific adaptation (TSGD+PTR's per-branch
// learning rates and dynamic trim level, PTRPolicy) is a StepPolicy.
package optim
