package runner

import "github.com/privtrain/privtrain/optim/pdpsgd"

// pdpVariant is what distinguishes the personalized-DP methods in the
// round loop (pdp_job.go).
type pdpVariant struct {
	// oneRound runs every step in one round (pdp-dpsgd, pdp-sampling).
	oneRound bool
	// ensemble trains a fresh model per round, released as their weighted
	// ensemble, with rounds run to τ_T unless cut (pdp-adapdp).
	ensemble bool
	// noiseGuard may skip a round whose noise per participant grew
	// (pdp-sgd).
	noiseGuard bool
	// plan fills the method's part of a round's plan request; n is the
	// training set size and q the base rate.
	plan func(c *TrainConfig, q float64, n int, req *pdpsgd.PlanRequest)
}

// pdpFlags are the flags every personalized-DP method uses.
func pdpFlags(own ...string) []string {
	return flags([]string{"clip", "delta", "conversion", "float-noise", "noise-key-file", "threshold-loss", "w1", "w2", "rounds",
		"round-epochs", "budgets", "budget-groups", "budget-min", "budget-max", "budget-k", "pdp-accounting"}, own)
}

// pdpMethods lists the personalized-DP training methods.
func pdpMethods() []string {
	return methodsWhere(func(m Method) bool { return m.Family == FamilyPDP })
}
