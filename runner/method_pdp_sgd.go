package runner

// pdpSGDMethod is personalized DP-SGD (the PDP paper's Algorithm 1): rounds
// of DP-SGD at per-example Poisson rates π_i planned from the ledger's
// remaining budgets, one model throughout; the noise guard may end the run.
func pdpSGDMethod() Method {
	return Method{
		Name:    "pdp-sgd",
		Summary: "personalized DP-SGD: rounds at per-example rates from the budgets' ledger",
		Family:  FamilyPDP,
		Flags:   pdpFlags("noise-guard"),
		pdp:     &pdpVariant{noiseGuard: true},
	}
}
