// Command custom-accountant shows a privacy accountant added from outside
// privtrain: package finerdp (one file) registers "rdp-fine" with
// privacy.RegisterAccountant, and everything that chooses an accountant by
// name then uses it unchanged: the accounting questions of `trainer
// account` (ε for a history, σ for a target, through privacy.NewAccountant
// and privacy.CalibrateSigma) and a training run (runner.Train with
// TrainConfig.Accountant, what `trainer train --accountant` sets), whose
// checkpoint and summary record the accountant by name.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/privtrain/privtrain/privacy"
	"github.com/privtrain/privtrain/runner"

	"github.com/privtrain/privtrain/examples/custom-accountant/finerdp"
)

func main() {
	steps := flag.Int("steps", 20, "training steps of the demonstration run (0: accounting only)")
	out := flag.String("out", "", "run directory (default: a temporary one, removed afterwards)")
	flag.Parse()
	if err := run(*steps, *out); err != nil {
		fmt.Fprintln(os.Stderr, "custom-accountant:", err)
		os.Exit(1)
	}
}

func run(steps int, out string) error {
	fmt.Println("registered accountants:", privacy.AccountantNames())
	// `trainer account epsilon`: DP-SGD on MNIST (batch 256 of 60,000,
	// σ = 1.1, 60 epochs) at δ = 1e-5, on each accountant.
	const q, sigma, n, delta = 256.0 / 60000, 1.1, 14062, 1e-5
	for _, name := range []string{privacy.KindRDP, finerdp.Name, privacy.KindPLD} {
		a, err := privacy.NewAccountant(name, privacy.AccountantConfig{})
		if err != nil {
			return err
		}
		if err := a.Compose(privacy.SubsampledGaussian{Q: q, Sigma: sigma}, n); err != nil {
			return err
		}
		g, err := a.EpsilonFor(delta)
		if err != nil {
			return err
		}
		// `trainer account sigma`: the σ for ε = 3 over the same run.
		s, err := privacy.CalibrateSigma(privacy.CalibrationRequest{TargetEpsilon: 3, Delta: delta, Q: q, Steps: n, Accountant: name})
		if err != nil {
			return err
		}
		fmt.Printf("%-8s ε = %.4f after %d steps (%s); σ for ε = 3: %.5f\n", name, g.Epsilon, g.Steps, g.Detail, s)
	}
	if steps == 0 {
		return nil
	}
	// `trainer train --method dpsgd --accountant rdp-fine`.
	if out == "" {
		dir, err := os.MkdirTemp("", "custom-accountant-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		out = dir + "/run"
	}
	cfg := runner.TrainDefaults()
	runner.Presets()["ptr-mnist"](&cfg)
	cfg.Method, cfg.Sigma, cfg.Steps, cfg.Accountant, cfg.Out = "dpsgd", 0.7, steps, finerdp.Name, out
	sum, err := runner.Train(context.Background(), cfg, runner.Options{})
	if err != nil {
		return err
	}
	fmt.Printf("train: %s on %s, %d steps, test accuracy %.2f%%; (ε, δ) = (%.4f, %g) by the %s accountant at order %.4g\n",
		sum.Method, sum.Dataset, sum.Steps, 100*sum.TestAccuracy, sum.Epsilon, sum.Delta, sum.Accountant, sum.Order)
	return nil
}
