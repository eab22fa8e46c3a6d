package privacy

import (
	"fmt"
	"math"
)

// SubsampledGaussian is the Poisson-subsampled Gaussian mechanism of DP-SGD:
// every example enters the batch independently with probability Q and the
// sum of the (clipped) contributions is released with Gaussian noise of
// standard deviation Sigma times the L2 sensitivity.
//
// RDP (Mironov, Talwar & Zhang 2019, "Rényi Differential Privacy of the
// Sampled Gaussian Mechanism", Theorem 4 and Section 3.3): ε(α) = log(A_α)/(α−1)
// with A_α = E_{z∼μ₀}[(μ(z)/μ₀(z))^α], μ₀ = N(0, σ²), μ = (1−q)μ₀ + qN(1, σ²).
//
//   - Integer α ("mtz19-integer", Section 3.3): the exact binomial sum
//     A_α = Σ_{k=0..α} C(α,k) (1−q)^{α−k} q^k e^{(k²−k)/(2σ²)}.
//   - Fractional α ("mtz19-fractional", Section 3.3): the convergent series
//     A_α = A₀ + A₁ split at z₀ = σ² log(1/q − 1) + 1/2, with the signed
//     generalized binomial coefficients C(α,k) (negative terms subtracted), as
//     TF-Privacy and Opacus compute it, truncated once both terms are below
//     e^{−30} and k > α (TF-Privacy/Opacus omit the k > α guard, which can
//     stop the series too early for large α·q); it is not the absolute-value
//     series of newer dp_accounting releases, which is looser.
//   - When the fractional series cannot be evaluated (σ so small that its
//     terms overflow), the unsubsampled Gaussian's α/(2σ²), an upper bound
//     by the joint quasi-convexity of the Rényi divergence
//     (boundSubsampledGaussianFallback).
//   - q = 1 is the plain Gaussian α/(2σ²) ("gaussian-closed-form"); q = 0
//     releases nothing about the data: ε(α) = 0 ("subsampled-gaussian-q0").
//
// Valid for every α > 1, 0 ≤ q ≤ 1 and σ > 0 (the theorem holds for the
// add/remove-one adjacency that Poisson sampling uses). Everything is
// evaluated in log space, stable for orders up to several thousands.
type SubsampledGaussian struct {
	Q     float64 // sampling probability, in [0, 1]
	Sigma float64 // noise multiplier σ > 0
}

// Validate requires 0 ≤ Q ≤ 1 and a finite σ > 0.
func (m SubsampledGaussian) Validate() error {
	if !(m.Q >= 0 && m.Q <= 1) {
		return fmt.Errorf("subsampled gaussian mechanism: sampling rate q must be in [0, 1], got %v", m.Q)
	}
	if !(m.Sigma > 0) || math.IsInf(m.Sigma, 0) {
		return fmt.Errorf("subsampled gaussian mechanism: noise multiplier σ must be finite and > 0, got %v", m.Sigma)
	}
	return nil
}

// RDP returns the MTZ19 RDP at order alpha: the exact binomial sum at
// integer orders, the signed series at fractional ones.
func (m SubsampledGaussian) RDP(alpha float64) (RDPValue, error) {
	if err := checkOrder(alpha); err != nil {
		return RDPValue{}, err
	}
	if err := m.Validate(); err != nil {
		return RDPValue{}, err
	}
	switch {
	case m.Q == 0:
		return RDPValue{Epsilon: 0, Bound: "subsampled-gaussian-q0", Valid: true}, nil
	case m.Q == 1:
		return RDPValue{Epsilon: alpha / (2 * m.Sigma * m.Sigma), Bound: "gaussian-closed-form", Valid: true}, nil
	}
	var (
		logA  float64
		bound string
		err   error
	)
	if alpha == math.Trunc(alpha) && alpha <= 1<<20 {
		logA, bound = mtz19LogAInt(m.Q, m.Sigma, int(alpha)), "mtz19-integer"
	} else {
		logA, err = mtz19LogAFrac(m.Q, m.Sigma, alpha)
		bound = "mtz19-fractional"
	}
	if err != nil || math.IsNaN(logA) {
		// σ so small that the terms overflow (σ² underflows below
		// ~1e-154: 0/0): subsampling never raises the Rényi divergence,
		// which is jointly quasi-convex (van Erven & Harremoës 2014,
		// Theorem 13), so the unsubsampled Gaussian's α/(2σ²) (possibly
		// +Inf) bounds both directions.
		return RDPValue{Epsilon: alpha / (2 * m.Sigma * m.Sigma), Bound: boundSubsampledGaussianFallback, Valid: true}, nil
	}
	return RDPValue{Epsilon: math.Max(0, logA/(alpha-1)), Bound: bound, Valid: true}, nil
}

// Spec describes the mechanism.
func (m SubsampledGaussian) Spec() Spec {
	return Spec{Kind: "subsampled-gaussian", Params: map[string]float64{"q": m.Q, "sigma": m.Sigma}}
}

// boundSubsampledGaussianFallback names the unsubsampled Gaussian bound
// used when the MTZ19 fractional series cannot be evaluated.
const boundSubsampledGaussianFallback = "gaussian-closed-form(subsampling ignored: quasi-convexity)"

// mtz19LogAInt is log A_α for integer α ≥ 2 and 0 < q < 1 (MTZ19 §3.3),
// summed in log space.
func mtz19LogAInt(q, sigma float64, alpha int) float64 {
	lq, l1q := math.Log(q), math.Log1p(-q)
	a := float64(alpha)
	terms := make([]float64, alpha+1)
	mx := math.Inf(-1)
	for k := 0; k <= alpha; k++ {
		kf := float64(k)
		lb, _ := logAbsBinom(a, k)
		t := lb + kf*lq + (a-kf)*l1q + (kf*kf-kf)/(2*sigma*sigma)
		terms[k] = t
		mx = math.Max(mx, t)
	}
	var s float64
	for _, t := range terms {
		s += math.Exp(t - mx)
	}
	return mx + math.Log(s)
}

// mtz19MaxTerms bounds the fractional series; it converges long before for
// every order and σ of practical interest.
const mtz19MaxTerms = 10_000_000

// mtz19LogAFrac is log A_α for real α > 1 and 0 < q < 1 (MTZ19 §3.3): the
// series over k ≥ 0 of signed terms, with positive and negative parts
// accumulated separately in log space and subtracted at the end.
func mtz19LogAFrac(q, sigma, alpha float64) (float64, error) {
	lq, l1q := math.Log(q), math.Log1p(-q)
	s2 := sigma * sigma
	z0 := s2*(l1q-lq) + 0.5
	rs := math.Sqrt2 * sigma
	pos, neg := math.Inf(-1), math.Inf(-1)
	for k := 0; k < mtz19MaxTerms; k++ {
		lb, sign := logAbsBinom(alpha, k)
		if sign == 0 { // integer α and k > α: every further term is zero
			break
		}
		kf := float64(k)
		j := alpha - kf
		lt0 := lb + kf*lq + j*l1q
		lt1 := lb + j*lq + kf*l1q
		le0 := math.Log(0.5) + logErfc((kf-z0)/rs)
		le1 := math.Log(0.5) + logErfc((z0-j)/rs)
		ls0 := lt0 + (kf*kf-kf)/(2*s2) + le0
		ls1 := lt1 + (j*j-j)/(2*s2) + le1
		if math.IsNaN(ls0) || math.IsNaN(ls1) {
			return 0, fmt.Errorf("mtz19 fractional series: term %d is NaN (σ = %v too small for float64)", k, sigma)
		}
		if sign > 0 {
			pos = logAddExp(pos, logAddExp(ls0, ls1))
		} else {
			neg = logAddExp(neg, logAddExp(ls0, ls1))
		}
		// Stop once both terms are below e^{−30} (A_α ≥ 1, so this is a
		// relative tolerance) — but never before k > α: below α the terms
		// can start tiny and grow (e.g. q=0.3, σ=10, α=127.5, where stopping
		// at k=0 as TF-Privacy/Opacus do gives a negative "RDP"). Past α both
		// terms are non-increasing in k (MTZ19 §3.3).
		if kf > alpha && math.Max(ls0, ls1) < -30 {
			r := logSubExp(pos, neg)
			if math.IsNaN(r) {
				return 0, fmt.Errorf("mtz19 fractional series: negative sum (log pos %v < log neg %v)", pos, neg)
			}
			return r, nil
		}
	}
	r := logSubExp(pos, neg)
	if math.IsNaN(r) || math.IsInf(r, 0) {
		return 0, fmt.Errorf("mtz19 fractional series: no convergence after %d terms", mtz19MaxTerms)
	}
	return r, nil
}
