package runner

import "github.com/privtrain/privtrain/optim/pdpsgd"

// pdpSamplingMethod is the PDP paper's Sampling baseline: one round at
// per-example rates; --sampling-draw once draws D_s once (Definition B.1)
// and runs DP-SGD on it at the public rate batch/Σπ_i.
func pdpSamplingMethod() Method {
	return Method{
		Name:    "pdp-sampling",
		Summary: "personalized sampling baseline: one round at per-example rates",
		Family:  FamilyPDP,
		Flags:   pdpFlags("sampling-draw"),
		pdp: &pdpVariant{oneRound: true, plan: func(c *TrainConfig, q float64, n int, req *pdpsgd.PlanRequest) {
			if c.PDP.SamplingDraw == samplingOnce {
				req.DrawnBatch = q * float64(n)
			}
		}},
		Validate: func(c *TrainConfig) error {
			p := &c.PDP
			switch {
			case p.SamplingDraw != "" && p.SamplingDraw != samplingPerStep && p.SamplingDraw != samplingOnce:
				return invalid("sampling draw applies to pdp-sampling only and must be %s or %s, got %q for %s", samplingPerStep, samplingOnce, p.SamplingDraw, c.Method)
			case p.SamplingDraw == samplingOnce && p.Accounting != string(pdpsgd.AccountingPaper):
				return invalid("pdp-sampling's one-time draw of D_s (Definition B.1) is accounted by Theorem 4.2 on the whole run: set --pdp-accounting paper (got %q)", p.Accounting)
			}
			return nil
		},
	}
}
