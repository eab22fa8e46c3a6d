package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/privtrain/privtrain/internal/fileutil"
	"github.com/privtrain/privtrain/runner/report"
)

const reportUsage = `usage: trainer report [--out FILE.html] [--csv DIR] [--operator] RUN [RUN…]

Writes one self-contained HTML page (inline SVG, no scripts, no network) of
the run directories RUN…, overlaid for comparison: test accuracy and ε
against steps, the PTR pass rate and trim level F of TSGD+PTR runs, the
per-group spend of personalized-DP runs, and each run's configuration and
guarantee. It reads only the release-safe files (config.json, metrics.jsonl,
summary.json, ledger.csv) unless --operator is given.

  --out FILE   the HTML page (default report.html)
  --csv DIR    also write every curve as DIR/<run>/<curve>.csv
  --operator   add the operator-only values under private/ (training loss,
               exact batch sizes, PTR's Δ and Δ̂, timings); the page is then
               marked OPERATOR-ONLY: DO NOT PUBLISH
`

// reportArgs are the parsed arguments of `trainer report`.
type reportArgs struct {
	out, csvDir string
	operator    bool
	runs        []string
}

// parseReportArgs parses `trainer report` arguments; flags may come before
// or after the run directories. It returns flag.ErrHelp for --help.
func parseReportArgs(args []string) (reportArgs, error) {
	var a reportArgs
	fs := flag.NewFlagSet("trainer report", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(fs.Output(), reportUsage) }
	fs.StringVar(&a.out, "out", "report.html", "")
	fs.StringVar(&a.csvDir, "csv", "", "")
	fs.BoolVar(&a.operator, "operator", false, "")
	for {
		if err := parseArgs(fs, args); err != nil {
			return a, err
		}
		if fs.NArg() == 0 {
			break
		}
		a.runs, args = append(a.runs, fs.Arg(0)), fs.Args()[1:]
	}
	if len(a.runs) == 0 {
		return a, errors.New("no run directory given (usage: trainer report [--out FILE.html] [--csv DIR] [--operator] RUN [RUN…])")
	}
	if a.out == "" {
		return a, errors.New("--out must name a file")
	}
	return a, nil
}

// runReport implements `trainer report`: exit 0 on success, 2 on bad
// arguments or a run directory it cannot read, 1 when writing fails.
func runReport(args []string, stdout, stderr io.Writer) int {
	a, err := parseReportArgs(args)
	if printHelp(err, stdout) {
		return 0
	}
	if err != nil {
		msg := oneLine(err.Error())
		if !strings.Contains(msg, "--help") {
			msg += " (see trainer report --help)"
		}
		fmt.Fprintf(stderr, "trainer report: %s\n", msg)
		return 2
	}
	rep, err := report.New(a.runs, report.Options{Operator: a.operator})
	if err != nil {
		fmt.Fprintf(stderr, "trainer report: %s\n", oneLine(err.Error()))
		return 2
	}
	var page bytes.Buffer
	if err := rep.HTML(&page); err != nil {
		fmt.Fprintf(stderr, "trainer report: %s\n", oneLine(err.Error()))
		return 1
	}
	if err := fileutil.WriteAtomic(a.out, page.Bytes()); err != nil {
		fmt.Fprintf(stderr, "trainer report: %s\n", oneLine(err.Error()))
		return 1
	}
	fmt.Fprintf(stdout, "report: %s (%d run(s))\n", a.out, len(rep.Runs))
	if a.operator {
		fmt.Fprintln(stdout, "OPERATOR-ONLY: the page holds unprivatized values from private/; do not publish it")
	}
	if a.csvDir != "" {
		files, err := rep.WriteCSV(a.csvDir)
		if err != nil {
			fmt.Fprintf(stderr, "trainer report: %s\n", oneLine(err.Error()))
			return 1
		}
		fmt.Fprintf(stdout, "csv: %d file(s) in %s\n", len(files), a.csvDir)
	}
	return 0
}
