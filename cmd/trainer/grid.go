package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/privtrain/privtrain/experiments/grid"
	"github.com/privtrain/privtrain/runner"
)

// gridModes are the flags every grid experiment shares: what to do with
// the grid (run all, plan, one cell, collect, write Slurm scripts).
type gridModes struct {
	out         string
	plan        bool
	cell        int
	jobs        int
	collect     bool
	slurm       bool
	trainer     string
	concurrency int
	partition   string
	account     string
	options     stringList
}

type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, " ") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// modeFlags are the names registered by addGridModes; they are not part of
// the grid's definition (Slurm tasks get the others back).
var modeFlags = map[string]bool{"plan": true, "cell": true, "jobs": true, "collect": true, "slurm": true,
	"trainer": true, "slurm-concurrency": true, "slurm-partition": true, "slurm-account": true, "slurm-option": true}

func addGridModes(fs *flag.FlagSet, m *gridModes, defaultOut string) {
	fs.StringVar(&m.out, "out", defaultOut, "output directory: cells/<settings hash>/ per run, table.md, cells.csv, slurm/")
	fs.BoolVar(&m.plan, "plan", false, "print the grid's cells (index, settings hash, state, estimated steps and wall time), the total estimated wall time and the data check, and exit (nothing runs)")
	fs.IntVar(&m.cell, "cell", -1, "run only cell `I` (idempotent: a finished cell is reused, an interrupted one resumes)")
	fs.IntVar(&m.jobs, "jobs", 1, "run up to `N` cells in parallel on this machine")
	fs.BoolVar(&m.collect, "collect", false, "build the table from the finished cells and list the missing ones (exit 1 if any)")
	fs.BoolVar(&m.slurm, "slurm", false, "write Slurm job-array scripts and submit.sh to <out>/slurm/ instead of running")
	fs.StringVar(&m.trainer, "trainer", "", "trainer binary the Slurm tasks run (default: this executable)")
	fs.IntVar(&m.concurrency, "slurm-concurrency", 16, "at most `K` array tasks at once (the %K of --array; 0: no limit)")
	fs.StringVar(&m.partition, "slurm-partition", "", "Slurm partition")
	fs.StringVar(&m.account, "slurm-account", "", "Slurm account")
	fs.Var(&m.options, "slurm-option", "further sbatch `option` (repeatable), e.g. --slurm-option=--qos=normal")
}

// runGrid does what the mode flags ask with the grid g. Without a mode
// flag it runs every cell (--jobs at a time) and collects the table.
func runGrid(name string, fs *flag.FlagSet, g *grid.Grid, m *gridModes, stdout, stderr io.Writer) error {
	n := 0
	for _, b := range []bool{m.plan, m.cell >= 0, m.collect, m.slurm} {
		if b {
			n++
		}
	}
	if n > 1 {
		return usagef("--plan, --cell, --collect and --slurm are exclusive")
	}
	if m.jobs < 1 {
		return usagef("--jobs must be ≥ 1, got %d", m.jobs)
	}
	if m.cell >= len(g.Cells) || m.cell < -1 {
		return usagef("--cell %d: the grid has cells 0–%d (see --plan)", m.cell, len(g.Cells)-1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	switch {
	case m.plan:
		return g.Plan(stdout, m.out, m.jobs)
	case m.slurm:
		if err := g.CheckData(m.out, nil); err != nil {
			return usageError{err} // the tasks would fail on it
		}
		return writeSlurm(name, fs, g, m, stdout)
	case m.cell >= 0:
		fmt.Fprintf(stderr, "%s cell %d: %s seed %d\n", name, m.cell, strings.Join(g.Cells[m.cell].Row, " "), g.Cells[m.cell].Seed)
		s, err := g.RunCell(ctx, m.out, m.cell, stderr)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "cell %d: test accuracy %.2f%%, %d steps, ε %.3f (%s)\n", m.cell, 100*s.TestAccuracy, s.Steps, s.Epsilon, s.Accountant)
		return nil
	case !m.collect:
		if err := g.RunAll(ctx, m.out, nil, m.jobs, stderr); errors.Is(err, grid.ErrData) {
			return usageError{err} // nothing ran: like a refused train, exit 2
		} else if err != nil {
			return err
		}
	}
	t, err := g.Collect(m.out)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(m.out, 0o755); err != nil {
		return err
	}
	if err := t.Write(m.out, stdout); err != nil {
		return err
	}
	if len(t.Missing) > 0 {
		return fmt.Errorf("%d of %d cells have not finished", len(t.Missing), len(g.Cells))
	}
	return nil
}

// writeSlurm writes the Slurm scripts; the tasks rerun this command with
// the same grid flags plus --cell.
func writeSlurm(name string, fs *flag.FlagSet, g *grid.Grid, m *gridModes, stdout io.Writer) error {
	if m.concurrency < 0 {
		return usagef("--slurm-concurrency must be ≥ 0 (0: no limit), got %d", m.concurrency)
	}
	trainer := m.trainer
	if trainer == "" {
		exe, err := os.Executable()
		if err != nil {
			return usagef("--slurm: cannot find this executable (pass --trainer): %w", err)
		}
		trainer = exe
		if strings.Contains(exe, string(filepath.Separator)+"go-build") {
			return usagef("--slurm: this executable (%s) is a temporary `go run` build; build one (go build -o bin/trainer ./cmd/trainer) and run it, or pass --trainer", exe)
		}
	}
	trainer, err := filepath.Abs(trainer)
	if err != nil {
		return err
	}
	if fi, err := os.Stat(trainer); err != nil {
		return usagef("--trainer: %w", err)
	} else if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return usagef("--trainer %s: not an executable file", trainer)
	}
	out, err := filepath.Abs(m.out)
	if err != nil {
		return err
	}
	args := []string{"experiment", name}
	var ferr error
	fs.Visit(func(f *flag.Flag) {
		if modeFlags[f.Name] || f.Name == "out" {
			return
		}
		v := f.Value.String()
		if (f.Name == "data-dir" || f.Name == "data-checksums") && v != "" {
			abs, err := filepath.Abs(v)
			if err != nil {
				ferr = err
			}
			v = abs
		}
		args = append(args, "--"+f.Name+"="+v)
	})
	if ferr != nil {
		return ferr
	}
	args = append(args, "--out="+out)
	files, err := g.WriteSlurm(out, grid.SlurmOptions{
		Trainer: trainer, Args: args, Concurrency: m.concurrency,
		Partition: m.partition, Account: m.account, Extra: m.options,
	})
	if errors.Is(err, grid.ErrUnsafeValue) {
		return usageError{err}
	}
	if err != nil {
		return err
	}
	for _, f := range files {
		fmt.Fprintln(stdout, f)
	}
	fmt.Fprintf(stdout, "submit with: bash %s\n", files[len(files)-1])
	return nil
}

// asUsage marks a parse error as bad input (exit 2), keeping flag.ErrHelp.
func asUsage(err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return err
	}
	return usageError{err}
}

func parseFloats(s, what string) ([]float64, error) {
	var v []float64
	for _, f := range strings.Split(s, ",") {
		x, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			return nil, fmt.Errorf("%s %q: %w", what, f, err)
		}
		v = append(v, x)
	}
	return v, nil
}

func parseSeeds(s string) ([]uint64, error) {
	var v []uint64
	for _, f := range strings.Split(s, ",") {
		if a, b, ok := strings.Cut(f, "-"); ok {
			lo, err1 := strconv.ParseUint(a, 10, 64)
			hi, err2 := strconv.ParseUint(b, 10, 64)
			if err1 != nil || err2 != nil || hi < lo {
				return nil, fmt.Errorf("seed range %q: want LO-HI", f)
			}
			if hi-lo >= grid.MaxCells || len(v)+int(hi-lo) >= grid.MaxCells {
				return nil, fmt.Errorf("seed range %q: more than %d seeds (a grid has at most %d cells)", f, grid.MaxCells, grid.MaxCells)
			}
			for x := lo; x <= hi; x++ {
				v = append(v, x)
			}
			continue
		}
		x, err := strconv.ParseUint(strings.TrimSpace(f), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("seed %q: %w", f, err)
		}
		v = append(v, x)
	}
	return v, nil
}

func runPTRTable(args []string, stdout, stderr io.Writer) error {
	g, fs, m, err := parsePTRTable(args, stderr)
	if err != nil {
		return asUsage(err)
	}
	return runGrid("ptr-table", fs, g, m, stdout, stderr)
}

// parsePTRTable parses `trainer experiment ptr-table` flags into its grid
// and modes (nothing is run or written).
func parsePTRTable(args []string, stderr io.Writer) (*grid.Grid, *flag.FlagSet, *gridModes, error) {
	fs := flag.NewFlagSet("trainer experiment ptr-table", flag.ContinueOnError)
	setUsage(fs, "trainer experiment ptr-table [flags]")
	t := grid.PTRTable{}
	fs.StringVar(&t.Preset, "preset", "ptr-mnist", "hyper-parameter preset: ptr-mnist, ptr-emnist, ptr-cifar10")
	fs.StringVar(&t.DataDir, "data-dir", "", "data directory (default $PRIVTRAIN_DATA; MNIST needs none)")
	fs.StringVar(&t.DataChecksums, "data-checksums", "", "sha256sum `manifest` to verify CIFAR-10/EMNIST files against instead of the official checksums (e.g. subsets for a smoke test)")
	eps := fs.String("epsilon", "3", "comma-separated privacy budgets ε (δ = 1e-5), e.g. 3,5")
	methods := fs.String("methods", "tsgd-ptr,tsgd-gaussian,dpsgd", "comma-separated methods")
	corr := fs.String("corruptions", "label-flip:0.1,gradient-noise:0.2", "comma-separated KIND:RATIO settings, or \"paper\" for Table 1's seven")
	seeds := fs.String("seeds", "1", "comma-separated seeds or ranges (1-5)")
	fs.Float64Var(&t.DPSGDSigma, "dpsgd-sigma", 0, "σ of the dpsgd baseline (0: the preset's Gaussian σ)")
	fs.IntVar(&t.Steps, "steps", 0, "cap every run at this many steps (smoke tests; 0: train until ε is spent)")
	fs.StringVar(&t.Accountant, "accountant", "", "pld | rdp (default: pld for every method; tsgd-ptr by its PLD of docs/ptr-pld.md)")
	fs.BoolVar(&t.FloatNoise, "float-noise", false, "opt out of the secure (floating-point-safe) release, the default: float noise, whose guarantee does NOT hold against floating-point attacks (Mironov, CCS 2012); float cells keep the keys of earlier float grids")
	fs.Var(deprecatedSecureNoise{stderr}, "secure-noise", "deprecated, does nothing: secure noise is the default (--float-noise opts out)")
	var m gridModes
	addGridModes(fs, &m, "out/ptr-table")
	if err := parseArgs(fs, args); err != nil {
		return nil, nil, nil, err
	}
	if fs.NArg() > 0 {
		return nil, nil, nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	var err error
	if t.DataChecksums != "" {
		// Absolute, so that a cell's settings hash is the same from any
		// working directory (and in Slurm tasks).
		if t.DataChecksums, err = filepath.Abs(t.DataChecksums); err != nil {
			return nil, nil, nil, err
		}
	}
	if t.Epsilons, err = parseFloats(*eps, "ε"); err != nil {
		return nil, nil, nil, err
	}
	if t.Seeds, err = parseSeeds(*seeds); err != nil {
		return nil, nil, nil, err
	}
	t.Methods = strings.Split(*methods, ",")
	if *corr == "paper" {
		t.Corruptions = grid.PTRPaperCorruptions()
	} else {
		for _, c := range strings.Split(*corr, ",") {
			kind, ratio, ok := strings.Cut(c, ":")
			r, err := strconv.ParseFloat(ratio, 64)
			if !ok || err != nil {
				return nil, nil, nil, fmt.Errorf("corruption setting %q: want KIND:RATIO", c)
			}
			t.Corruptions = append(t.Corruptions, runner.Corruption{Kind: kind, Ratio: r})
		}
	}
	g, err := t.Grid()
	if err != nil {
		return nil, nil, nil, err
	}
	return g, fs, &m, nil
}

func runPDPTable(args []string, stdout, stderr io.Writer) error {
	g, fs, m, err := parsePDPTable(args, stderr)
	if err != nil {
		return asUsage(err)
	}
	return runGrid("pdp-table", fs, g, m, stdout, stderr)
}

// parsePDPTable parses `trainer experiment pdp-table` flags into its grid
// and modes (nothing is run or written).
func parsePDPTable(args []string, stderr io.Writer) (*grid.Grid, *flag.FlagSet, *gridModes, error) {
	fs := flag.NewFlagSet("trainer experiment pdp-table", flag.ContinueOnError)
	setUsage(fs, "trainer experiment pdp-table [flags]")
	t := grid.PDPTable{}
	presets := fs.String("presets", "pdp-mnist,pdp-fashion-mnist", "comma-separated presets: pdp-mnist, pdp-fashion-mnist, pdp-svhn")
	fs.StringVar(&t.DataDir, "data-dir", "", "data directory (default $PRIVTRAIN_DATA; MNIST needs none)")
	methods := fs.String("methods", strings.Join(append(grid.PDPMethods(), grid.PDPReferenceMethods()...), ","), "comma-separated methods (pdp-ceiling: DP-SGD with every example at the largest budget, a reference; pdp-sampling-once: Definition B.1's one-time draw, paper accountings only)")
	acc := fs.String("accounting", "pld,rdp-mironov", "comma-separated PDP accountings: pld, rdp, paper, each optionally -mironov (the paper's conversion ε = ρ + log(1/δ)/(α−1); rdp-mironov is the paper's accounting)")
	seeds := fs.String("seeds", "1-3", "comma-separated seeds or ranges (1-3)")
	fs.Float64Var(&t.Epochs, "epochs", 25, "epochs per run (multi-round methods split them over --rounds)")
	fs.IntVar(&t.Rounds, "rounds", 2, "rounds k of pdp-sgd and pdp-adapdp")
	fs.IntVar(&t.Steps, "steps", 0, "fix every run's total steps instead of --epochs (smoke tests)")
	fs.BoolVar(&t.FloatNoise, "float-noise", false, "opt out of the secure (floating-point-safe) release, the default: float noise, whose guarantee does NOT hold against floating-point attacks (Mironov, CCS 2012); float cells keep the keys of earlier float grids")
	var m gridModes
	addGridModes(fs, &m, "out/pdp-table")
	if err := parseArgs(fs, args); err != nil {
		return nil, nil, nil, err
	}
	if fs.NArg() > 0 {
		return nil, nil, nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	var err error
	if t.Seeds, err = parseSeeds(*seeds); err != nil {
		return nil, nil, nil, err
	}
	t.Presets, t.Methods, t.Accountings = strings.Split(*presets, ","), strings.Split(*methods, ","), strings.Split(*acc, ",")
	g, err := t.Grid()
	if err != nil {
		return nil, nil, nil, err
	}
	return g, fs, &m, nil
}
