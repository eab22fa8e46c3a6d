package runner

import "testing"

func TestPDPFillDefaults(t *testing.T) {
	paper := PDPConfig{ThresholdLoss: "fixed", W1: 0.7, W2: 0.3, Rounds: 3, RoundEpochs: 2, BudgetGroups: 20, BudgetMin: 0.5, BudgetMax: 1, Accounting: "pld"}
	for _, c := range []struct {
		name    string
		in, out PDPConfig
	}{
		{"empty", PDPConfig{}, paper},
		{"set values stay", PDPConfig{ThresholdLoss: "adaptive", W1: 0.2, W2: 0.8, Rounds: 5, RoundEpochs: 1.5, BudgetGroups: 4, BudgetMin: 0.1, BudgetMax: 3, BudgetK: 0.2, BudgetsFile: "b.csv", Accounting: "paper"},
			PDPConfig{ThresholdLoss: "adaptive", W1: 0.2, W2: 0.8, Rounds: 5, RoundEpochs: 1.5, BudgetGroups: 4, BudgetMin: 0.1, BudgetMax: 3, BudgetK: 0.2, BudgetsFile: "b.csv", Accounting: "paper"}},
		// The weights default together: one given weight keeps the other at 0.
		{"one weight", PDPConfig{W1: 1}, func() PDPConfig { p := paper; p.W1, p.W2 = 1, 0; return p }()},
	} {
		got := c.in
		got.FillDefaults()
		if got != c.out {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.out)
		}
	}
}
