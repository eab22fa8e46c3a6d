package privacy

import (
	"fmt"
)

// PersonalizedEpsilons turns individual RDP curves into a (Φ, Δ)-personalized
// DP guarantee (Theorem 4.8 of Heo et al., "Personalized DP-SGD", §4 and
// appendix D.4): if the mechanism is (α, ρ_i)-individual-RDP for example i,
// i.e. D_α(M(D) ‖ M(D^{−i})) ≤ ρ_i, it is (ε_i, δ)-DP for that example with
// ε_i = ρ_i + log(1/δ)/(α−1).
//
// perExampleRDP[i][j] is example i's individual RDP at orders[j] (≥ 0, +Inf
// allowed). Each example gets the smallest ε_i over the orders (the theorem
// holds at every order, and separately for every example) and its optimal
// order. c = ConversionMironov is the theorem as stated; c = ConversionBBG
// applies Balle et al. (2020, Theorem 21) to the same pair of output
// distributions instead, also valid and tighter. The same δ ∈ (0, 1) is
// used for every example (Δ = {δ, …, δ}).
func PersonalizedEpsilons(perExampleRDP [][]float64, orders []float64, delta float64, c Conversion) (eps, bestOrders []float64, err error) {
	if err := c.Validate(); err != nil {
		return nil, nil, fmt.Errorf("personalized epsilons: %w", err)
	}
	if !(delta > 0 && delta < 1) {
		return nil, nil, fmt.Errorf("personalized epsilons: δ must be in (0, 1), got %v", delta)
	}
	if err := checkOrders(orders); err != nil {
		return nil, nil, fmt.Errorf("personalized epsilons: %w", err)
	}
	eps = make([]float64, len(perExampleRDP))
	bestOrders = make([]float64, len(perExampleRDP))
	for i, rdp := range perExampleRDP {
		e, o, err := EpsilonFromRDP(orders, rdp, delta, c)
		if err != nil {
			return nil, nil, fmt.Errorf("personalized epsilons: example %d: %w", i, err)
		}
		eps[i], bestOrders[i] = e, o
	}
	return eps, bestOrders, nil
}
