// Package audit audits the one-step privacy claim of any registered private
// aggregation rule empirically.
//
// For a rule it builds worst-case neighbouring batches D, D′ (add/remove of
// one gradient) from the sensitivity analysis of the mechanism the rule
// reports — the Gaussian rules' add-one-gradient case, PTR's cases where the
// test is about to pass, where Δ = 0 and where the trimmed sum's local
// sensitivity sits at τ, the RGM's relative-sensitivity cases — draws N
// releases of each through the aggregate.Aggregator interface (in parallel,
// one aggregator instance per goroutine), chooses a distinguishing test on
// the first half of the releases and evaluates it on the second half, and
// converts the test's error rates into a lower confidence bound on ε at δ
// (privacy/audit). The result sits beside the accountant's one-step claim:
// an empirical ε above the claim is evidence of a bug.
//
// Tests are threshold events on a few statistics of the release: the
// projection on the difference of the two mean releases, the distances to
// each mean, every coordinate, and (Tests "all") the float32 granularity of
// the most-changed coordinate, which catches floating-point leaks of the
// kind Mironov (CCS 2012) showed for textbook Laplace noise.
package audit
