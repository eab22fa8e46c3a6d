package runner

import "github.com/privtrain/privtrain/aggregate"

// dpsgdMethod is DP-SGD (Abadi et al., CCS 2016): Poisson sampling, clipping
// to R and the sum with Gaussian noise σR (rule "sum").
func dpsgdMethod() Method {
	return Method{
		Name:    "dpsgd",
		Summary: "DP-SGD: Poisson sampling, clipping, Gaussian noise (rule sum)",
		Private: true,
		Flags:   flags(SGDFlags(), PrivateFlags()),
		Rule:    fixedRule("sum"),
	}
}

// fixedRule is Method.Rule for a method that always runs rule name with the
// run's configuration.
func fixedRule(name string) func(*TrainConfig, aggregate.Config) (string, aggregate.Config) {
	return func(_ *TrainConfig, ac aggregate.Config) (string, aggregate.Config) { return name, ac }
}
