package runner

import "github.com/privtrain/privtrain/optim/pdpsgd"

// pdpAdaPDPMethod is AdaPDP (the PDP paper's Algorithm 2 baseline): rounds
// at a fixed σ, each training a fresh model until its spend reaches τ_T
// (--adapdp-rounds steps: rounds cut by length), released as the rounds'
// weighted ensemble.
func pdpAdaPDPMethod() Method {
	return Method{
		Name:    "pdp-adapdp",
		Summary: "AdaPDP: rounds at a fixed σ, one model per round, released as an ensemble",
		Family:  FamilyPDP,
		Flags:   pdpFlags("sigma", "adapdp-rounds"),
		pdp: &pdpVariant{ensemble: true, plan: func(c *TrainConfig, _ float64, _ int, req *pdpsgd.PlanRequest) {
			req.Sigma = c.Sigma
			req.UntilCaps = c.PDP.adaPDPToThreshold()
		}},
		Validate: func(c *TrainConfig) error {
			p := &c.PDP
			switch {
			case !(c.Sigma > 0) || !finite(c.Sigma):
				return invalid("pdp-adapdp runs at a fixed noise multiplier σ (> 0), got %v", c.Sigma)
			case p.AdaPDPRounds != "" && p.AdaPDPRounds != adaPDPThreshold && p.AdaPDPRounds != adaPDPSteps:
				return invalid("adapdp rounds apply to pdp-adapdp only and must be %s or %s, got %q for %s", adaPDPThreshold, adaPDPSteps, p.AdaPDPRounds, c.Method)
			}
			return nil
		},
	}
}
