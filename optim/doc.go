// Package optim owns privtrain's training step: sample → corrupt → per-example
// gradients → clip → aggregate → update → account. DP-SGD, TSGD+Gaussian,
// TSGD+PTR, PDP-SGD and the non-private methods are configurations of one loop.
//
// A private run (Config.Accountant set) requires a Poisson sampler by type
// (datasets.PoissonSubsampler, whose rate q the accounting uses) and a noise
// key (Config.NoiseKey, package randstream) for its privacy randomness.
package optim
