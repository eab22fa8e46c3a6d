package runner

// PDP defaults: the personalized-DP paper's settings where it states them
// (loss_f weights 0.7/0.3 for PDP-SGD, appendix C.2; budgets in [0.5, 1]
// over 20 groups, appendix C.1), per-example RDP accounting, and three
// rounds of two epochs.
const (
	defaultPDPThresholdLoss = "fixed"
	defaultPDPW1            = 0.7
	defaultPDPW2            = 0.3
	defaultPDPRounds        = 3
	defaultPDPRoundEpochs   = 2
	defaultPDPBudgetGroups  = 20
	defaultPDPBudgetMin     = 0.5
	defaultPDPBudgetMax     = 1
	defaultPDPAccounting    = "pld"
)

// FillDefaults sets every unset (zero) field of c that has a default: the
// threshold loss, the loss_f weights (only when both are zero), the rounds
// and epochs per round, the generated budgets' groups and range, and the
// accounting. Train applies it to every pdp-* run and the CLI to its flag
// defaults, so a library call and `trainer train` behave the same.
func (c *PDPConfig) FillDefaults() {
	if c.ThresholdLoss == "" {
		c.ThresholdLoss = defaultPDPThresholdLoss
	}
	if c.W1 == 0 && c.W2 == 0 {
		c.W1, c.W2 = defaultPDPW1, defaultPDPW2
	}
	if c.Rounds == 0 {
		c.Rounds = defaultPDPRounds
	}
	if c.RoundEpochs == 0 {
		c.RoundEpochs = defaultPDPRoundEpochs
	}
	if c.BudgetGroups == 0 {
		c.BudgetGroups = defaultPDPBudgetGroups
	}
	if c.BudgetMin == 0 {
		c.BudgetMin = defaultPDPBudgetMin
	}
	if c.BudgetMax == 0 {
		c.BudgetMax = defaultPDPBudgetMax
	}
	if c.Accounting == "" {
		c.Accounting = defaultPDPAccounting
	}
}
