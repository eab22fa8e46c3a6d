package main

import (
	"flag"
	"fmt"
	"io"
	"sort"

	"privtrain/experiments/privacyfigs"
)

// experimentRunner regenerates one named experiment into an output directory.
type experimentRunner struct {
	run   func(out string, stdout io.Writer) error
	brief string
}

func experimentRunners() map[string]experimentRunner {
	return map[string]experimentRunner{
		"privacy-figures": {runPrivacyFigures, "PTR paper Figures 1–5 (PNG + CSV of the plotted numbers)"},
	}
}

// runExperiment implements `trainer experiment NAME [--out DIR]`.
func runExperiment(args []string, stdout, stderr io.Writer) int {
	runners := experimentRunners()
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprintln(stderr, "usage: trainer experiment NAME [--out DIR]; experiments:")
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
	fs := flag.NewFlagSet("trainer experiment "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "out/"+args[0], "output directory")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	if err := r.run(*out, stdout); err != nil {
		fmt.Fprintf(stderr, "trainer experiment %s: %v\n", args[0], err)
		return 1
	}
	return 0
}

func runPrivacyFigures(out string, stdout io.Writer) error {
	files, err := privacyfigs.Generate(out)
	if err != nil {
		return err
	}
	for _, f := range files {
		fmt.Fprintln(stdout, f)
	}
	return nil
}
