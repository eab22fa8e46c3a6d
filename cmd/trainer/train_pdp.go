package main

import (
	"flag"

	"github.com/privtrain/privtrain/experiments"
)

// addPDPFlags registers the personalized-DP flags (pdp-* methods).
func addPDPFlags(fs *flag.FlagSet, c *experiments.PDPConfig) {
	if c.W1 == 0 && c.W2 == 0 {
		c.W1, c.W2 = 0.7, 0.3 // the paper's loss_f weights for PDP-SGD
	}
	fs.StringVar(&c.ThresholdLoss, "threshold-loss", orDefault(c.ThresholdLoss, "fixed"), "PDP threshold loss: fixed (loss_f with --w1, --w2) | adaptive (loss_a)")
	fs.Float64Var(&c.W1, "w1", c.W1, "PDP loss_f weight of the unsampled-budget waste (the paper: 0.7 for PDP-SGD, 0.2 for AdaPDP)")
	fs.Float64Var(&c.W2, "w2", c.W2, "PDP loss_f weight of the above-threshold waste (the paper: 0.3 for PDP-SGD, 0.8 for AdaPDP)")
	fs.IntVar(&c.Rounds, "rounds", orDefaultI(c.Rounds, 3), "PDP rounds k (pdp-dpsgd and pdp-sampling: one round of the same total length)")
	fs.Float64Var(&c.RoundEpochs, "round-epochs", orDefaultF(c.RoundEpochs, 2), "PDP epochs per round n (an epoch is N/batch steps; --steps overrides)")
	fs.StringVar(&c.BudgetsFile, "budgets", c.BudgetsFile, "PDP per-example budgets CSV: index,epsilon[,delta] (default: generated groups)")
	fs.IntVar(&c.BudgetGroups, "budget-groups", orDefaultI(c.BudgetGroups, 20), "PDP generated budgets: number of privacy groups")
	fs.Float64Var(&c.BudgetMin, "budget-min", orDefaultF(c.BudgetMin, 0.5), "PDP generated budgets: smallest ε")
	fs.Float64Var(&c.BudgetMax, "budget-max", orDefaultF(c.BudgetMax, 1), "PDP generated budgets: largest ε")
	fs.StringVar(&c.Accounting, "pdp-accounting", orDefault(c.Accounting, "pld"), "PDP accounting: pld (per-example PLD accountant, personalized Poisson rates in every step; --pld-interval) | rdp (the same on per-example RDP) | paper (Theorem 4.2 per round with D_R drawn once per round + Theorem 4.3 across rounds, δ_R = δ/k)")
	fs.Float64Var(&c.BudgetK, "budget-k", c.BudgetK, "PDP generated budgets: skew k of counts ∝ c1·e^{kε}+c2 (0: uniform; ±0.2 use the paper's constants)")
}

func orDefault(v, d string) string {
	if v == "" {
		return d
	}
	return v
}

func orDefaultF(v, d float64) float64 {
	if v == 0 {
		return d
	}
	return v
}

func orDefaultI(v, d int) int {
	if v == 0 {
		return d
	}
	return v
}
