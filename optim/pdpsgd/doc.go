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
// What a round costs (AccountingRDP). In the paper's regime (σ ≈ 1,
// δ = 1e-5, q = 64/60000) the RDP-to-DP conversion has a floor: the ε of a
// composition is dominated by the large Rényi orders the conversion needs
// for log(1/δ)/(α − 1) to be small, where the subsampled Gaussian is far
// from its small-q quadratic regime. One step at σ = 1.1 already costs
// ε = 0.48, 938 steps 0.53, and 938 steps at rate q/4 still 0.42. So the
// Definition 4.1 rate π (made for Theorem 4.2's linear bound
// log(1 + π(e^τ − 1)) ≈ π·τ) barely lowers an example's RDP spend: in the
// first MNIST round (τ = 0.632) the class ε = 0.5 at π = 0.74 binds σ
// (1.10 instead of the 1.02 that τ alone needs), and every other class
// ends the round below its cap — the classes at π = 1 at 0.533, not τ.
// That is why classes sampled at π < 1 keep a small positive leftover.
// Plan retires them (see Plan): they were allotted their whole remaining
// budget, and keeping the accountant's slack is what made loss_a collapse.
//
// AccountingPaper (NewPaperLedger) is the paper's ε-level argument, made
// valid: D_R drawn once per round (Theorem 4.2 does not cover per-step
// personalized sampling), every eligible example charged — not only the
// sampled ones, as the paper's Algorithm 1 step 11 and its proof of
// Theorem 4.5 do, which is not a valid accounting — and δ_R = δ_i/k so that
// Δ = {δ_i} rather than Theorem 4.5's R_max·δ. It has no floor in π (a
// below-τ example spends its whole remaining budget with π < 1), but it
// composes rounds additively and each round's ε must be certified on its
// own: at δ/5 a round of 1876 steps cannot be certified below ε ≈ 0.13
// (the largest order, 63, leaves log(1/δ_R)/62 even as σ → ∞), so later
// rounds with small thresholds are impossible or very noisy. Which
// accounting trains the better model is an empirical question
// (docs/pdp-evidence.md). AccountingPLD (NewLedger with privacy.KindPLD) is the per-example
// argument of AccountingRDP on the PLD accountant (certified upper bounds
// of the exact per-example (ε_i, δ_i) curve, no RDP conversion floor); it
// is the default of privtrain's PDP methods, with σ calibration on a
// coarse search grid and a certified final check (privacy.CalibrateSigma).
//
// Examples with the same budget (ε_i, δ_i) have identical histories, so the
// Ledger keeps one accountant per distinct budget (a privacy class); a
// file with many distinct budgets costs one calibration per class per round.
package pdpsgd
