package privacy_test

import (
	"fmt"

	"github.com/privtrain/privtrain/privacy"
)

// Subsampled PTR: the white-box bound of Theorem 4.4 where it is proven, the
// Zhu & Wang black-box bound elsewhere; every order says which it used.
func ExamplePoissonSubsampled() {
	m := privacy.PoissonSubsampled{
		Base: privacy.PTR{Sigma1: 16, Tau: 0.5, B: 1, Delta0: 1e-8},
		Q:    0.01,
	}
	for _, alpha := range []float64{10, 40} {
		v, err := m.RDP(alpha)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("α=%v ε=%.4g bound=%s valid=%v\n", alpha, v.Epsilon, v.Bound, v.Valid)
	}
	// Output:
	// α=10 ε=0.0004561 bound=ptr-whitebox-thm4.4 valid=true
	// α=40 ε=0.003767 bound=zw19-blackbox valid=true
}

// The paper's MNIST setting (σ1 = 1.1) is outside Theorem 4.4's conditions.
func ExampleWhiteBoxConditions() {
	err := privacy.WhiteBoxConditions(256.0/60000, privacy.PTR{Sigma1: 1.1, Tau: 0.5, B: 1, Delta0: 1e-8}, 8)
	fmt.Println(err)
	// Output:
	// theorem 4.4 (white-box subsampled PTR) condition "sigma2>=4" fails: σ₂ = τ·σ₁ = 0.5·1.1 = 0.55 < 4
}

func ExamplePTRDirect() {
	eps, delta, err := privacy.PTRDirect(10, 1, 1e-8, 1e-5)
	fmt.Printf("(%.4f, %.4g) %v\n", eps, delta, err)
	// Output:
	// (1.4845, 1.001e-05) <nil>
}
