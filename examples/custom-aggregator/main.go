// Command custom-aggregator trains the TF-Privacy CNN on MNIST with a robust
// private aggregation rule defined in this module (package coordclip, the
// coordinate-clipped sum), through privtrain's public API only: the rule
// registers itself with aggregate.Register, optim.MakePrivate wires the
// Poisson sampler, clipping, the rule (its secure release by default,
// --float-noise for float noise) and the accountant, and the run prints its
// test accuracy and (ε, δ).
package main

import (
	"flag"
	"fmt"
	"math"
	"os"

	"github.com/privtrain/privtrain/datasets"
	"github.com/privtrain/privtrain/model"
	"github.com/privtrain/privtrain/optim"
	"github.com/privtrain/privtrain/randstream"
	"github.com/privtrain/privtrain/runner"

	"github.com/privtrain/privtrain/examples/custom-aggregator/coordclip"
)

func main() {
	steps := flag.Int("steps", 300, "training steps")
	sigma := flag.Float64("sigma", 1.1, "noise multiplier σ")
	clip := flag.Float64("clip", 1, "per-example L2 bound R")
	coord := flag.Float64("coord-clip", 0.004, "per-coordinate bound c of the coordinate-clipped sum")
	batch := flag.Int("batch-size", 256, "expected batch size (Poisson rate q = batch/N)")
	lr := flag.Float64("lr", 1.5, "learning rate (coordinate clipping shrinks the update; 0.6 suits --rule sum)")
	rule := flag.String("rule", coordclip.Name, "aggregation rule (e.g. sum, DP-SGD's, for comparison)")
	delta := flag.Float64("delta", 1e-5, "δ of the reported guarantee")
	seed := flag.Uint64("seed", 1, "public seed of the model initialization")
	reproducible := flag.Bool("reproducible-noise", false, "derive the sampling and noise from --seed too (the guarantee then assumes the seed stays secret); default: a secret key from the OS")
	float := flag.Bool("float-noise", false, "float noise instead of the secure (floating-point-safe) release, the default: the guarantee then does NOT hold against floating-point attacks (Mironov, CCS 2012)")
	flag.Parse()
	if err := run(*rule, *steps, *sigma, *clip, *coord, *batch, *lr, *delta, *seed, *reproducible, *float); err != nil {
		fmt.Fprintln(os.Stderr, "custom-aggregator:", err)
		os.Exit(1)
	}
}

func run(rule string, steps int, sigma, clip, coord float64, batch int, lr, delta float64, seed uint64, reproducible, float bool) error {
	train, err := datasets.Load("mnist", "train", datasets.ResolveDataDir(""))
	if err != nil {
		return err
	}
	test, err := datasets.Load("mnist", "test", datasets.ResolveDataDir(""))
	if err != nil {
		return err
	}
	m, err := model.New(model.Spec{Arch: "tfp-cnn", InputShape: train.Shape, Classes: train.Classes}, optim.DeriveSeed(seed, "init"))
	if err != nil {
		return err
	}
	var key randstream.Key // zero: MakePrivate draws a secret key
	if reproducible {
		key = randstream.FromSeed(seed)
		fmt.Println("warning: --reproducible-noise: the noise is a function of --seed; the guarantee holds only while the seed stays secret")
	}
	var opts map[string]float64 // the rule's own parameters
	if rule == coordclip.Name {
		opts = map[string]float64{coordclip.OptionC: coord}
	}
	p, err := optim.MakePrivate(m, train, optim.PrivateConfig{
		Rule:      rule,
		Options:   opts,
		Sigma:     sigma,
		ClipNorm:  clip,
		BatchSize: batch,
		Delta:     delta,
		LR:        lr,
		Key:       key,
		// The rule's secure release (through privtrain's secure sum) unless
		// --float-noise.
		FloatNoise: float,
	})
	if err != nil {
		return err
	}
	if p.Secure {
		fmt.Println("noise: secure (floating-point safe): exact integer sums on a power-of-two grid with exactly sampled noise")
	} else {
		fmt.Println("noise: WARNING: float noise (--float-noise): the guarantee does NOT hold against floating-point attacks (Mironov, CCS 2012)")
	}
	if cs, ok := p.Aggregator.(*coordclip.Sum); ok {
		sens := cs.Sensitivity(m.NumParams())
		fmt.Printf("rule %s: P = %d, c = %g, R = %g → sensitivity Δ = min(R, c√P) = %.4f (noise std σΔ = %.4f; DP-SGD's sum: σR = %.4f)\n",
			p.Aggregator.Name(), m.NumParams(), coord, clip, sens, sigma*sens, sigma*clip)
	} else {
		fmt.Printf("rule %s: P = %d, R = %g, noise std σR = %.4f\n", p.Aggregator.Name(), m.NumParams(), clip, sigma*clip)
	}
	for done := 0; done < steps; {
		n := min(100, steps-done)
		r, err := p.Train(n)
		if err != nil {
			return err
		}
		done += n
		g, err := p.Epsilon()
		if err != nil {
			return err
		}
		fmt.Printf("step %d: batch %d, loss %.4f, ε = %.4f\n", r.Step+1, r.BatchSize, r.Loss, g.Epsilon)
	}
	acc, err := runner.Accuracy(m, test.X, test.Labels, test.Dim())
	if err != nil {
		return err
	}
	eps, err := p.Epsilon()
	if err != nil {
		return err
	}
	if math.IsNaN(acc) {
		return fmt.Errorf("accuracy is NaN")
	}
	fmt.Printf("test accuracy: %.2f%% on %d MNIST test images\n", 100*acc, test.N)
	fmt.Printf("privacy: (ε, δ) = (%.4f, %g) after %d steps at q = %.6f, σ = %g (%s accountant: %s)\n",
		eps.Epsilon, eps.Delta, eps.Steps, p.Q, p.Sigma, eps.Accountant, eps.Detail)
	return nil
}
