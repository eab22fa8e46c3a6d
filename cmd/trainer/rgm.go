package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/privtrain/privtrain/datasets"
	"github.com/privtrain/privtrain/experiments/rgmfig"
)

// rgmOptions are the parsed `trainer rgm-gd` flags: the experiment's own
// (rgmfig.GDFlags) and the CLI's (output, --figure).
type rgmOptions struct {
	rgmfig.GDFlags
	dataDir, out, format, protocol string
	figure                         bool
	workers                        int
	set                            map[string]bool
}

// parseRGM parses and checks every rgm-gd flag before any data is loaded;
// code ≥ 0 means stop with that exit code (0: -h).
func parseRGM(args []string, stdout, stderr io.Writer) (o rgmOptions, code int) {
	fs := flag.NewFlagSet("trainer rgm-gd", flag.ContinueOnError)
	setUsage(fs, "trainer rgm-gd --out DIR [--data-dir DIR] [flags]   (ijcnn1 from --data-dir or $"+datasets.DataDirEnv+")")
	fs.StringVar(&o.dataDir, "data-dir", "", "data directory holding ijcnn1/ (default: $"+datasets.DataDirEnv+")")
	fs.StringVar(&o.out, "out", "", "output directory (required)")
	fs.BoolVar(&o.figure, "figure", false, "reproduce Figure 1 (ε = 0.1) and the Appendix D ijcnn1 panel (ε = 1e-3) into --out; only --data-dir, --out, --protocol, --iterations, --runs, --seed and --workers apply")
	fs.StringVar(&o.protocol, "protocol", "text", "--figure: text (the paper's text: c = max_j‖∇f_ij(θ*)‖, Theorem 1 noise, 300 iterations, B = 10·1, label split by label) or authors (the authors' code: c = √(Σ_j‖∇f_ij(θ*)‖²), their unproven noise formula beside Theorem 1's, 40 iterations, B = 100·1, index-offset label split); paper is an alias of text")
	fs.IntVar(&o.Nodes, "nodes", 2, "number of nodes")
	fs.StringVar(&o.Split, "split", "random", "node split: random, label, label-offset (the authors' code's effectively random label split) or bias")
	fs.Float64Var(&o.Bias, "bias", 10, "bias split: per-coordinate shift B of the odd nodes' objectives")
	fs.IntVar(&o.Warmup, "warmup", 50, "label split: random rows given to each node first")
	fs.IntVar(&o.Iterations, "iterations", 300, "gradient steps")
	fs.Float64Var(&o.Epsilon, "epsilon", 0.1, "per-step, per-node RDP ε")
	fs.Float64Var(&o.Alpha, "alpha", 2, "RDP order α")
	fs.Float64Var(&o.MuReg, "mu-reg", 0.03, "ridge regularization μ_reg")
	fs.StringVar(&o.Method, "method", "rgm", "gradient privatization: rgm, clip or none")
	fs.Float64Var(&o.ClipFactor, "clip-factor", 1, "clip: threshold as a multiple of the largest per-example gradient norm at the node's local optimum")
	fs.StringVar(&o.ClipNoise, "clip-noise", "eq82", "clip: noise σ² = αc²/(εN²) (eq82, the paper) or 2αc²/(εN²) (replace-one, exactly ε-RDP for replace-one neighbours)")
	fs.StringVar(&o.Constants, "constants", "rigorous", "rgm: sensitivity constants, rigorous (Prop. 1 and eq. (10)) or paper (Appendix C.2, constant factors omitted; not a proven bound)")
	fs.Float64Var(&o.PTREpsilon, "ptr-epsilon", 1, "rgm: ε of the one-off PTR test (Proposition 2)")
	fs.Float64Var(&o.PTRDelta, "ptr-delta", 1e-10, "rgm: δ of the PTR test")
	fs.Uint64Var(&o.Seed, "seed", 1, "seed of run 0; run r uses seed+r for the split and the noise")
	fs.IntVar(&o.Runs, "runs", 1, "number of runs (seeds seed, seed+1, …); --figure defaults to 3")
	fs.StringVar(&o.format, "format", "both", "per-iteration output: csv, jsonl or both")
	fs.IntVar(&o.workers, "workers", 2, "--figure: runs executed concurrently")
	if err := parseArgs(fs, args); err != nil {
		if printHelp(err, stdout) {
			return o, 0
		}
		fmt.Fprintf(stderr, "rgm-gd: %v\n", err)
		return o, 2
	}
	o.set = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { o.set[f.Name] = true })
	if err := o.check(fs.Args()); err != nil {
		fmt.Fprintf(stderr, "rgm-gd: %v\n", err)
		return o, 2
	}
	return o, -1
}

// outNotDir reports whether path exists as something other than a directory.
func outNotDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.IsDir()
}

// check validates the options (before any data is loaded or file written):
// the CLI's own, then the experiment's (rgmfig.GDFlags.Validate).
func (o *rgmOptions) check(extra []string) error {
	switch {
	case len(extra) > 0:
		return fmt.Errorf("unexpected arguments %q", extra)
	case o.out == "":
		return errors.New("--out is required")
	case outNotDir(o.out):
		return fmt.Errorf("--out %s exists and is not a directory", o.out)
	case o.set["protocol"] && !o.figure:
		return errors.New("--protocol applies to --figure only")
	case o.workers < 1:
		return fmt.Errorf("--workers must be ≥ 1, got %d", o.workers)
	}
	if err := o.Validate(); err != nil {
		return err
	}
	for _, c := range [][]string{
		{"format", o.format, "csv", "jsonl", "both"},
		{"protocol", o.protocol, "text", "paper", "authors"},
	} {
		if err := rgmfig.OneOf(c[0], c[1], c[2:]...); err != nil {
			return err
		}
	}
	return o.checkFigureFlags()
}

// checkFigureFlags: --figure fixes everything but a few flags; --workers
// only applies to it.
func (o *rgmOptions) checkFigureFlags() error {
	figureFlags := map[string]bool{"figure": true, "data-dir": true, "out": true, "protocol": true, "iterations": true, "runs": true, "seed": true, "workers": true}
	var ignored []string
	for name := range o.set {
		if o.figure && !figureFlags[name] || !o.figure && name == "workers" {
			ignored = append(ignored, "--"+name)
		}
	}
	if len(ignored) == 0 {
		return nil
	}
	sort.Strings(ignored)
	if o.figure {
		return fmt.Errorf("--figure sets %s itself (only --data-dir, --out, --protocol, --iterations, --runs, --seed and --workers apply)", strings.Join(ignored, ", "))
	}
	return errors.New("--workers applies to --figure only")
}

// runRGM is `trainer rgm-gd`: private gradient descent for ridge regression
// on ijcnn1 over several nodes (the RGM paper's Section 6), writing the
// optimality gap f(θ_t) − f* per iteration; with --figure it reproduces the
// paper's Figure 1 and its Appendix D ijcnn1 panel.
func runRGM(args []string, stdout, stderr io.Writer) int {
	o, code := parseRGM(args, stdout, stderr)
	if code >= 0 {
		return code
	}
	dataDir, out, figure, iters, seed, runs, format, workers, set := &o.dataDir, &o.out, &o.figure, &o.Iterations, &o.Seed, &o.Runs, &o.format, &o.workers, o.set

	dir := datasets.ResolveDataDir(*dataDir)
	if dir == "" {
		fmt.Fprintf(stderr, "rgm-gd: ijcnn1 needs a data directory: pass --data-dir DIR (DIR/ijcnn1/ holds the LIBSVM files, docs/datasets.md) or set $%s\n", datasets.DataDirEnv)
		return 2
	}
	data, err := rgmfig.LoadIJCNN1(dir)
	if err != nil {
		// Nothing ran: bad input, like a train refused before its first step.
		fmt.Fprintf(stderr, "rgm-gd: loading ijcnn1 from %q: %s\n", dir, oneLine(err.Error()))
		return 2
	}
	if *figure || o.Private() {
		fmt.Fprintf(stdout, "noise: WARNING: %s\n", rgmfig.NoiseStatement)
	}
	if *figure {
		protocol := o.protocol
		if protocol == "paper" {
			protocol = rgmfig.ProtocolText
		}
		err := rgmfig.Reproduce(data, *out, protocol, func(cfg *rgmfig.Config) {
			cfg.Workers = *workers
			if set["iterations"] {
				cfg.Iterations = *iters
			}
			if set["runs"] {
				cfg.Runs = *runs
			}
			if set["seed"] {
				cfg.Seed = *seed
			}
		}, stdout)
		if err != nil {
			fmt.Fprintf(stderr, "rgm-gd: %v\n", err)
			return 1
		}
		return 0
	}

	cfg := o.Config()
	res, err := rgmfig.RunGD(data, "ijcnn1/all", cfg, func(run rgmfig.GDRun, _ []float64) {
		if run.Error != "" {
			// A rejected PTR test or an unachievable ε is recorded per run.
			fmt.Fprintf(stderr, "rgm-gd: seed %d: %s\n", run.Seed, run.Error)
			return
		}
		fmt.Fprintf(stdout, "seed %d: f* = %.10g, final gap f(θ_%d) − f* = %.4g\n", run.Seed, run.FStar, *iters, run.FinalGap)
	})
	if err != nil {
		fmt.Fprintf(stderr, "rgm-gd: %v\n", err)
		if errors.Is(err, rgmfig.ErrUsage) {
			return 2
		}
		return 1
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fmt.Fprintf(stderr, "rgm-gd: %v\n", err)
		return 1
	}
	if err := res.Write(*out, *format); err != nil {
		fmt.Fprintf(stderr, "rgm-gd: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "wrote %s (OPERATOR-ONLY: non-private evaluation values; see %s there)\n", *out, rgmfig.OperatorNoticeFile)
	if res.Failed == *runs {
		return 1
	}
	return 0
}
