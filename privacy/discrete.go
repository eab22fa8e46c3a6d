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
// sensitivity K (a positive integer): q(S) + Z with P(Z = z) ∝ e^{−|z|/(K·B)},
// so B is the scale relative to the sensitivity as for Laplace. K = 1 is
// the plain discrete Laplace; a query scaled by K (K·Δ for an integer Δ of
// sensitivity 1) with noise of scale K·B tends to the continuous Laplace
// mechanism as K grows, at the same exact-sampling cost.
//
// RDP, exact: neighbours shift the query by 0 or ±K, and by translation and
// the reflection z ↦ K−z both orders of the pair P = DL(0), Q = DL(K) give
// the same divergence. With a = 1/(K·B), r = e^{−a} and c = (1−r)/(1+r),
// E_P[(P/Q)^{α−1}] = Σ_z c·r^{α|z| + (1−α)|z−K|}, which splits into
//
//	z ≤ 0:       r^{(1−α)K}/(1−r)
//	0 < z < K:   r^{(1−α)K} · Σ_{z=1}^{K−1} r^{(2α−1)z}
//	z ≥ K:       r^{αK}/(1−r)
//
// and ε(α) = log(c·(sum))/(α−1), evaluated in log space. For K = 1 it is
// 1/(α−1)·log((e^{(α−1)/B} + e^{−α/B})/(1 + e^{−1/B})). It tends to the
// pure-DP value 1/B as α → ∞; for K = 1 it exceeds the continuous Laplace
// curve (Mironov 2017, Proposition 6) at large α, and it approaches that
// curve as K grows (tested).
type DiscreteLaplace struct {
	B float64
	K float64 // integer sensitivity of the query, 1 ≤ K ≤ 2³⁰
}

// Validate requires a finite B > 0 and an integer K in [1, 2³⁰].
func (l DiscreteLaplace) Validate() error {
	if !(l.B > 0) || math.IsInf(l.B, 0) {
		return fmt.Errorf("discrete-laplace mechanism: scale b must be finite and > 0, got %v", l.B)
	}
	return checkGranularity("discrete-laplace", l.K)
}

func checkGranularity(kind string, k float64) error {
	if !(k >= 1 && k <= 1<<30) || k != math.Trunc(k) {
		return fmt.Errorf("%s mechanism: sensitivity K must be an integer in [1, 2³⁰], got %v", kind, k)
	}
	return nil
}

// RDP returns the closed form above.
func (l DiscreteLaplace) RDP(alpha float64) (RDPValue, error) {
	if err := checkOrder(alpha); err != nil {
		return RDPValue{}, err
	}
	return RDPValue{Epsilon: discreteLaplaceRDP(alpha, l.B, l.K), Bound: "discrete-laplace-closed-form", Valid: true}, nil
}

// Spec describes the mechanism.
func (l DiscreteLaplace) Spec() Spec {
	return Spec{Kind: "discrete-laplace", Params: map[string]float64{"b": l.B, "k": l.K}}
}

// discreteLaplaceRDP is DiscreteLaplace's closed form in log space.
func discreteLaplaceRDP(alpha, b, k float64) float64 {
	a := 1 / (k * b)
	log1mr := math.Log(-math.Expm1(-a)) // log(1 − r)
	logc := log1mr - math.Log1p(math.Exp(-a))
	l1 := (alpha-1)*k*a - log1mr
	l3 := -alpha*k*a - log1mr
	sum := logAddExp(l1, l3)
	if k >= 2 {
		g := (2*alpha - 1) * a
		l2 := (alpha-1)*k*a - g + math.Log(-math.Expm1(-g*(k-1))) - math.Log(-math.Expm1(-g))
		sum = logAddExp(sum, l2)
	}
	return (logc + sum) / (alpha - 1)
}

// PTRDiscrete is PTR (see PTR) with a discrete-Laplace test on the integer
// K·Δ (Δ the safety margin, K an integer granularity) and discrete-Gaussian
// releases of integer queries: the TSGD+PTR step of aggregate.Secure.
// Parameters as in PTR, with Sigma1 and Tau·Sigma1 lower bounds on the two
// branches' σ_Z/GS, B the test's scale relative to Δ's sensitivity (noise
// of scale K·B on K·Δ), and Delta0 an upper bound on the test's false-pass
// probability Pr[Z > T] at its integer threshold T.
//
// RDP: Theorem 4.3 of Wang et al. (NeurIPS 2022) with the discrete curves:
//
//	ε(α) = max( f_α⁻¹((1−δ₀)·f_α(ε_N^{σ₁}(α)) + δ₀·f_α(ε_N^{σ₂}(α))),
//	            ε_N^{σ₁}(α) + ε_DLap^{b}(α) ),
//
// with ε_N^{σ}(α) = α/(2σ²) (CKS20 Theorem 14, for integer queries) and
// ε_DLap the DiscreteLaplace{B, K} curve. The proof (appendix A.1) uses the
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
	K      float64 // granularity of the test, an integer in [1, 2³⁰]
}

// Validate checks σ₁ > 0, 0 < τ ≤ 1, b > 0 and 0 < δ₀ ≤ 1/2.
func (p PTRDiscrete) Validate() error {
	if err := (PTR{Sigma1: p.Sigma1, Tau: p.Tau, B: p.B, Delta0: p.Delta0}).Validate(); err != nil {
		return fmt.Errorf("ptr-discrete: %w", err)
	}
	return checkGranularity("ptr-discrete", p.K)
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
	return RDPValue{Epsilon: math.Max(mix, e1+discreteLaplaceRDP(alpha, p.B, p.K)), Bound: "ptr-discrete-thm4.3", Valid: true}, nil
}

// Spec describes the mechanism.
func (p PTRDiscrete) Spec() Spec {
	return Spec{Kind: "ptr-discrete", Params: map[string]float64{
		"sigma1": p.Sigma1, "tau": p.Tau, "b": p.B, "delta0": p.Delta0, "k": p.K,
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
	p, err := specParams(s, "b", "k")
	if err != nil {
		return nil, err
	}
	return DiscreteLaplace{B: p[0], K: p[1]}, nil
}

func ptrDiscreteFromSpec(s Spec) (Mechanism, error) {
	p, err := specParams(s, "sigma1", "tau", "b", "delta0", "k")
	if err != nil {
		return nil, err
	}
	return PTRDiscrete{Sigma1: p[0], Tau: p[1], B: p[2], Delta0: p[3], K: p[4]}, nil
}
