package privacy

import (
	"fmt"
	"math"
)

// RGM is the Relative Gaussian Mechanism of Hendrikx, Mangold & Bellet, "The
// Relative Gaussian Mechanism and its Application to Private Gradient
// Descent" (AISTATS 2024, arXiv:2308.15250), Definition 3:
//
//	RGM_{γ,σ}(R)(x) = R(x) + N(0, (γ‖R(x)‖² + σ²) I_d),
//
// applied to a query R: D → ℝ^d that has (η, R_rel)-relative L2 sensitivity
// (Definition 2): for all neighbouring x ∼ y,
//
//	‖R(x) − R(y)‖² ≤ η²‖R(x)‖² + R_rel².
//
// Unlike the other mechanisms of this package its parameters are not
// normalized to a unit sensitivity: the relative sensitivity (Eta, RRel) of
// the released quantity is part of the mechanism, and the guarantee holds only
// if the caller's query really has it.
//
// RDP (Theorem 1 of that paper): for 1 ≤ α < (1+η)²/(2η+η²) and
// σ² ≥ γ η⁻² [1 − η(α−1)] R_rel², the mechanism is (α, ε)-RDP with
//
//	ε(α) = αη²/(2γ) · (1 + γ d (2+η)²(1+η)²) / (1 − η(α−1)(2+η)).
//
// Both conditions are checked by RDP at every order. Outside them RDP returns
// Epsilon = +Inf with Valid = false (bound "rgm-thm1-alpha-out-of-range" or
// "rgm-thm1-sigma-too-small"): an accountant must treat such an order as
// unusable, never as a finite guarantee. Theorem 1 admits no order above
// MaxOrder, so no finite ε exists there at all.
type RGM struct {
	// Eta is η > 0, the relative part of the sensitivity (Definition 2).
	Eta float64
	// RRel is R_rel ≥ 0, the absolute part of the sensitivity (Definition 2).
	RRel float64
	// Gamma is γ > 0, the relative noise scale: the noise variance grows by
	// γ‖R(x)‖².
	Gamma float64
	// Sigma is σ ≥ 0, the baseline noise standard deviation (variance σ²).
	Sigma float64
	// Dim is d ≥ 1, the dimension of R(x).
	Dim int
}

// Validate checks η > 0, R_rel ≥ 0, γ > 0, σ ≥ 0 (all finite) and d ≥ 1.
// The σ² lower bound of Theorem 1 depends on the order and is checked by RDP.
func (m RGM) Validate() error {
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	switch {
	case !(m.Eta > 0) || !finite(m.Eta):
		return fmt.Errorf("rgm mechanism: relative sensitivity η must be finite and > 0, got %v", m.Eta)
	case !(m.RRel >= 0) || !finite(m.RRel):
		return fmt.Errorf("rgm mechanism: absolute sensitivity term R_rel must be finite and ≥ 0, got %v", m.RRel)
	case !(m.Gamma > 0) || !finite(m.Gamma):
		return fmt.Errorf("rgm mechanism: relative noise scale γ must be finite and > 0, got %v", m.Gamma)
	case !(m.Sigma >= 0) || !finite(m.Sigma):
		return fmt.Errorf("rgm mechanism: baseline noise σ must be finite and ≥ 0, got %v", m.Sigma)
	case m.Dim < 1:
		return fmt.Errorf("rgm mechanism: output dimension d must be ≥ 1, got %d", m.Dim)
	}
	return nil
}

// MaxOrder returns (1+η)²/(2η+η²), the supremum of the orders covered by
// Theorem 1 (the order itself is excluded).
func (m RGM) MaxOrder() float64 {
	return rgmMaxOrder(m.Eta)
}

// MinSigma returns √(γ η⁻² [1 − η(α−1)] R_rel²), the smallest baseline σ
// for which Theorem 1 applies at order alpha (0 when 1 − η(α−1) ≤ 0).
func (m RGM) MinSigma(alpha float64) float64 {
	return rgmMinSigma(alpha, m.Eta, m.Gamma, m.RRel)
}

// RDP returns the Theorem 1 bound at order alpha, or +Inf with Valid = false
// when alpha ≥ MaxOrder or σ < MinSigma(alpha).
func (m RGM) RDP(alpha float64) (RDPValue, error) {
	if err := checkOrder(alpha); err != nil {
		return RDPValue{}, err
	}
	if err := m.Validate(); err != nil {
		return RDPValue{}, err
	}
	if !(alpha < m.MaxOrder()) {
		return RDPValue{Epsilon: math.Inf(1), Bound: "rgm-thm1-alpha-out-of-range", Valid: false}, nil
	}
	// Compare variances with a relative tolerance of a few ulps so that a σ
	// computed by CalibrateRGM from the same formula is accepted.
	need := m.MinSigma(alpha)
	if m.Sigma*m.Sigma < need*need*(1-1e-12) {
		return RDPValue{Epsilon: math.Inf(1), Bound: "rgm-thm1-sigma-too-small", Valid: false}, nil
	}
	return RDPValue{Epsilon: rgmEpsilon(alpha, m.Eta, m.Gamma, m.Dim), Bound: "rgm-thm1", Valid: true}, nil
}

// Spec describes the mechanism: kind "rgm" with params eta, r_rel, gamma,
// sigma and dim.
func (m RGM) Spec() Spec {
	return Spec{Kind: "rgm", Params: map[string]float64{
		"eta": m.Eta, "r_rel": m.RRel, "gamma": m.Gamma, "sigma": m.Sigma, "dim": float64(m.Dim),
	}}
}

// RGMFromSpec rebuilds an RGM from its Spec (kind "rgm"; a missing r_rel or
// sigma means 0) and validates it.
func RGMFromSpec(s Spec) (RGM, error) {
	if s.Kind != "rgm" {
		return RGM{}, fmt.Errorf("rgm mechanism: spec kind is %q, want \"rgm\"", s.Kind)
	}
	for _, k := range []string{"eta", "gamma", "dim"} {
		if _, ok := s.Params[k]; !ok {
			return RGM{}, fmt.Errorf("rgm mechanism: spec lacks parameter %q", k)
		}
	}
	d := s.Params["dim"]
	if d != math.Trunc(d) || d < 1 || d > math.MaxInt32 {
		return RGM{}, fmt.Errorf("rgm mechanism: dim must be an integer ≥ 1, got %v", d)
	}
	m := RGM{Eta: s.Params["eta"], RRel: s.Params["r_rel"], Gamma: s.Params["gamma"],
		Sigma: s.Params["sigma"], Dim: int(d)}
	if err := m.Validate(); err != nil {
		return RGM{}, err
	}
	return m, nil
}

// CalibrateRGM returns the RGM whose Theorem 1 bound at order alpha equals
// eps: solving eq. (5) for γ gives
//
//	1/γ = 2ε(1 − η(α−1)(2+η))/(αη²) − d(2+η)²(1+η)²,
//
// and σ is set to the smallest value Theorem 1 allows,
// σ² = γ η⁻² [1 − η(α−1)] R_rel² (Section 4.1, "Scale of the noise").
//
// It fails when alpha is outside Theorem 1's range or when eps is at or
// below the floor αη²d(2+η)²(1+η)²/(2(1 − η(α−1)(2+η))) that no γ can beat.
func CalibrateRGM(eps, alpha, eta, rRel float64, dim int) (RGM, error) {
	if !(eps > 0) || math.IsInf(eps, 0) {
		return RGM{}, fmt.Errorf("calibrate rgm: target ε must be finite and > 0, got %v", eps)
	}
	if err := checkOrder(alpha); err != nil {
		return RGM{}, fmt.Errorf("calibrate rgm: %w", err)
	}
	probe := RGM{Eta: eta, RRel: rRel, Gamma: 1, Dim: dim}
	if err := probe.Validate(); err != nil {
		return RGM{}, fmt.Errorf("calibrate rgm: %w", err)
	}
	if !(alpha < rgmMaxOrder(eta)) {
		return RGM{}, fmt.Errorf("calibrate rgm: order α = %v is outside Theorem 1's range [1, %v) for η = %v",
			alpha, rgmMaxOrder(eta), eta)
	}
	den := 1 - eta*(alpha-1)*(2+eta)
	k := (2 + eta) * (2 + eta) * (1 + eta) * (1 + eta)
	inv := 2*eps*den/(alpha*eta*eta) - float64(dim)*k
	if !(inv > 0) {
		floor := alpha * eta * eta * float64(dim) * k / (2 * den)
		return RGM{}, fmt.Errorf("calibrate rgm: ε = %v is not achievable at α = %v, η = %v, d = %d: Theorem 1 gives ε > %v for every γ",
			eps, alpha, eta, dim, floor)
	}
	g := 1 / inv
	m := RGM{Eta: eta, RRel: rRel, Gamma: g, Dim: dim}
	m.Sigma = m.MinSigma(alpha)
	return m, nil
}

// RGMEpsilonDelta is Corollary 1 of Hendrikx, Mangold & Bellet (AISTATS 2024):
// the mechanism is (ε, δ)-DP with
//
//	ε = χ + 2√(χ log(1/δ)),  χ = η²/γ + η² d (2+η)²(1+η)²,
//
// obtained from Theorem 1 at the order α* = 1 + √(log(1/δ)/χ) with Mironov's
// conversion (ε_RDP + log(1/δ)/(α−1)). Conditions, all checked: 0 < δ ≤ 1;
// γ ≤ 1/(4(2+η)² log(1/δ)) or d ≥ 4 log(1/δ)/(1+η)² (these put α* inside
// Theorem 1's range); and σ ≥ MinSigma(α*). It returns ε and the order α*.
func RGMEpsilonDelta(m RGM, delta float64) (eps, order float64, err error) {
	if err := m.Validate(); err != nil {
		return 0, 0, fmt.Errorf("rgm corollary 1: %w", err)
	}
	if !(delta > 0 && delta <= 1) {
		return 0, 0, fmt.Errorf("rgm corollary 1: δ must be in (0, 1], got %v", delta)
	}
	l := -math.Log(delta)
	eta := m.Eta
	d := float64(m.Dim)
	condGamma := m.Gamma <= 1/(4*(2+eta)*(2+eta)*l)
	condDim := d >= 4*l/((1+eta)*(1+eta))
	if !condGamma && !condDim {
		return 0, 0, fmt.Errorf("rgm corollary 1: needs γ ≤ 1/(4(2+η)² log(1/δ)) = %v or d ≥ 4 log(1/δ)/(1+η)² = %v; got γ = %v, d = %d",
			1/(4*(2+eta)*(2+eta)*l), 4*l/((1+eta)*(1+eta)), m.Gamma, m.Dim)
	}
	chi := eta*eta/m.Gamma + eta*eta*d*(2+eta)*(2+eta)*(1+eta)*(1+eta)
	order = 1 + math.Sqrt(l/chi)
	need := m.MinSigma(order)
	if m.Sigma*m.Sigma < need*need*(1-1e-12) {
		return 0, 0, fmt.Errorf("rgm corollary 1: σ = %v is below Theorem 1's minimum %v at the order α* = %v", m.Sigma, need, order)
	}
	return chi + 2*math.Sqrt(chi*l), order, nil
}

// rgmEpsilon is eq. (5) of Theorem 1.
func rgmEpsilon(alpha, eta, gamma float64, dim int) float64 {
	k := (2 + eta) * (2 + eta) * (1 + eta) * (1 + eta)
	den := 1 - eta*(alpha-1)*(2+eta)
	return alpha * eta * eta / (2 * gamma) * (1 + gamma*float64(dim)*k) / den
}

// rgmMaxOrder is (1+η)²/(2η+η²).
func rgmMaxOrder(eta float64) float64 {
	return (1 + eta) * (1 + eta) / (2*eta + eta*eta)
}

// rgmMinSigma is √(γ η⁻² [1 − η(α−1)] R_rel²), or 0 if the bracket is ≤ 0.
func rgmMinSigma(alpha, eta, gamma, rRel float64) float64 {
	br := 1 - eta*(alpha-1)
	if br <= 0 || rRel == 0 {
		return 0
	}
	return math.Sqrt(gamma*br) * rRel / eta
}

// NoiseStd returns √(γ‖R(x)‖² + σ²), the per-coordinate standard deviation
// of the noise that Definition 3 adds to an output of L2 norm norm.
func (m RGM) NoiseStd(norm float64) float64 {
	return math.Sqrt(m.Gamma*norm*norm + m.Sigma*m.Sigma)
}
