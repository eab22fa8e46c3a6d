package privacy

import (
	"fmt"
	"math"
)

// PTR is Propose-Test-Release with Gaussian release (Algorithm 1 of Wang et
// al., "Renyi Differential Privacy of Propose-Test-Release and Applications to
// Private and Robust Machine Learning", NeurIPS 2022): a Laplace test of the
// safety margin Δ with scale B and threshold B·log(1/(2·Delta0)); on failure
// f₁(S)+N(0, σ₁²) is released, on success f₂(S)+N(0, σ₂²).
//
// Parameters are noise-to-sensitivity ratios with both global sensitivities
// normalized to 1: Sigma1 = σ₁ (SUM branch) and σ₂ = Tau·Sigma1 (the TSUM
// branch, where Tau = τ/R is the normalized trimmed-sum sensitivity).
//
// RDP (Theorem 4.3 of that paper), for every α > 1, with f_α(x) = e^{(α−1)x}:
//
//	ε(α) = max( f_α⁻¹((1−δ₀)·f_α(ε_N^{σ₁}(α)) + δ₀·f_α(ε_N^{σ₂}(α))),
//	            ε_N^{σ₁}(α) + ε_Lap^{b}(α) ),
//
// where ε_N^{σ}(α) = α/(2σ²) and ε_Lap^{b} is Mironov's Laplace RDP. The
// theorem assumes GS_{f₁} = GS_{f₂} = 1 and σ₁ = σ₂/τ, which this
// parameterization enforces; valid for 0 < Tau ≤ 1, B > 0, 0 < Delta0 ≤ 1/2
// (the test's false-pass probability Pr[Lap(0,b) > b·log(1/(2δ₀))] equals δ₀
// only when the threshold is ≥ 0, i.e. δ₀ ≤ 1/2).
type PTR struct {
	Sigma1 float64 // noise multiplier of the SUM (failure) branch
	Tau    float64 // normalized TSUM sensitivity τ/R, in (0, 1]
	B      float64 // Laplace scale of the test
	Delta0 float64 // failure probability of the test, in (0, 1/2]
}

// Sigma2 is the noise multiplier of the TSUM (success) branch, τ·σ₁.
func (p PTR) Sigma2() float64 { return p.Tau * p.Sigma1 }

// Validate checks σ₁ > 0, 0 < τ ≤ 1, b > 0 and 0 < δ₀ ≤ 1/2.
func (p PTR) Validate() error {
	switch {
	case !(p.Sigma1 > 0) || math.IsInf(p.Sigma1, 0):
		return fmt.Errorf("ptr mechanism: σ₁ must be finite and > 0, got %v", p.Sigma1)
	case !(p.Tau > 0 && p.Tau <= 1):
		return fmt.Errorf("ptr mechanism: normalized τ must be in (0, 1], got %v", p.Tau)
	case !(p.B > 0) || math.IsInf(p.B, 0):
		return fmt.Errorf("ptr mechanism: Laplace scale b must be finite and > 0, got %v", p.B)
	case !(p.Delta0 > 0 && p.Delta0 <= 0.5):
		return fmt.Errorf("ptr mechanism: δ₀ must be in (0, 1/2], got %v", p.Delta0)
	}
	return nil
}

// RDP returns the Theorem 4.3 bound.
func (p PTR) RDP(alpha float64) (RDPValue, error) {
	if err := checkOrder(alpha); err != nil {
		return RDPValue{}, err
	}
	e1 := alpha / (2 * p.Sigma1 * p.Sigma1)
	s2 := p.Sigma2()
	e2 := alpha / (2 * s2 * s2)
	am1 := alpha - 1
	mix := logAddExp(math.Log1p(-p.Delta0)+am1*e1, math.Log(p.Delta0)+am1*e2) / am1
	return RDPValue{Epsilon: math.Max(mix, e1+laplaceRDP(alpha, p.B)), Bound: "ptr-thm4.3", Valid: true}, nil
}

// Spec describes the mechanism.
func (p PTR) Spec() Spec {
	return Spec{Kind: "ptr", Params: map[string]float64{
		"sigma1": p.Sigma1, "tau": p.Tau, "b": p.B, "delta0": p.Delta0,
	}}
}
