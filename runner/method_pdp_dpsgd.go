package runner

import "github.com/privtrain/privtrain/optim/pdpsgd"

// pdpDPSGDMethod is the PDP paper's DP-SGD baseline: one round of DP-SGD
// at the smallest budget's threshold for every example.
func pdpDPSGDMethod() Method {
	return Method{
		Name:    "pdp-dpsgd",
		Summary: "DP-SGD baseline of the PDP paper: every example at the smallest budget",
		Family:  FamilyPDP,
		Flags:   pdpFlags(),
		pdp: &pdpVariant{oneRound: true, plan: func(_ *TrainConfig, _ float64, _ int, req *pdpsgd.PlanRequest) {
			req.MinThreshold = true
		}},
	}
}
