// Package optim owns privtrain's training step: sample → corrupt → per-example
// gradients → clip → aggregate → update → account. DP-SGD, TSGD+Gaussian,
// TSGD+PTR, PDP-SGD and the non-private methods are configurations of one loop.
//
// MakePrivate is the one-call entry point for library users (like Opacus'
// make_private): given a model, a dataset and (σ, R, q) or a target (ε, δ)
// with a number of steps, it returns a ready DP-SGD trainer.
package optim
