package privacy_test

import (
	"encoding/json"
	"fmt"

	"github.com/privtrain/privtrain/privacy"
)

// DP-SGD on MNIST as in TF-Privacy's tutorial: 60 epochs of batches of 256
// out of 60000 examples with noise multiplier 1.1.
func ExampleAccountant() {
	acc, err := privacy.NewRDPAccountant(nil) // Opacus' default orders
	if err != nil {
		panic(err)
	}
	step := privacy.SubsampledGaussian{Q: 256.0 / 60000, Sigma: 1.1}
	for range 60 * 60000 / 256 {
		if err := acc.Compose(step, 1); err != nil { // cached after the first step
			panic(err)
		}
	}
	r, err := acc.Epsilon(1e-5, privacy.ConversionBBG)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d steps: (%.3f, %g)-DP at order %g\n", r.Steps, r.Epsilon, r.Delta, r.Order)

	// The JSON history restores an accountant that continues exactly.
	data, _ := json.Marshal(acc)
	var resumed privacy.RDPAccountant
	if err := json.Unmarshal(data, &resumed); err != nil {
		panic(err)
	}
	r2, _ := resumed.Epsilon(1e-5, privacy.ConversionBBG)
	fmt.Println("resumed identical:", r2.Epsilon == r.Epsilon)
	// Output:
	// 14062 steps: (2.597, 1e-05)-DP at order 8.1
	// resumed identical: true
}

func ExampleCalibrateSigma() {
	// Any registered accountant; "" is the default one (PLD here).
	for _, name := range []string{privacy.KindRDP, ""} {
		sigma, err := privacy.CalibrateSigma(privacy.CalibrationRequest{
			TargetEpsilon: 8, Delta: 1e-5, Q: 0.04, Steps: 2250, Accountant: name,
		})
		if err != nil {
			panic(err)
		}
		fmt.Printf("%q: σ = %.4f\n", name, sigma)
	}
	// Output:
	// "rdp": σ = 1.4158
	// "": σ = 1.3459
}

func ExampleStrongComposition() {
	eps, delta, err := privacy.StrongComposition(0.1, 1e-7, 100, 1e-5)
	if err != nil {
		panic(err)
	}
	fmt.Printf("100 × (0.1, 1e-7)-DP is (%.3f, %.3g)-DP (basic: 10)\n", eps, delta)
	// Output:
	// 100 × (0.1, 1e-7)-DP is (4.400, 2e-05)-DP (basic: 10)
}
