// Package audit holds the statistics of empirical privacy audits: exact
// binomial confidence bounds (Clopper–Pearson), the lower bound on ε at δ
// implied by a distinguishing test's error rates, and the one-run audit's
// conversion of canary guesses into an ε lower bound.
//
// An audit turns observations of a mechanism into a statement "with
// probability at least 1 − α over the audit's own randomness, the mechanism
// is NOT (ε, δ)-DP for any ε below E". A correct mechanism claiming ε keeps
// E ≤ ε with that probability; an E above the claim is evidence of a bug in
// the implementation or in its analysis.
//
// The package is pure math on float64 (gonum for the beta and binomial
// functions), like its parent privacy: it knows nothing of aggregators,
// models or training. The experiments that feed it live in aggregate/audit
// (one-step mechanism audits) and in the trainer's run audit.
package audit
