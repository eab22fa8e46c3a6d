package privacy

import (
	"fmt"
	"math"
)

// Mechanisms of the floating-point-safe release (aggregate.Secure): integer
// queries with exact discrete noise. Their curves are proven for the
// discrete distributions actually sampled (package exactnoise); Poisson
// subsampling of them is accounted by the general Zhu & Wang (2019) bound
// (PoissonSubsampled's "any other base" case), since the MTZ19 and
// Theorem 4.4 white-box bounds are proven only for continuous noise.

// DiscreteGaussian is the multivariate discrete Gaussian mechanism: an
// integer-vector query q with ‖q(S) − q(S')‖₂ ≤ Δ₂ on neighbours, released
// as q(S) + Y with Y_j ∼ N_Z(0, σ_Z²) independent; Sigma = σ_Z/Δ₂.
//
// RDP: Canonne, Kamath & Steinke, "The Discrete Gaussian for Differential
// Privacy" (NeurIPS 2020), Theorem 14 (multivariate discrete Gaussian):
// the mechanism is ½(Δ₂/σ_Z)²-concentrated DP, i.e. ε(α) = α/(2σ²) for
// every α > 1 — the continuous Gaussian's curve. Valid for every σ > 0 and
// any dimension; it requires the query to be integer-valued.
type DiscreteGaussian struct {
	Sigma float64
}

// Validate requires a finite σ > 0.
func (g DiscreteGaussian) Validate() error {
	if !(g.Sigma > 0) || math.IsInf(g.Sigma, 0) {
		return fmt.Errorf("discrete-gaussian mechanism: noise multiplier σ must be finite and > 0, got %v", g.Sigma)
	}
	return nil
}

// RDP returns α/(2σ²) (CKS20 Theorem 14).
func (g DiscreteGaussian) RDP(alpha float64) (RDPValue, error) {
	if err := checkOrder(alpha); err != nil {
		return RDPValue{}, err
	}
	return RDPValue{Epsilon: alpha / (2 * g.Sigma * g.Sigma), Bound: "discrete-gaussian-cks20-thm14", Valid: true}, nil
}

// Spec describes the mechanism.
func (g DiscreteGaussian) Spec() Spec {
	return Spec{Kind: "discrete-gaussian", Params: map[string]float64{"sigma": g.Sigma}}
}

// DiscreteLaplace is the discrete Laplace mechanism on an integer query of
// sensitivity 1: q(S) + Z with P(Z = z) ∝ e^{−|z|/B}.
//
// RDP, for α > 1, with r = e^{−1/B}:
//
//	ε(α) = 1/(α−1) · log( (e^{(α−1)/B} + e^{−α/B}) / (1 + e^{−1/B}) ).
//
// Derivation (exact, not a bound): for neighbours q(S') = q(S) ± 1 the pair
// of output laws is, up to translation and reflection z ↦ 1−z, P = DL(0)
// and Q = DL(1) in either order (both orders give the same value by that
// reflection). P(z)/Q(z) = e^{1/B} for z ≤ 0 and e^{−1/B} for z ≥ 1, and
// P(Z ≤ 0) = 1/(1+r), P(Z ≥ 1) = r/(1+r), so
// E_P[(P/Q)^{α−1}] = (e^{(α−1)/B} + r·e^{−(α−1)/B})/(1+r), which is the
// formula. It tends to the pure-DP value 1/B as α → ∞ and is larger than
// the continuous Laplace curve (Mironov 2017, Proposition 6) at large α.
type DiscreteLaplace struct {
	B float64
}

// Validate requires a finite B > 0.
func (l DiscreteLaplace) Validate() error {
	if !(l.B > 0) || math.IsInf(l.B, 0) {
		return fmt.Errorf("discrete-laplace mechanism: scale b must be finite and > 0, got %v", l.B)
	}
	return nil
}

// RDP returns the closed form above.
func (l DiscreteLaplace) RDP(alpha float64) (RDPValue, error) {
	if err := checkOrder(alpha); err != nil {
		return RDPValue{}, err
	}
	return RDPValue{Epsilon: discreteLaplaceRDP(alpha, l.B), Bound: "discrete-laplace-closed-form", Valid: true}, nil
}

// Spec describes the mechanism.
func (l DiscreteLaplace) Spec() Spec {
	return Spec{Kind: "discrete-laplace", Params: map[string]float64{"b": l.B}}
}

func discreteLaplaceRDP(alpha, b float64) float64 {
	num := logAddExp((alpha-1)/b, -alpha/b)
	return (num - logAddExp(0, -1/b)) / (alpha - 1)
}

// PTRDiscrete is PTR (see PTR) with a discrete-Laplace test on the integer
// safety margin Δ and discrete-Gaussian releases of integer queries: the
// TSGD+PTR step of aggregate.Secure. Parameters as in PTR, with Sigma1 and
// Tau·Sigma1 lower bounds on the two branches' σ_Z/GS, B the discrete
// Laplace scale, and Delta0 an upper bound on the test's false-pass
// probability Pr[Z > T] at its integer threshold T.
//
// RDP: Theorem 4.3 of Wang et al. (NeurIPS 2022) with the discrete curves:
//
//	ε(α) = max( f_α⁻¹((1−δ₀)·f_α(ε_N^{σ₁}(α)) + δ₀·f_α(ε_N^{σ₂}(α))),
//	            ε_N^{σ₁}(α) + ε_DLap^{b}(α) ),
//
// with ε_N^{σ}(α) = α/(2σ²) (CKS20 Theorem 14, for integer queries) and
// ε_DLap the DiscreteLaplace curve. The proof (appendix A.1) uses the
// releases only through Rényi-divergence bounds of each branch given the
// test's output (eqs. (14)–(18), (25)–(27): the discrete Gaussian's bound
// α‖μ−μ'‖²/(2σ_Z²) holds coordinate-wise and adds up, replacing the rotation
// trick), the test only through its RDP (eq. (32)) and its false-pass
// probability (eq. (23)–(24), where Pr[Z > T] ≤ δ₀ and f_α(ε_N^{σ₂}) ≥
// f_α(ε_N^{σ₁}) make the equality an upper bound), and σ₂ = τ·σ₁ only to
// bound the passed branch by ε_N^{σ₁} (eq. (30)), which holds whenever the
// passed branch's noise is at least τ·σ₁ relative to GS. Valid for the
// same parameter ranges as PTR.
type PTRDiscrete struct {
	Sigma1 float64
	Tau    float64
	B      float64
	Delta0 float64
}

// Validate checks σ₁ > 0, 0 < τ ≤ 1, b > 0 and 0 < δ₀ ≤ 1/2.
func (p PTRDiscrete) Validate() error {
	if err := (PTR{Sigma1: p.Sigma1, Tau: p.Tau, B: p.B, Delta0: p.Delta0}).Validate(); err != nil {
		return fmt.Errorf("ptr-discrete: %w", err)
	}
	return nil
}

// RDP returns the bound above.
func (p PTRDiscrete) RDP(alpha float64) (RDPValue, error) {
	if err := checkOrder(alpha); err != nil {
		return RDPValue{}, err
	}
	e1 := alpha / (2 * p.Sigma1 * p.Sigma1)
	s2 := p.Tau * p.Sigma1
	e2 := alpha / (2 * s2 * s2)
	am1 := alpha - 1
	mix := logAddExp(math.Log1p(-p.Delta0)+am1*e1, math.Log(p.Delta0)+am1*e2) / am1
	return RDPValue{Epsilon: math.Max(mix, e1+discreteLaplaceRDP(alpha, p.B)), Bound: "ptr-discrete-thm4.3", Valid: true}, nil
}

// Spec describes the mechanism.
func (p PTRDiscrete) Spec() Spec {
	return Spec{Kind: "ptr-discrete", Params: map[string]float64{
		"sigma1": p.Sigma1, "tau": p.Tau, "b": p.B, "delta0": p.Delta0,
	}}
}

func discreteGaussianFromSpec(s Spec) (Mechanism, error) {
	p, err := specParams(s, "sigma")
	if err != nil {
		return nil, err
	}
	return DiscreteGaussian{Sigma: p[0]}, nil
}

func discreteLaplaceFromSpec(s Spec) (Mechanism, error) {
	p, err := specParams(s, "b")
	if err != nil {
		return nil, err
	}
	return DiscreteLaplace{B: p[0]}, nil
}

func ptrDiscreteFromSpec(s Spec) (Mechanism, error) {
	p, err := specParams(s, "sigma1", "tau", "b", "delta0")
	if err != nil {
		return nil, err
	}
	return PTRDiscrete{Sigma1: p[0], Tau: p[1], B: p[2], Delta0: p[3]}, nil
}
