package ridgegd

import (
	"fmt"
	"math"
)

// The RGM paper's text and the authors' public code differ on several
// choices (issue 27). The text's choices are the defaults; the code's are
// opt-in variants, named here, so that Figure 1 can be drawn under either
// protocol (rgmfig.Figure1Authors).

// ClipThreshold selects the base clipping threshold c_j of node j, computed
// from the per-example gradients at the node's local optimum θ_j*.
type ClipThreshold string

const (
	// ClipThresholdMax is the paper's text (Section 6, Appendix C.1):
	// c_j = max_i ‖∇f_ji(θ_j*)‖, the smallest threshold that clips nothing
	// at the optimum.
	ClipThresholdMax ClipThreshold = "max"
	// ClipThresholdFrobenius is the authors' code: the norm of the whole
	// per-example gradient matrix, c_j = √(Σ_i ‖∇f_ji(θ_j*)‖²) — between
	// max_i‖·‖ and √n_j times it (≈ 45× the text's c on ijcnn1's random
	// split).
	ClipThresholdFrobenius ClipThreshold = "frobenius"
)

// RGMNoise selects the noise the RGM adds to a node's mean gradient g.
type RGMNoise string

const (
	// RGMNoiseTheorem1 is the paper's mechanism: N(0, (γ‖g‖² + σ²)I) with
	// (γ, σ) calibrated by Theorem 1 to the per-step (α, ε)-RDP target.
	RGMNoiseTheorem1 RGMNoise = "theorem1"
	// RGMNoiseAuthors is the authors' code: standard deviation
	// √(α/ε)·(η‖g‖ + R_rel) per coordinate. This formula is NOT covered by
	// Theorem 1 (nor by the Gaussian mechanism's analysis, since the scale
	// depends on the private g): a run using it has no proven privacy
	// guarantee; it exists only to reproduce the authors' figure.
	RGMNoiseAuthors RGMNoise = "authors"
)

// AuthorsNoiseGuarantee is recorded in NodeReport.Guarantee for
// RGMNoiseAuthors.
const AuthorsNoiseGuarantee = "none proven: the authors' code's formula std = √(α/ε)(η‖g‖ + R_rel), not covered by Theorem 1; the target (α, ε) is nominal"

// clipBase returns c_j under rule (empty: ClipThresholdMax) from the squared
// per-example gradient norms at the local optimum.
func clipBase(rule ClipThreshold, norms2 []float64) (float64, error) {
	var c float64
	switch rule {
	case "", ClipThresholdMax:
		for _, v := range norms2 {
			c = math.Max(c, v)
		}
	case ClipThresholdFrobenius:
		for _, v := range norms2 {
			c += v
		}
	default:
		return 0, fmt.Errorf("unknown clipping threshold rule %q (want %q or %q)", rule, ClipThresholdMax, ClipThresholdFrobenius)
	}
	return math.Sqrt(c), nil
}

// authorsNoiseStd is the authors' code's RGM noise standard deviation
// √(α/ε)(η‖g‖ + R_rel) (RGMNoiseAuthors: no proven guarantee).
func authorsNoiseStd(eps, alpha, eta, rRel, gNorm float64) float64 {
	return math.Sqrt(alpha/eps) * (eta*gNorm + rRel)
}
