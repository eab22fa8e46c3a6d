package runner

import (
	"github.com/privtrain/privtrain/aggregate"
	"github.com/privtrain/privtrain/optim"
	"github.com/privtrain/privtrain/privacy"
)

// tsgdPTRMethod is TSGD+PTR (Wang et al., NeurIPS 2022, Algorithm 3): a
// Propose-Test-Release choice between the sum and the trimmed sum each
// step (rule "ptr-tsum"), with the branch learning rates of appendix A.4
// and the dynamic trim level of Remark 5.3 as its step policy.
func tsgdPTRMethod() Method {
	return Method{
		Name:    "tsgd-ptr",
		Summary: "TSGD+PTR: Propose-Test-Release between sum and trimmed sum (rule ptr-tsum)",
		Private: true,
		Flags: flags(SGDFlags(), PrivateFlags(), []string{"trim-fraction", "tau", "b", "delta0", "dynamic-f", "dynamic-f-rate",
			"dynamic-f-increase-on-pass", "lr-fail", "lr-pass", "bound"}),
		Rule:     fixedRule("ptr-tsum"),
		Policy:   ptrPolicy,
		Validate: (*TrainConfig).validatePTR,
	}
}

// ptrPolicy is TSGD+PTR's step policy (optim.PTRPolicy).
func ptrPolicy(c *TrainConfig, expected float64) optim.StepPolicy {
	pol := &optim.PTRPolicy{LRFail: c.LRFail, LRPass: c.LRPass}
	if c.DynamicF {
		pol.Trim = &optim.TrimController{Rate: c.DynamicRate, Batch: expected, IncreaseOnPass: c.DynamicIncreaseOnPass}
	}
	return pol
}

// validatePTR checks TSGD+PTR's settings: F/batch, 0 < τ < R, the
// white-box bound's conditions when asked for, b, δ₀ and the dynamic-F rate.
func (c *TrainConfig) validatePTR() error {
	if err := c.validateTrimFraction(); err != nil {
		return err
	}
	// τ is in gradient-norm units here (as --tau of `trainer train`).
	if err := aggregate.CheckPTRTau(c.Tau, c.ClipNorm); err != nil {
		return invalid("%v", err)
	}
	if err := c.validateWhiteBox(); err != nil {
		return err
	}
	switch {
	case !(c.LaplaceB > 0) || !finite(c.LaplaceB):
		return invalid("PTR Laplace scale b must be finite and > 0, got %v", c.LaplaceB)
	case !(c.Delta0 > 0 && c.Delta0 <= 0.5):
		return invalid("PTR δ₀ must be in (0, 1/2], got %v", c.Delta0)
	case c.DynamicF && !(c.DynamicRate > 0 && c.DynamicRate < 0.5):
		return invalid("dynamic F rate must be in (0, 0.5), got %v", c.DynamicRate)
	}
	return nil
}

// validateWhiteBox checks Theorem 4.4's conditions that do not depend on
// α (privacy.WhiteBoxConditions) when the white-box bound is asked for
// without --allow-unproven: σ₂ = σ·τ/R ≥ 4, and q's when q is set.
func (c *TrainConfig) validateWhiteBox() error {
	if c.Bound != string(privacy.SubsampleWhiteBox) || c.AllowUnproven {
		return nil
	}
	if s2 := c.Sigma * c.Tau / c.ClipNorm; s2 < 4 {
		return invalid("the white-box bound (Theorem 4.4) is proven only for σ₂ = σ·τ/R ≥ 4, got %v·%v/%v = %.4g: use --bound auto (falls back to the black-box bound) or --allow-unproven", c.Sigma, c.Tau, c.ClipNorm, s2)
	}
	if c.SamplingRate > 0 {
		if err := privacy.WhiteBoxConditions(c.SamplingRate, aggregate.PTRMechanism(c.aggregateConfig(0)), 2); err != nil {
			return invalid("the white-box bound (Theorem 4.4) does not hold: %v: use --bound auto or --allow-unproven", err)
		}
	}
	return nil
}
