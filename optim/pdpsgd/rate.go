package pdpsgd

import "math"

// Rate returns the personalized sampling probability of Definition 4.1,
//
//	π(ε, τ) = (e^ε − 1)/(e^τ − 1) if ε < τ, else 1,
//
// for a remaining budget ε ≥ 0 and a threshold τ > 0; π(ε, τ) ∈ [0, 1] and
// 1 − π + π·e^τ = e^ε for ε < τ (the identity behind Theorem 4.2). It
// returns NaN for a negative or non-finite ε, or τ ≤ 0.
func Rate(eps, tau float64) float64 {
	if !(eps >= 0) || math.IsInf(eps, 0) || !(tau > 0) || math.IsInf(tau, 0) {
		return math.NaN()
	}
	if eps >= tau {
		return 1
	}
	return math.Expm1(eps) / math.Expm1(tau)
}
