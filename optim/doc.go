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
//
// Clipping: a row whose computed norm n̂ satisfies n̂(1+e) ≤ R is kept as it
// is, any other is scaled by fl32(R(1−κ)/n̂), and every scaled row's norm
// is measured on the values actually summed and certified ≤ R before any
// noise is drawn (clipRows, clipMargin). When the rule releases the plain
// sum of the clipped rows (aggregate.ChunkSummer: sum with float noise)
// and the model hands out its rows by chunk (model.ChunkVisitor: every
// built-in model), with no gradient corruption and no canaries, the step
// takes that sum inside the per-example pass (clipSumChunks): each of the
// model's chunks is summed in row order by the goroutine that computed it,
// and the chunk sums are added in chunk order (aggregate.ChunkSum), so
// the released bits do not depend on the number of workers; the M × P
// matrix is never written. Every other step keeps the matrix, and every
// other rule receives it through Aggregate, summed in row order where it
// sums.
package optim
