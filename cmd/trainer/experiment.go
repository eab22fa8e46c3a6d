package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"

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
		"privacy-figures": {runPrivacyFigures, "PTR paper Figures 1–5 (PNG, SVG, PDF + CSV of the plotted numbers)"},
		"ptr-table":       {runPTRTable, "PTR paper Table 1 rows: TSGD+PTR vs TSGD+Gaussian vs DP-SGD under corruption (a grid: --plan, --cell, --jobs, --collect, --slurm)"},
		"pdp-table":       {runPDPTable, "personalized DP-SGD paper Table 1: five methods on MNIST and Fashion-MNIST (a grid)"},
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
		var ue usageError
		if errors.As(err, &ue) {
			return 2
		}
		return 1
	}
	return 0
}

func runPrivacyFigures(args []string, stdout, stderr io.Writer) error {
	out, err := parsePrivacyFigures(args, stderr)
	if err != nil {
		return err
	}
	files, err := privacyfigs.Generate(out)
	if err != nil {
		return err
	}
	for _, f := range files {
		fmt.Fprintln(stdout, f)
	}
	return nil
}

func parsePrivacyFigures(args []string, stderr io.Writer) (string, error) {
	fs := flag.NewFlagSet("trainer experiment privacy-figures", flag.ContinueOnError)
	fs.SetOutput(stderr)
	setUsage(fs, "trainer experiment privacy-figures [flags]")
	out := fs.String("out", "out/privacy-figures", "output directory")
	if err := fs.Parse(args); err != nil {
		return "", err
	}
	if fs.NArg() > 0 {
		return "", fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	return *out, nil
}
