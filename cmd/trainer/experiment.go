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

// experimentNames lists the experiments in lexical order.
func experimentNames() []string {
	var names []string
	for n := range experimentRunners() {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// runExperiment implements `trainer experiment NAME [--out DIR]`.
func runExperiment(args []string, stdout, stderr io.Writer) int {
	runners := experimentRunners()
	if len(args) == 0 || isHelpArg(args[0]) {
		w := stdout
		if len(args) == 0 {
			w = stderr
		}
		fmt.Fprintln(w, "usage: trainer experiment NAME [flags] (trainer help experiment NAME lists its flags); experiments:")
		names := experimentNames()
		for _, n := range names {
			fmt.Fprintf(w, "  %-18s %s\n", n, runners[n].brief)
		}
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	r, ok := runners[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "trainer experiment: %s\n", unknownName("experiment", args[0], experimentNames()))
		return 2
	}
	if err := r.run(args[1:], stdout, stderr); err != nil {
		if printHelp(err, stdout) {
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
		return asUsage(err)
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
	setUsage(fs, "trainer experiment privacy-figures [flags]")
	out := fs.String("out", "out/privacy-figures", "output directory")
	if err := parseArgs(fs, args); err != nil {
		return "", err
	}
	if fs.NArg() > 0 {
		return "", fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	return *out, nil
}
