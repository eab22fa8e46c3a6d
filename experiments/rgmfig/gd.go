package rgmfig

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"

	"github.com/privtrain/privtrain/experiments/rgmfig/ridgegd"
	"github.com/privtrain/privtrain/internal/fileutil"
)

// GDConfig is one private gradient-descent experiment of the RGM paper's
// Section 6 (`trainer rgm-gd` without --figure): ridge regression on a
// dataset split over Nodes nodes, Runs runs with seeds Seed, Seed+1, ….
type GDConfig struct {
	// Split is the node split: random, label or bias (ridgegd.SplitKind).
	Split string
	// Nodes is the number of nodes; Warmup the random rows each node gets
	// first in the label split; Bias the per-coordinate shift B of the odd
	// nodes' objectives in the bias split.
	Nodes, Warmup int
	Bias          float64
	// MuReg is the ridge regularization μ_reg.
	MuReg float64
	// GD is the gradient descent and its privatization.
	GD ridgegd.Config
	// Seed is run 0's seed (split and noise); Runs the number of runs.
	Seed uint64
	Runs int
}

// GDSummary is summary.json of a GD experiment.
type GDSummary struct {
	Dataset string         `json:"dataset"`
	N       int            `json:"n"`
	D       int            `json:"d"`
	Split   string         `json:"split"`
	Nodes   int            `json:"nodes"`
	Bias    float64        `json:"bias,omitempty"`
	MuReg   float64        `json:"mu_reg"`
	Config  ridgegd.Config `json:"config"`
	// Noise states what the gradient noise is (ridgegd.NoiseStatement):
	// float noise, not floating-point safe.
	Noise string  `json:"noise"`
	Runs  []GDRun `json:"runs"`
}

// GDRun is one run's outcome: the error that stopped it (a rejected PTR
// test, an unachievable ε) or its optimum, step size, final gap and nodes.
type GDRun struct {
	Seed     uint64               `json:"seed"`
	Error    string               `json:"error,omitempty"`
	FStar    float64              `json:"f_star,omitempty"`
	StepSize float64              `json:"step_size,omitempty"`
	FinalGap float64              `json:"final_gap,omitempty"`
	Theta    []float64            `json:"theta,omitempty"`
	Nodes    []ridgegd.NodeReport `json:"nodes,omitempty"`
}

// GDResult is a finished GD experiment: the summary and each run's gap
// f(θ_t) − f* per iteration (nil for a failed run).
type GDResult struct {
	Summary GDSummary
	Gaps    [][]float64
	// Failed counts the runs that stopped with an error.
	Failed int
}

// ErrUsage marks configuration errors (as opposed to a run's own failure,
// which is recorded in its GDRun).
var ErrUsage = errors.New("invalid configuration")

// RunGD runs the experiment on data (named dataset in the summary). A
// configuration error stops it (errors.Is(err, ErrUsage)); a run that fails
// is recorded and the next one runs. done, when not nil, is called after
// each run with its outcome and gaps.
func RunGD(data *ridgegd.Data, dataset string, cfg GDConfig, done func(GDRun, []float64)) (*GDResult, error) {
	switch cfg.GD.Method {
	case ridgegd.MethodNone, ridgegd.MethodRGM, ridgegd.MethodClip:
	default:
		return nil, fmt.Errorf("%w: method must be rgm, clip or none, got %q", ErrUsage, cfg.GD.Method)
	}
	if cfg.Runs < 1 {
		return nil, fmt.Errorf("%w: runs must be ≥ 1, got %d", ErrUsage, cfg.Runs)
	}
	res := &GDResult{
		Summary: GDSummary{Dataset: dataset, N: data.N, D: data.D, Split: cfg.Split, Nodes: cfg.Nodes, MuReg: cfg.MuReg, Config: cfg.GD},
		Gaps:    make([][]float64, cfg.Runs),
	}
	if cfg.Split == string(ridgegd.SplitBias) {
		res.Summary.Bias = cfg.Bias
	}
	if cfg.GD.Method != ridgegd.MethodNone {
		res.Summary.Noise = ridgegd.NoiseStatement
	}
	for r := 0; r < cfg.Runs; r++ {
		s := cfg.Seed + uint64(r)
		run := GDRun{Seed: s}
		parts, err := ridgegd.Split(data, ridgegd.SplitConfig{Kind: ridgegd.SplitKind(cfg.Split), Nodes: cfg.Nodes, Warmup: cfg.Warmup, Bias: cfg.Bias}, cfg.MuReg, SplitRNG(s))
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrUsage, err)
		}
		out, err := ridgegd.Run(parts, cfg.GD, s)
		if err != nil {
			run.Error = err.Error()
			res.Failed++
		} else {
			run.FStar, run.StepSize, run.Theta, run.Nodes = out.FStar, out.StepSize, out.Theta, out.Nodes
			run.FinalGap = out.Gap[len(out.Gap)-1]
			res.Gaps[r] = out.Gap
		}
		res.Summary.Runs = append(res.Summary.Runs, run)
		if done != nil {
			done(run, res.Gaps[r])
		}
	}
	return res, nil
}

// Write writes the per-iteration gaps (gap.csv and/or gap.jsonl; format
// csv, jsonl or both) and summary.json into dir, each atomically.
func (r *GDResult) Write(dir, format string) error {
	seed := uint64(0)
	if len(r.Summary.Runs) > 0 {
		seed = r.Summary.Runs[0].Seed
	}
	ff := func(v float64) string { return strconv.FormatFloat(v, 'g', 17, 64) }
	if format == "csv" || format == "both" {
		err := fileutil.WriteAtomicFunc(filepath.Join(dir, "gap.csv"), func(f io.Writer) error {
			fmt.Fprint(f, "iteration")
			n := 0
			for i, g := range r.Gaps {
				if g != nil {
					fmt.Fprintf(f, ",seed_%d", seed+uint64(i))
					n = len(g)
				}
			}
			fmt.Fprintln(f)
			for t := 0; t < n; t++ {
				fmt.Fprint(f, t)
				for _, g := range r.Gaps {
					if g != nil {
						fmt.Fprint(f, ","+ff(g[t]))
					}
				}
				if _, err := fmt.Fprintln(f); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	if format == "jsonl" || format == "both" {
		err := fileutil.WriteAtomicFunc(filepath.Join(dir, "gap.jsonl"), func(f io.Writer) error {
			enc := json.NewEncoder(f)
			for i, g := range r.Gaps {
				for t, v := range g {
					if err := enc.Encode(map[string]any{"seed": seed + uint64(i), "iteration": t, "gap": v}); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	data, err := json.MarshalIndent(r.Summary, "", "  ")
	if err != nil {
		return fmt.Errorf("summary.json: %w", err)
	}
	if err := fileutil.WriteAtomic(filepath.Join(dir, "summary.json"), append(data, '\n')); err != nil {
		return err
	}
	return WriteOperatorNotice(dir)
}

// Reproduce runs the paper's Figure 1 and its Appendix D ijcnn1 panel under
// protocol ProtocolText (Figure1, AppendixD; "" means text) or
// ProtocolAuthors (Figure1Authors, AppendixDAuthors) on data, each
// configuration first passed to adjust (nil: as defined), writing figure1.*
// and appendixD.* into dir (Figure.WriteAll) and each figure's table and
// file names to w.
func Reproduce(data *ridgegd.Data, dir, protocol string, adjust func(*Config), w io.Writer) error {
	f1, ad := Figure1(), AppendixD()
	switch protocol {
	case "", ProtocolText:
	case ProtocolAuthors:
		f1, ad = Figure1Authors(), AppendixDAuthors()
	default:
		return fmt.Errorf("%w: protocol must be %s or %s, got %q", ErrUsage, ProtocolText, ProtocolAuthors, protocol)
	}
	for _, f := range []struct {
		prefix string
		cfg    Config
	}{{"figure1", f1}, {"appendixD", ad}} {
		cfg := f.cfg
		if adjust != nil {
			adjust(&cfg)
		}
		fig, err := Run(data, cfg)
		if err == nil {
			err = fig.WriteAll(dir, f.prefix)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", f.prefix, err)
		}
		fig.Table(w)
		fmt.Fprintf(w, "wrote %s.{csv,json,png,svg,pdf} in %s\n", f.prefix, dir)
	}
	return nil
}
