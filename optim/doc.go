// Package optim owns privtrain's training step: sample → corrupt → per-example
// gradients → clip → aggregate → update → account. DP-SGD, TSGD+Gaussian,
// TSGD+PTR, PDP-SGD and the non-private methods are configurations of one loop.
package optim
