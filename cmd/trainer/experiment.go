package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"

	"github.com/privtrain/privtrain/experiments"
	"github.com/privtrain/privtrain/experiments/privacyfigs"
)

// experimentRunner regenerates one named experiment; it parses its own flags
// (args after the experiment's name).
type experimentRunner struct {
	run   func(args []string, stdout, stderr io.Writer) error
	brief string
}

func experimentRunners() map[string]experimentRunner {
	return map[string]experimentRunner{
		"privacy-figures": {runPrivacyFigures, "PTR paper Figures 1–5 (PNG + CSV of the plotted numbers)"},
		"ptr-table":       {runPTRTable, "PTR paper Table 1 rows: TSGD+PTR vs TSGD+Gaussian vs DP-SGD under corruption"},
	}
}

// runExperiment implements `trainer experiment NAME [--out DIR]`.
func runExperiment(args []string, stdout, stderr io.Writer) int {
	runners := experimentRunners()
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprintln(stderr, "usage: trainer experiment NAME [flags] (NAME -h lists its flags); experiments:")
		var names []string
		for n := range runners {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(stderr, "  %-18s %s\n", n, runners[n].brief)
		}
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	r, ok := runners[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "trainer experiment: unknown experiment %q\n", args[0])
		return 2
	}
	if err := r.run(args[1:], stdout, stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "trainer experiment %s: %v\n", args[0], err)
		return 1
	}
	return 0
}

func runPrivacyFigures(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("trainer experiment privacy-figures", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "out/privacy-figures", "output directory")
	if err := fs.Parse(args); err != nil {
		return err
	}
	files, err := privacyfigs.Generate(*out)
	if err != nil {
		return err
	}
	for _, f := range files {
		fmt.Fprintln(stdout, f)
	}
	return nil
}

func runPTRTable(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("trainer experiment ptr-table", flag.ContinueOnError)
	fs.SetOutput(stderr)
	t := experiments.PTRTable{}
	fs.StringVar(&t.Preset, "preset", "ptr-mnist", "hyper-parameter preset: ptr-mnist, ptr-emnist, ptr-cifar10")
	fs.StringVar(&t.DataDir, "data-dir", "", "data directory (default $PRIVTRAIN_DATA; MNIST needs none)")
	fs.Float64Var(&t.Epsilon, "epsilon", 3, "privacy budget ε of every run (δ = 1e-5)")
	methods := fs.String("methods", "tsgd-ptr,tsgd-gaussian,dpsgd", "comma-separated methods")
	corr := fs.String("corruptions", "label-flip:0.1,gradient-noise:0.2", "comma-separated KIND:RATIO settings")
	seeds := fs.String("seeds", "1", "comma-separated seeds")
	fs.Float64Var(&t.DPSGDSigma, "dpsgd-sigma", 0, "σ of the dpsgd baseline (0: the preset's Gaussian σ)")
	fs.StringVar(&t.Out, "out", "out/ptr-table", "output directory (finished runs in it are reused)")
	fs.StringVar(&t.Accountant, "accountant", "", "pld | rdp (default: pld for dpsgd and tsgd-gaussian, rdp for tsgd-ptr, which has no proven PLD)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	t.Methods = strings.Split(*methods, ",")
	for _, c := range strings.Split(*corr, ",") {
		kind, ratio, ok := strings.Cut(c, ":")
		r, err := strconv.ParseFloat(ratio, 64)
		if !ok || err != nil {
			return fmt.Errorf("corruption setting %q: want KIND:RATIO", c)
		}
		t.Corruptions = append(t.Corruptions, experiments.Corruption{Kind: kind, Ratio: r})
	}
	for _, s := range strings.Split(*seeds, ",") {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return fmt.Errorf("seed %q: %w", s, err)
		}
		t.Seeds = append(t.Seeds, v)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rows, err := experiments.RunPTRTable(ctx, t, stderr)
	if err != nil {
		return err
	}
	fmt.Fprint(stdout, experiments.PTRTableMarkdown(rows))
	return nil
}
