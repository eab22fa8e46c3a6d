// Package pdpsgd implements the personalized-privacy parts of PDP-SGD
// (Heo, Seo & Whang, "Personalized DP-SGD using Sampling Mechanisms";
// shared/papers/personalized-dp-sgd.md): per-example budgets Φ (from a file
// or generated as in the paper's appendix C.1), the personalized sampling
// rates of Definition 4.1, the thresholds τ minimising loss_f (Eq. 6) or
// loss_a (Eq. 7), and a per-example privacy Ledger that plans every round's
// noise multiplier (Algorithm 4, extended to personalized rates) and charges
// each example what the round cost it.
//
// Accounting. Inside a round every example i enters each DP-SGD step
// independently with probability q·π_i (the PDP sampler of appendix C.3),
// where q = batch/N. For the add/remove of example i, that step is the
// Poisson-subsampled Gaussian mechanism at rate q·π_i, whatever the other
// examples' rates are, because their inclusion is independent of i's and
// the rates are public (functions of the budgets and of earlier public
// choices only, never of the data). So example i is (α, ρ_i(α))-individual
// RDP with ρ_i the composition over all its steps (Mironov 2017, Prop. 1),
// and (ε_i, δ_i)-DP with ε_i from the RDP conversion (Theorem 4.8 of the
// paper; the Balle et al. 2020 conversion by default). This replaces the
// paper's ε-level argument (Theorem 4.2 for one round, Theorem 4.3 summing
// rounds), which needs one sampling per round, by an exact RDP composition
// that is valid for sampling inside every step, and gives Δ = {δ_i} instead
// of Theorem 4.5's R_max·δ.
//
// Examples with the same budget (ε_i, δ_i) have identical histories, so the
// Ledger keeps one accountant per distinct budget (a privacy class); a
// file with many distinct budgets costs one calibration per class per round.
package pdpsgd
