package runner

import "github.com/privtrain/privtrain/aggregate"

// nonprivateRobustMethod is minibatch SGD with a robust aggregation rule
// (TrainConfig.Rule: any registered rule, run with σ = 0), for comparisons
// of robustness without privacy.
func nonprivateRobustMethod() Method {
	return Method{
		Name:    "nonprivate-robust",
		Summary: "minibatch SGD with a robust rule (--rule: coord-median, krum, geomed, …), no noise",
		Flags:   flags(SGDFlags(), []string{"rule", "cc-radius", "trim-fraction", "clip"}),
		Rule: func(c *TrainConfig, ac aggregate.Config) (string, aggregate.Config) {
			return c.Rule, ac
		},
		Validate: func(c *TrainConfig) error {
			if c.Rule == "" {
				return invalid("nonprivate-robust needs a rule (e.g. coord-median, krum, geomed)")
			}
			return nil
		},
	}
}
