// Package pdpsgd is the personalized-privacy part of PDP-SGD (Heo, Seo &
// Whang, "Personalized DP-SGD using Sampling Mechanisms"): per-example
// budgets (Budget, GroupSpec), the personalized sampling rates of
// Definition 4.1, the thresholds τ of loss_f and loss_a (Loss), and the
// per-example privacy Ledger that plans each round's noise multiplier and
// charges every example what the round cost it (how: Accounting).
package pdpsgd
