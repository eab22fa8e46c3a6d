package privacy

import (
	"fmt"
	"math"
)

// Laplace is the Laplace mechanism with scale B relative to the L1
// sensitivity (noise Lap(0, B·Δ₁)); its pure-DP parameter is ε = 1/B.
//
// RDP (Mironov 2017, "Rényi Differential Privacy", Proposition 6), for α > 1:
//
//	ε(α) = 1/(α−1) · log( α/(2α−1) · e^{(α−1)/B} + (α−1)/(2α−1) · e^{−α/B} ),
//
// evaluated in log space so that large α/B does not overflow. Valid for every
// α > 1 and B > 0; it never exceeds the pure-DP bound 1/B.
type Laplace struct {
	B float64
}

// Validate requires a finite B > 0.
func (l Laplace) Validate() error {
	if !(l.B > 0) || math.IsInf(l.B, 0) {
		return fmt.Errorf("laplace mechanism: scale b must be finite and > 0, got %v", l.B)
	}
	return nil
}

// RDP returns Mironov's closed form (Proposition 6).
func (l Laplace) RDP(alpha float64) (RDPValue, error) {
	if err := checkOrder(alpha); err != nil {
		return RDPValue{}, err
	}
	return RDPValue{Epsilon: laplaceRDP(alpha, l.B), Bound: "laplace-closed-form", Valid: true}, nil
}

// Spec describes the mechanism.
func (l Laplace) Spec() Spec {
	return Spec{Kind: "laplace", Params: map[string]float64{"b": l.B}}
}

// laplaceRDP is Proposition 6 of Mironov (2017) in log space.
func laplaceRDP(alpha, b float64) float64 {
	a := math.Log(alpha/(2*alpha-1)) + (alpha-1)/b
	c := math.Log((alpha-1)/(2*alpha-1)) - alpha/b
	return logAddExp(a, c) / (alpha - 1)
}

// logAddExp returns log(e^a + e^b) without overflow.
func logAddExp(a, b float64) float64 {
	if math.IsInf(a, -1) {
		return b
	}
	if math.IsInf(b, -1) {
		return a
	}
	if a < b {
		a, b = b, a
	}
	return a + math.Log1p(math.Exp(b-a))
}
