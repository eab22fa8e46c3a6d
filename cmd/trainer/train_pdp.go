package main

import (
	"flag"

	"github.com/privtrain/privtrain/runner"
)

// addPDPFlags registers the personalized-DP flags (pdp-* methods); their
// defaults are the library's (PDPConfig.FillDefaults).
func addPDPFlags(fs *flag.FlagSet, c *runner.PDPConfig) {
	c.FillDefaults()
	fs.StringVar(&c.ThresholdLoss, "threshold-loss", c.ThresholdLoss, "PDP threshold loss: fixed (loss_f with --w1, --w2) | adaptive (loss_a)")
	fs.Float64Var(&c.W1, "w1", c.W1, "PDP loss_f weight of the unsampled-budget waste (the paper: 0.7 for PDP-SGD, 0.2 for AdaPDP)")
	fs.Float64Var(&c.W2, "w2", c.W2, "PDP loss_f weight of the above-threshold waste (the paper: 0.3 for PDP-SGD, 0.8 for AdaPDP)")
	fs.IntVar(&c.Rounds, "rounds", c.Rounds, "PDP rounds k (pdp-dpsgd and pdp-sampling: one round of the same total length)")
	fs.Float64Var(&c.RoundEpochs, "round-epochs", c.RoundEpochs, "PDP epochs per round n (an epoch is N/batch steps; --steps overrides)")
	fs.StringVar(&c.BudgetsFile, "budgets", c.BudgetsFile, "PDP per-example budgets CSV: index,epsilon[,delta] (default: generated groups)")
	fs.IntVar(&c.BudgetGroups, "budget-groups", c.BudgetGroups, "PDP generated budgets: number of privacy groups")
	fs.Float64Var(&c.BudgetMin, "budget-min", c.BudgetMin, "PDP generated budgets: smallest ε")
	fs.Float64Var(&c.BudgetMax, "budget-max", c.BudgetMax, "PDP generated budgets: largest ε")
	fs.StringVar(&c.Accounting, "pdp-accounting", c.Accounting, "PDP accounting: pld (per-example PLD accountant, personalized Poisson rates in every step; --pld-interval) | rdp (the same on per-example RDP) | paper (Theorem 4.2 per round with D_R drawn once per round + Theorem 4.3 across rounds, δ_R = δ/k)")
	fs.Float64Var(&c.NoiseGuard, "noise-guard", c.NoiseGuard, "pdp-sgd: skip a round (and end the run) whose noise per expected participant σ/(q·Σπ) exceeds this many times the first round's; 0: off (the pdp-* presets: 4)")
	fs.StringVar(&c.AdaPDPRounds, "adapdp-rounds", c.AdaPDPRounds, "pdp-adapdp: threshold (each round runs until its spend reaches τ_T, Algorithm 2; the default) | steps (rounds cut at --round-epochs/--steps: the earlier, truncated variant)")
	fs.StringVar(&c.SamplingDraw, "sampling-draw", c.SamplingDraw, "pdp-sampling: per-step (rate q·π_i in every step; the default) | once (Definition B.1: D_s drawn once, DP-SGD on it at rate batch/Σπ_i, Theorem 4.2; needs --pdp-accounting paper)")
	fs.Float64Var(&c.BudgetK, "budget-k", c.BudgetK, "PDP generated budgets: skew k of counts ∝ c1·e^{kε}+c2 (0: uniform; ±0.2 use the paper's constants)")
}
