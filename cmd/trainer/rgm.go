package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/privtrain/privtrain/datasets"
	"github.com/privtrain/privtrain/experiments/rgmfig"
	"github.com/privtrain/privtrain/optim/ridgegd"
)

// rgmSummary is summary.json of `trainer rgm-gd`.
type rgmSummary struct {
	Dataset string         `json:"dataset"`
	N       int            `json:"n"`
	D       int            `json:"d"`
	Split   string         `json:"split"`
	Nodes   int            `json:"nodes"`
	Bias    float64        `json:"bias,omitempty"`
	MuReg   float64        `json:"mu_reg"`
	Config  ridgegd.Config `json:"config"`
	Runs    []rgmRun       `json:"runs"`
}

type rgmRun struct {
	Seed     uint64               `json:"seed"`
	Error    string               `json:"error,omitempty"`
	FStar    float64              `json:"f_star,omitempty"`
	StepSize float64              `json:"step_size,omitempty"`
	FinalGap float64              `json:"final_gap,omitempty"`
	Theta    []float64            `json:"theta,omitempty"`
	Nodes    []ridgegd.NodeReport `json:"nodes,omitempty"`
}

// runRGM is `trainer rgm-gd`: private gradient descent for ridge regression
// on ijcnn1 over several nodes (the RGM paper's Section 6), writing the
// optimality gap f(θ_t) − f* per iteration; with --figure it reproduces the
// paper's Figure 1 and its Appendix D ijcnn1 panel.
func runRGM(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("rgm-gd", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataDir := fs.String("data-dir", "", "data directory holding ijcnn1/ (default: $"+datasets.DataDirEnv+")")
	out := fs.String("out", "", "output directory (required)")
	figure := fs.Bool("figure", false, "reproduce Figure 1 (ε = 0.1) and the Appendix D ijcnn1 panel (ε = 1e-3) into --out; only --data-dir, --out, --iterations, --runs, --seed and --workers apply")
	nodes := fs.Int("nodes", 2, "number of nodes")
	split := fs.String("split", "random", "node split: random, label or bias")
	bias := fs.Float64("bias", 10, "bias split: per-coordinate shift B of the odd nodes' objectives")
	warmup := fs.Int("warmup", 50, "label split: random rows given to each node first")
	iters := fs.Int("iterations", 300, "gradient steps")
	eps := fs.Float64("epsilon", 0.1, "per-step, per-node RDP ε")
	alpha := fs.Float64("alpha", 2, "RDP order α")
	muReg := fs.Float64("mu-reg", 0.03, "ridge regularization μ_reg")
	method := fs.String("method", "rgm", "gradient privatization: rgm, clip or none")
	clipFactor := fs.Float64("clip-factor", 1, "clip: threshold as a multiple of the largest per-example gradient norm at the node's local optimum")
	clipNoise := fs.String("clip-noise", "eq82", "clip: noise σ² = αc²/(εN²) (eq82, the paper) or 2αc²/(εN²) (replace-one, exactly ε-RDP for replace-one neighbours)")
	consts := fs.String("constants", "rigorous", "rgm: sensitivity constants, rigorous (Prop. 1 and eq. (10)) or paper (Appendix C.2, constant factors omitted; not a proven bound)")
	ptrEps := fs.Float64("ptr-epsilon", 1, "rgm: ε of the one-off PTR test (Proposition 2)")
	ptrDelta := fs.Float64("ptr-delta", 1e-10, "rgm: δ of the PTR test")
	seed := fs.Uint64("seed", 1, "seed of run 0; run r uses seed+r for the split and the noise")
	runs := fs.Int("runs", 1, "number of runs (seeds seed, seed+1, …); --figure defaults to 3")
	format := fs.String("format", "both", "per-iteration output: csv, jsonl or both")
	workers := fs.Int("workers", 2, "--figure: runs executed concurrently")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "rgm-gd: unexpected arguments %q\n", fs.Args())
		return 2
	}
	if *out == "" {
		fmt.Fprintln(stderr, "rgm-gd: --out is required")
		return 2
	}
	if *format != "csv" && *format != "jsonl" && *format != "both" {
		fmt.Fprintf(stderr, "rgm-gd: --format must be csv, jsonl or both, got %q\n", *format)
		return 2
	}
	if *runs < 1 {
		fmt.Fprintf(stderr, "rgm-gd: --runs must be ≥ 1, got %d\n", *runs)
		return 2
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })

	dir := datasets.ResolveDataDir(*dataDir)
	data, err := rgmfig.LoadIJCNN1(dir)
	if err != nil {
		fmt.Fprintf(stderr, "rgm-gd: loading ijcnn1 from %q: %v\n", dir, err)
		return 1
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fmt.Fprintf(stderr, "rgm-gd: %v\n", err)
		return 1
	}

	if *figure {
		for _, f := range []struct {
			prefix string
			cfg    rgmfig.Config
		}{{"figure1", rgmfig.Figure1()}, {"appendixD", rgmfig.AppendixD()}} {
			cfg := f.cfg
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
			fig, err := rgmfig.Run(data, cfg)
			if err == nil {
				err = fig.WriteAll(*out, f.prefix)
			}
			if err != nil {
				fmt.Fprintf(stderr, "rgm-gd: %s: %v\n", f.prefix, err)
				return 1
			}
			fig.Table(stdout)
			fmt.Fprintf(stdout, "wrote %s.{csv,json,png,svg,pdf} in %s\n", f.prefix, *out)
		}
		return 0
	}

	cfg := ridgegd.Config{
		Method: ridgegd.Method(*method), Iterations: *iters, Epsilon: *eps, Alpha: *alpha,
		ClipFactor: *clipFactor, ClipNoise: ridgegd.ClipNoise(*clipNoise), Constants: ridgegd.Constants(*consts),
		PTREpsilon: *ptrEps, PTRDelta: *ptrDelta,
	}
	sum := rgmSummary{Dataset: "ijcnn1/all", N: data.N, D: data.D, Split: *split, Nodes: *nodes, MuReg: *muReg, Config: cfg}
	if *split == string(ridgegd.SplitBias) {
		sum.Bias = *bias
	}
	gaps := make([][]float64, *runs)
	failed := 0
	for r := 0; r < *runs; r++ {
		s := *seed + uint64(r)
		run := rgmRun{Seed: s}
		res, err := rgmRunOne(data, *split, *nodes, *warmup, *bias, *muReg, cfg, s)
		if err != nil {
			// Configuration errors (bad flags) abort; a rejected PTR test
			// or an unachievable ε is recorded per run.
			if errors.Is(err, errRGMUsage) {
				fmt.Fprintf(stderr, "rgm-gd: %v\n", err)
				return 2
			}
			run.Error = err.Error()
			failed++
			fmt.Fprintf(stderr, "rgm-gd: seed %d: %v\n", s, err)
		} else {
			run.FStar, run.StepSize, run.Theta, run.Nodes = res.FStar, res.StepSize, res.Theta, res.Nodes
			run.FinalGap = res.Gap[len(res.Gap)-1]
			gaps[r] = res.Gap
			fmt.Fprintf(stdout, "seed %d: f* = %.10g, final gap f(θ_%d) − f* = %.4g\n", s, res.FStar, *iters, run.FinalGap)
		}
		sum.Runs = append(sum.Runs, run)
	}
	if err := writeRGMOutputs(*out, *format, *seed, gaps, sum); err != nil {
		fmt.Fprintf(stderr, "rgm-gd: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "wrote %s\n", *out)
	if failed == *runs {
		return 1
	}
	return 0
}

// errRGMUsage marks errors caused by invalid flag values.
var errRGMUsage = errors.New("invalid flag value")

func rgmRunOne(data *ridgegd.Data, split string, nodes, warmup int, bias, muReg float64, cfg ridgegd.Config, seed uint64) (*ridgegd.Result, error) {
	switch ridgegd.Method(cfg.Method) {
	case ridgegd.MethodNone, ridgegd.MethodRGM, ridgegd.MethodClip:
	default:
		return nil, fmt.Errorf("%w: --method must be rgm, clip or none, got %q", errRGMUsage, cfg.Method)
	}
	rng := rgmfig.SplitRNG(seed)
	parts, err := ridgegd.Split(data, ridgegd.SplitConfig{Kind: ridgegd.SplitKind(split), Nodes: nodes, Warmup: warmup, Bias: bias}, muReg, rng)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errRGMUsage, err)
	}
	return ridgegd.Run(parts, cfg, seed)
}

func writeRGMOutputs(dir, format string, seed uint64, gaps [][]float64, sum rgmSummary) error {
	ff := func(v float64) string { return strconv.FormatFloat(v, 'g', 17, 64) }
	if format == "csv" || format == "both" {
		f, err := os.Create(filepath.Join(dir, "gap.csv"))
		if err != nil {
			return err
		}
		fmt.Fprint(f, "iteration")
		n := 0
		for r, g := range gaps {
			if g != nil {
				fmt.Fprintf(f, ",seed_%d", seed+uint64(r))
				n = len(g)
			}
		}
		fmt.Fprintln(f)
		for t := 0; t < n; t++ {
			fmt.Fprint(f, t)
			for _, g := range gaps {
				if g != nil {
					fmt.Fprint(f, ","+ff(g[t]))
				}
			}
			fmt.Fprintln(f)
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	if format == "jsonl" || format == "both" {
		f, err := os.Create(filepath.Join(dir, "gap.jsonl"))
		if err != nil {
			return err
		}
		enc := json.NewEncoder(f)
		for r, g := range gaps {
			for t, v := range g {
				if err := enc.Encode(map[string]any{"seed": seed + uint64(r), "iteration": t, "gap": v}); err != nil {
					f.Close()
					return err
				}
			}
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	f, err := os.Create(filepath.Join(dir, "summary.json"))
	if err != nil {
		return err
	}
	enc := json.NewEncoder(f)
	enc.SetIndent("", "  ")
	if err := enc.Encode(sum); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
