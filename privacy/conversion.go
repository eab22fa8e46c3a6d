package privacy

import (
	"fmt"
	"math"
)

// Conversion names a theorem that turns an RDP guarantee into (ε, δ)-DP.
type Conversion string

const (
	// ConversionMironov is Proposition 3 of Mironov (2017), "Rényi
	// Differential Privacy": an (α, r)-RDP mechanism is (ε, δ)-DP with
	// ε = r + log(1/δ)/(α−1), for every α > 1 and 0 < δ < 1.
	ConversionMironov Conversion = "mironov"
	// ConversionBBG is Theorem 21 of Balle, Barthe, Gaboardi, Hsu & Sato
	// (2020), "Hypothesis Testing Interpretations and Rényi Differential
	// Privacy": an (α, r)-RDP mechanism is (ε, δ)-DP with
	// ε = r + log((α−1)/α) − (log δ + log α)/(α−1), for every α > 1 and
	// 0 < δ < 1. Its extra terms log((α−1)/α) − log(α)/(α−1) are negative
	// for α > 1, so it is always tighter than Mironov's; Opacus and
	// dp_accounting use it. Negative values are reported as ε = 0 (an
	// (ε', δ)-DP guarantee with ε' < 0 implies (0, δ)-DP).
	ConversionBBG Conversion = "bbg"
)

// DefaultConversion is the RDP → (ε, δ) conversion used wherever none is
// given (""): ConversionBBG, as Opacus and dp_accounting. It is stated here
// only; everything else calls OrDefault.
const DefaultConversion = ConversionBBG

// OrDefault returns c, or DefaultConversion when c is "".
func (c Conversion) OrDefault() Conversion {
	if c == "" {
		return DefaultConversion
	}
	return c
}

// Validate rejects unknown conversions.
func (c Conversion) Validate() error {
	switch c {
	case ConversionMironov, ConversionBBG:
		return nil
	}
	return fmt.Errorf("unknown rdp-to-dp conversion %q (want %q or %q)", string(c), ConversionMironov, ConversionBBG)
}

// epsilonAt is the conversion's ε at one order; +Inf when r is +Inf.
func (c Conversion) epsilonAt(alpha, r, logDelta float64) float64 {
	if math.IsInf(r, 1) {
		return math.Inf(1)
	}
	switch c {
	case ConversionMironov:
		return r - logDelta/(alpha-1)
	default: // ConversionBBG
		return math.Max(0, r+math.Log1p(-1/alpha)-(logDelta+math.Log(alpha))/(alpha-1))
	}
}

// logDeltaAt is the conversion's log δ at one order for a given ε (the
// inverse of epsilonAt), capped at log 1 = 0.
func (c Conversion) logDeltaAt(alpha, r, eps float64) float64 {
	if math.IsInf(r, 1) {
		return 0
	}
	var ld float64
	switch c {
	case ConversionMironov:
		ld = (alpha - 1) * (r - eps)
	default: // ConversionBBG
		ld = (alpha-1)*(r-eps+math.Log1p(-1/alpha)) - math.Log(alpha)
	}
	return math.Min(0, ld)
}

// checkCurve validates an RDP curve: equal non-zero lengths, orders finite
// and > 1, RDP values ≥ 0 and not NaN (+Inf is allowed: no bound there).
func checkCurve(orders, rdp []float64) error {
	if len(orders) != len(rdp) {
		return fmt.Errorf("%d orders but %d rdp values", len(orders), len(rdp))
	}
	if err := checkOrders(orders); err != nil {
		return err
	}
	for i, r := range rdp {
		if math.IsNaN(r) || r < 0 {
			return fmt.Errorf("rdp value #%d (α=%v) must be ≥ 0 and not NaN, got %v", i, orders[i], r)
		}
	}
	return nil
}

// EpsilonFromRDP converts an RDP curve (rdp[i] at orders[i]) into the
// smallest ε over the grid such that the mechanism is (ε, delta)-DP under
// conversion c, and returns the order attaining it. It requires
// 0 < delta < 1, orders > 1, equal lengths, and RDP values ≥ 0 (not NaN).
// ε is +Inf (with order NaN) when every order has an infinite RDP value.
func EpsilonFromRDP(orders, rdp []float64, delta float64, c Conversion) (eps, order float64, err error) {
	if err := c.Validate(); err != nil {
		return 0, 0, err
	}
	if !(delta > 0 && delta < 1) {
		return 0, 0, fmt.Errorf("epsilon from rdp: δ must be in (0, 1), got %v", delta)
	}
	if err := checkCurve(orders, rdp); err != nil {
		return 0, 0, fmt.Errorf("epsilon from rdp: %w", err)
	}
	eps, order = math.Inf(1), math.NaN()
	ld := math.Log(delta)
	for i, a := range orders {
		if e := c.epsilonAt(a, rdp[i], ld); e < eps {
			eps, order = e, a
		}
	}
	return eps, order, nil
}

// DeltaFromRDP converts an RDP curve into the smallest δ over the grid such
// that the mechanism is (eps, δ)-DP under conversion c (the inverse of
// EpsilonFromRDP), and returns the order attaining it. It requires eps > 0
// (finite), orders > 1, equal lengths and RDP values ≥ 0 (not NaN). δ is
// capped at 1 (order NaN when no order gives δ < 1).
func DeltaFromRDP(orders, rdp []float64, eps float64, c Conversion) (delta, order float64, err error) {
	if err := c.Validate(); err != nil {
		return 0, 0, err
	}
	if !(eps > 0) || math.IsInf(eps, 0) {
		return 0, 0, fmt.Errorf("delta from rdp: ε must be finite and > 0, got %v", eps)
	}
	if err := checkCurve(orders, rdp); err != nil {
		return 0, 0, fmt.Errorf("delta from rdp: %w", err)
	}
	best, order := 0.0, math.NaN()
	for i, a := range orders {
		if ld := c.logDeltaAt(a, rdp[i], eps); ld < best {
			best, order = ld, a
		}
	}
	return math.Exp(best), order, nil
}
