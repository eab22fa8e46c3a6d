package runner

// tsgdGaussianMethod is TSGD+Gaussian (Wang et al., NeurIPS 2022): DP-SGD
// whose sum drops the F = round(TrimFraction·batch) largest-norm gradients
// (rule "tsum", sensitivity R).
func tsgdGaussianMethod() Method {
	return Method{
		Name:     "tsgd-gaussian",
		Summary:  "TSGD+Gaussian: DP-SGD with the trimmed sum (rule tsum)",
		Private:  true,
		Flags:    flags(SGDFlags(), PrivateFlags(), []string{"trim-fraction"}),
		Rule:     fixedRule("tsum"),
		Validate: (*TrainConfig).validateTrimFraction,
	}
}

// validateTrimFraction checks the trimmed methods' F/batch ∈ [0, 0.5).
func (c *TrainConfig) validateTrimFraction() error {
	if !(c.TrimFraction >= 0 && c.TrimFraction < 0.5) {
		return invalid("trim fraction F/batch must be in [0, 0.5), got %v", c.TrimFraction)
	}
	return nil
}
