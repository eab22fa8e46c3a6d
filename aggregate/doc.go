// Package aggregate turns a batch of clipped per-example gradients into one
// released update (including any privacy noise) and reports what it did and
// which privacy mechanism the step was, for the accountant.
//
// Every rule implements Aggregator; adding a rule is one file plus one
// registration line: Register(name, constructor) in an init function, in
// this package or in any other (see examples/custom-aggregator). New builds
// a registered rule by name and Names lists them.
//
// A private rule states the mechanism its every release is by implementing
// Planned: that is the one statement of a run's step mechanism, which the
// trainer accounts (PlannedMechanism). A rule reports its own per-step
// record in Report.Diagnostics (its own type, with a release-safe Public
// part): ptr-tsum's PTRDiagnostics carry the typed test outcome PTROutcome.
// A rule states the clipping norm R it assumes by implementing Clipping (the
// trainer clips to it), and a rule with state across steps implements
// Stateful (a run checkpoints it) and Summarizer (its run statistics go to
// the summary), so the run needs no knowledge of which rule it drives.
//
// The private rules (sum, tsum, ptr-tsum) have a floating-point-safe mode,
// Config.Secure (secure.go): exact integer sums on a power-of-two grid,
// exactly rounded Gaussian noise and an exact Bernoulli PTR test bit, so the
// released float32 values are an exact function of the continuous
// mechanism's output (accounted as that mechanism: post-processing) and do
// not leak through their low-order bits. Their noise must come from a secret stream
// (package randstream).
package aggregate
