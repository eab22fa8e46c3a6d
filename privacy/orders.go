package privacy

import (
	"fmt"
	"math"
)

// DefaultOrders returns the Rényi orders Opacus and TF-Privacy use by default:
// 1.1, 1.2, …, 10.9 (each computed as 1 + x/10) followed by 12, 13, …, 63,
// so that results compare directly with those libraries. It returns a new
// slice on every call.
func DefaultOrders() []float64 {
	orders := make([]float64, 0, 99+52)
	for x := 1; x < 100; x++ {
		orders = append(orders, 1+float64(x)/10)
	}
	for a := 12; a < 64; a++ {
		orders = append(orders, float64(a))
	}
	return orders
}

// checkOrders rejects an empty grid and any order that is not a finite
// number > 1.
func checkOrders(orders []float64) error {
	if len(orders) == 0 {
		return fmt.Errorf("empty list of rényi orders")
	}
	for i, a := range orders {
		if !(a > 1) || math.IsInf(a, 0) {
			return fmt.Errorf("rényi order #%d must be finite and > 1, got %v", i, a)
		}
	}
	return nil
}
