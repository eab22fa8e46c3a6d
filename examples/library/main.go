// Command library trains the TF-Privacy CNN on MNIST with DP-SGD to a
// target (ε, δ), using privtrain as a library (README: "Use as a library").
package main

import (
	"fmt"
	"log"

	"github.com/privtrain/privtrain/datasets"
	"github.com/privtrain/privtrain/model"
	"github.com/privtrain/privtrain/optim"
	"github.com/privtrain/privtrain/runner"
)

func main() {
	const steps = 500
	train, err := datasets.Load("mnist", "train", "") // MNIST needs no data directory
	if err != nil {
		log.Fatal(err)
	}
	test, err := datasets.Load("mnist", "test", "")
	if err != nil {
		log.Fatal(err)
	}
	m, err := model.New(model.Spec{Arch: "tfp-cnn", InputShape: train.Shape, Classes: train.Classes}, 1)
	if err != nil {
		log.Fatal(err)
	}
	// Poisson sampling at q = 256/60000, clipping to R = 1, DP-SGD's noisy
	// sum (the secure, floating-point-safe release: FloatNoise opts out) and
	// the PLD accountant; σ is calibrated so that 500 steps are
	// (ε, δ) = (2, 1e-5)-DP. Give Sigma instead of TargetEpsilon to fix σ.
	p, err := optim.MakePrivate(m, train, optim.PrivateConfig{
		TargetEpsilon: 2, Delta: 1e-5, Steps: steps,
		BatchSize: 256, ClipNorm: 1, LR: 0.5, // secret noise key by default
	})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := p.Train(steps); err != nil {
		log.Fatal(err)
	}
	acc, err := runner.Accuracy(m, test.X, test.Labels, test.Dim())
	if err != nil {
		log.Fatal(err)
	}
	eps, err := p.Epsilon()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("σ = %.4f, secure noise %v, test accuracy %.2f%%, (ε, δ) = (%.3f, %g) by the %s accountant\n",
		p.Sigma, p.Secure, 100*acc, eps.Epsilon, eps.Delta, eps.Accountant)
}
