package privacy

import (
	"fmt"
	"math"
)

// RDPValue is one point of a Rényi-DP curve: the mechanism is (α, Epsilon)-RDP.
type RDPValue struct {
	// Epsilon is the RDP parameter at the requested order; +Inf when no finite
	// bound is known at that order.
	Epsilon float64 `json:"epsilon"`
	// Bound names the bound that produced Epsilon (e.g. "gaussian-closed-form",
	// "mtz19-integer", "ptr-whitebox-thm4.4", "zw19-blackbox").
	Bound string `json:"bound"`
	// Valid is false when Epsilon comes from a bound used outside the
	// conditions under which it is proven (only possible on explicit opt-in).
	Valid bool `json:"valid"`
}

// Mechanism is a randomized mechanism described by its Rényi-DP curve.
//
// Implementations are small immutable values; Validate reports invalid
// parameters, and RDP must only be called on a mechanism that validated.
//
// Every bound states its source (paper, theorem) and its validity conditions
// in its doc comment, checks them at run time and reports, per order, which
// bound produced a value (RDPValue.Bound) and whether it is proven there
// (RDPValue.Valid). The built-in kinds: Gaussian, Laplace,
// SubsampledGaussian (MTZ19), PTR (Theorem 4.3), PoissonSubsampled (white-
// box Theorem 4.4 or Zhu & Wang 2019 black-box / lower bounds), RGM
// (relative Gaussian, Theorem 1). FromSpec rebuilds any registered kind from
// its Spec; Register adds a kind defined in another package, so an
// accountant can reload its history.
type Mechanism interface {
	// Validate checks the parameters (e.g. σ > 0) and returns a descriptive error.
	Validate() error
	// RDP returns the mechanism's RDP guarantee at order alpha (> 1).
	RDP(alpha float64) (RDPValue, error)
	// Spec describes the mechanism as data, for JSON history and reports.
	Spec() Spec
}

// Spec is the serializable description of a mechanism: its kind, its scalar
// parameters and, for wrappers such as subsampling, the inner mechanism.
type Spec struct {
	Kind   string             `json:"kind"`
	Params map[string]float64 `json:"params,omitempty"`
	Inner  *Spec              `json:"inner,omitempty"`
	// Options holds non-numeric settings (e.g. the subsampling bound choice).
	Options map[string]string `json:"options,omitempty"`
}

// Gaussian is the Gaussian mechanism with noise multiplier Sigma: noise of
// standard deviation Sigma times the L2 sensitivity.
//
// RDP (Mironov 2017, "Rényi Differential Privacy", Proposition 7):
// ε(α) = α / (2σ²), valid for every α > 1 and σ > 0.
type Gaussian struct {
	Sigma float64
}

// Validate requires a finite σ > 0.
func (g Gaussian) Validate() error {
	if !(g.Sigma > 0) || math.IsInf(g.Sigma, 0) {
		return fmt.Errorf("gaussian mechanism: noise multiplier σ must be finite and > 0, got %v", g.Sigma)
	}
	return nil
}

// RDP returns α/(2σ²).
func (g Gaussian) RDP(alpha float64) (RDPValue, error) {
	if err := checkOrder(alpha); err != nil {
		return RDPValue{}, err
	}
	return RDPValue{Epsilon: alpha / (2 * g.Sigma * g.Sigma), Bound: "gaussian-closed-form", Valid: true}, nil
}

// Spec describes the mechanism.
func (g Gaussian) Spec() Spec {
	return Spec{Kind: "gaussian", Params: map[string]float64{"sigma": g.Sigma}}
}

// checkOrder rejects orders that are not finite numbers > 1.
func checkOrder(alpha float64) error {
	if !(alpha > 1) || math.IsInf(alpha, 0) {
		return fmt.Errorf("rényi order α must be finite and > 1, got %v", alpha)
	}
	return nil
}
