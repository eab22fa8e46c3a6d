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

	"github.com/privtrain/privtrain/aggregate"
	"github.com/privtrain/privtrain/corruption"
	"github.com/privtrain/privtrain/datasets"
	"github.com/privtrain/privtrain/internal/fileutil"
	"github.com/privtrain/privtrain/model"
	"github.com/privtrain/privtrain/runner"
)

// runTrain parses `trainer train` flags into a TrainConfig (defaults, then
// --preset, then --config file, then explicit flags) and runs it.
func runTrain(args []string, stdout, stderr io.Writer) int {
	return runTrainFrom(args, runner.TrainDefaults(), true, stdout, stderr)
}

// runDefaultJob is `trainer` with no arguments: DefaultConfig (TSGD+PTR on
// MNIST with 10% flipped labels, ε = 3) in the first free runs/default*.
func runDefaultJob(stdout, stderr io.Writer) int {
	return runTrainFrom(nil, runner.DefaultConfig(), true, stdout, stderr)
}

// runDefaultJobWith is `trainer FLAGS`: the default job's configuration with
// `trainer train` flags on top (e.g. --out, --resume); the run directory is
// --out (runs/default without it), not the next free one.
func runDefaultJobWith(args []string, stdout, stderr io.Writer) int {
	return runTrainFrom(args, runner.DefaultConfig(), false, stdout, stderr)
}

// consoleLabel opens the progress output and ends the summary of every run:
// the console is the operator's (loss, examples/s and timings are not
// privatized), so a pasted console must not pass for a release.
const consoleLabel = "console: OPERATOR-ONLY (it shows the training loss, throughput and timings, which are not privatized); publish the run directory's release-safe files instead"

// runTrainFrom runs `trainer train` args on top of base; with number, a new
// run given no --out takes the first free directory of its default
// (runs/default, runs/default-2, …) instead of failing on an earlier run.
func runTrainFrom(args []string, base runner.TrainConfig, number bool, stdout, stderr io.Writer) int {
	cfg, resume, err := parseTrainFlagsFrom(args, base, stderr)
	if printHelp(err, stdout) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "trainer train: %s\n", oneLine(err.Error()))
		return 2
	}
	if number && !resume && len(filterFlags(args, "out")) == 0 {
		// Never collide with an earlier run: take the first free
		// runs/default, runs/default-2, ….
		cfg.Out = freeRunDir(cfg.Out)
	}
	if cfg.Noisy() && cfg.FloatNoise {
		fmt.Fprintf(stderr, "WARNING: %s\n", runner.FloatNoiseWarning)
	}
	// SIGTERM (kill, Slurm, systemd) checkpoints like Ctrl-C.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The label opens the progress once the run starts (a refusal stays one line).
	sum, err := runner.Train(ctx, cfg, runner.Options{Progress: stderr, Banner: consoleLabel, Resume: resume})
	if err != nil {
		fmt.Fprintf(stderr, "trainer train: %v\n", err)
		var setup *runner.SetupError
		if errors.As(err, &setup) {
			return 2 // refused before the first step: bad input, nothing lost
		}
		return 1
	}
	fmt.Fprintf(stdout, "method %s on %s (%s): %d steps (stopped by %s), %.0f examples/s\n",
		sum.Method, sum.Dataset, sum.Model, sum.Steps, sum.StoppedBy, sum.ExamplesPerSecond)
	fmt.Fprintf(stdout, "test accuracy: %.2f%%\n", 100*sum.TestAccuracy)
	if sum.Delta > 0 {
		if sum.Guarantee != "" {
			// Personalized: ε is the ledger's largest per-example spend,
			// by the accounting the guarantee below names.
			fmt.Fprintf(stdout, "privacy: (ε, δ) = (%.4f, %g), the largest per-example spend in the personalized ledger (%s accounting; see the personalized guarantee)\n", sum.Epsilon, sum.Delta, sum.Accountant)
		} else {
			// What the accountant reported: a discretization interval (the
			// PLD accountant), an order and conversion (the RDP one).
			detail := ""
			switch {
			case sum.PLDInterval > 0:
				detail = fmt.Sprintf(" (certified upper bound; %s; interval %g)", optimisticWords(sum.EpsilonOptimistic, sum.EpsilonOptimisticOmitted), sum.PLDInterval)
			case sum.Conversion != "":
				detail = fmt.Sprintf(" at Rényi order %g (%s conversion; bound there: %s; all bounds used: %s)",
					sum.Order, sum.Conversion, strings.Join(sum.BoundAtOrder, ", "), strings.Join(sum.Bounds, ", "))
			}
			fmt.Fprintf(stdout, "privacy: (ε, δ) = (%.4f, %g) by the %s accountant%s\n", sum.Epsilon, sum.Delta, strings.ToUpper(sum.Accountant), detail)
		}
		if sum.Unproven {
			fmt.Fprintln(stdout, "WARNING: --allow-unproven was set and some orders used a bound outside its proven conditions")
		}
		if sum.FloatNoise {
			fmt.Fprintf(stdout, "noise: WARNING: %s\n", sum.Noise)
		} else if sum.Noise != "" {
			fmt.Fprintf(stdout, "noise: %s\n", sum.Noise)
		}
		if sum.PrivacyRandomness != "" {
			fmt.Fprintf(stdout, "privacy randomness: %s\n", sum.PrivacyRandomness)
		}
		if cfg.ReproducibleNoise {
			fmt.Fprintln(stdout, "WARNING: this run started before privtrain split its seeds: its noise derives from the seed in config.json; anyone who knows the seed can regenerate the noise, so config.json is operator-only")
		}
	} else {
		fmt.Fprintln(stdout, "privacy: none (non-private method)")
	}
	if sum.Guarantee != "" {
		fmt.Fprintf(stdout, "personalized guarantee: %s\n", sum.Guarantee)
	}
	if sum.PTRTests > 0 {
		fmt.Fprintf(stdout, "PTR tests passed: %d of %d (%.1f%%), final F = %d\n", sum.PTRPassed, sum.PTRTests, 100*sum.PTRPassRate, sum.FinalF)
	}
	fmt.Fprintf(stdout, "run directory: %s (%s)\n", cfg.Out, runner.ReleaseSafety(cfg))
	fmt.Fprintln(stdout, consoleLabel)
	return 0
}

func parseTrainFlags(args []string, stderr io.Writer) (runner.TrainConfig, bool, error) {
	return parseTrainFlagsFrom(args, runner.TrainDefaults(), stderr)
}

// parseTrainFlagsFrom parses train flags on top of base (TrainDefaults, or
// DefaultConfig for the default job).
func parseTrainFlagsFrom(args []string, base runner.TrainConfig, stderr io.Writer) (runner.TrainConfig, bool, error) {
	// First pass: only --preset and --config, which set the defaults the
	// other flags override.
	pre := flag.NewFlagSet("train", flag.ContinueOnError)
	pre.SetOutput(io.Discard)
	preset := pre.String("preset", "", "")
	config := pre.String("config", "", "")
	method := pre.String("method", "", "")
	_ = pre.Parse(filterFlags(args, "preset", "config", "method"))
	if err := checkGivenOnce(args, "preset", "config"); err != nil {
		return runner.TrainConfig{}, false, err
	}

	if out, resuming := resumeTarget(args); resuming {
		return parseResume(args, out, *preset != "" || *config != "", stderr)
	}
	cfg := base
	if *method != "" {
		cfg.Method = *method // presets pick σ by method
	}
	if m, ok := runner.LookupMethod(cfg.Method); *preset == "" && ok && m.Family == runner.FamilyPDP {
		// The default job's settings (target ε, corruption) do not apply to
		// personalized DP: start from the paper's MNIST settings instead.
		*preset = "pdp-mnist"
	}
	if *preset != "" {
		if err := runner.ApplyPreset(&cfg, *preset); err != nil {
			return cfg, false, err
		}
		cfg.Out = "runs/" + *preset
	}
	if *config != "" {
		if err := runner.LoadConfigFile(*config, &cfg); err != nil {
			return cfg, false, err
		}
	}

	fs, resume := trainFlagSet(&cfg, *preset, *config, stderr)
	if err := parseArgs(fs, args); err != nil {
		return cfg, false, err
	}
	if fs.NArg() > 0 {
		return cfg, false, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	if err := checkMethodFlags(fs, cfg.Method); err != nil {
		return cfg, false, err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if err := readFileFlags(fs, &cfg, set); err != nil {
		return cfg, false, err
	}
	if set["corruption"] && cfg.Corruption == "none" && !set["corruption-ratio"] {
		cfg.CorruptionRatio = 0 // --corruption none needs no ratio
	}
	if !cfg.Private() && !set["target-epsilon"] {
		cfg.TargetEpsilon = 0 // the default budget applies to private methods only
	}
	if err := absDataDir(&cfg); err != nil {
		return cfg, false, err
	}
	if err := cfg.Validate(); err != nil {
		return cfg, false, err
	}
	return cfg, *resume, nil
}

// parseResume is parseTrainFlagsFrom for --resume of the run in out:
// the stored configuration with the flags that may change (presetOrConfig:
// --preset or --config was given, which a resume refuses).
func parseResume(args []string, out string, presetOrConfig bool, stderr io.Writer) (runner.TrainConfig, bool, error) {
	if presetOrConfig {
		return runner.TrainConfig{}, false, errors.New("--resume continues the run as stored in its directory: --preset and --config cannot be combined with it")
	}
	stored, err := runner.ReadRunConfig(out)
	if err != nil {
		if holder, inUse := fileutil.InUse(out); inUse {
			// The first process has locked the directory but not yet
			// written its configuration.
			return stored, false, fmt.Errorf("resume: run directory %s is in use by %s", out, holder)
		}
		return stored, false, fmt.Errorf("resume: %w", err)
	}
	cfg, err := parseResumeFlags(args, stored, stderr)
	return cfg, true, err
}

// checkGivenOnce refuses a flag of names given more than once.
func checkGivenOnce(args []string, names ...string) error {
	for _, name := range names {
		n := 0
		for _, a := range filterFlags(args, name) {
			if f, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "="); strings.HasPrefix(a, "-") && f == name {
				n++
			}
		}
		if n > 1 {
			return fmt.Errorf("--%s given twice: one %s per run (flags override it)", name, name)
		}
	}
	return nil
}

// readFileFlags reads the files --noise-key-file and --model-file name
// into cfg (set: the flags given).
func readFileFlags(fs *flag.FlagSet, cfg *runner.TrainConfig, set map[string]bool) error {
	if path := fs.Lookup("noise-key-file").Value.String(); path != "" {
		k, err := runner.ReadNoiseKeyFile(path)
		if err != nil {
			return err
		}
		cfg.NoiseKey = &k
	}
	if path := fs.Lookup("model-file").Value.String(); path != "" {
		nw, err := model.ReadNetworkFile(path)
		if err != nil {
			return err
		}
		cfg.Network = &nw
		if !set["model"] { // name the network after its file
			cfg.Model = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
		}
	}
	return nil
}

// trainFlagSet defines the train flags on cfg (their defaults are cfg's
// current values).
func trainFlagSet(cfg *runner.TrainConfig, preset, config string, stderr io.Writer) (*flag.FlagSet, *bool) {
	fs := flag.NewFlagSet("trainer train", flag.ContinueOnError)
	fs.SetOutput(stderr)
	setUsage(fs, "trainer train [flags]   (defaults, then --preset, then --config, then the other flags)")
	fs.String("preset", preset, "hyper-parameter preset: "+alternatives(presetNames()))
	fs.String("config", config, "JSON or YAML config file (flags override it)")
	fs.StringVar(&cfg.Method, "method", cfg.Method, methodHelp())
	fs.StringVar(&cfg.Rule, "rule", cfg.Rule, "aggregation rule for nonprivate-robust: "+alternatives(aggregate.Names()))
	fs.StringVar(&cfg.Dataset, "dataset", cfg.Dataset, alternatives(datasets.Names()))
	fs.StringVar(&cfg.DataDir, "data-dir", cfg.DataDir, "data directory (default $PRIVTRAIN_DATA; MNIST needs none)")
	fs.StringVar(&cfg.Model, "model", cfg.Model, alternatives(model.Names())+" (with --model-file: the network's name)")
	fs.String("model-file", "", "JSON or YAML network description to train instead of a registered --model (see model.Network)")
	fs.IntVar(&cfg.BatchSize, "batch-size", cfg.BatchSize, "expected batch size (Poisson rate q = batch/N)")
	fs.Float64Var(&cfg.SamplingRate, "q", cfg.SamplingRate, "Poisson sampling rate (overrides --batch-size)")
	fs.Float64Var(&cfg.LR, "lr", cfg.LR, "learning rate")
	fs.Float64Var(&cfg.LRFail, "lr-fail", cfg.LRFail, "learning rate after a failed PTR test (0: --lr)")
	fs.Float64Var(&cfg.LRPass, "lr-pass", cfg.LRPass, "learning rate after a passed PTR test (0: --lr)")
	fs.Float64Var(&cfg.Sigma, "sigma", cfg.Sigma, "noise multiplier σ")
	fs.Float64Var(&cfg.ClipNorm, "clip", cfg.ClipNorm, "per-example clipping norm R")
	fs.Float64Var(&cfg.Delta, "delta", cfg.Delta, "target δ")
	fs.Float64Var(&cfg.TargetEpsilon, "target-epsilon", cfg.TargetEpsilon, "train until the next step would exceed this ε (0: no budget stop)")
	fs.Float64Var(&cfg.Epochs, "epochs", cfg.Epochs, "number of epochs (ignored when --steps > 0)")
	fs.IntVar(&cfg.Steps, "steps", cfg.Steps, "number of steps")
	fs.StringVar(&cfg.Conversion, "conversion", cfg.Conversion, "RDP to (ε,δ) conversion: bbg | mironov")
	fs.StringVar(&cfg.Bound, "bound", cfg.Bound, "subsampled-PTR bound: auto | whitebox | blackbox")
	fs.StringVar(&cfg.Accountant, "accountant", cfg.Accountant, "privacy accountant: pld | rdp | any registered one (default: pld where the step mechanism has a proven PLD, else rdp)")
	fs.Float64Var(&cfg.PLDInterval, "pld-interval", cfg.PLDInterval, "PLD discretization interval (0: 1e-4)")
	fs.BoolVar(&cfg.AllowUnproven, "allow-unproven", cfg.AllowUnproven, "allow bounds outside their proven conditions (reported)")
	fs.Float64Var(&cfg.Tau, "tau", cfg.Tau, "PTR proposed sensitivity τ in gradient-norm units, 0 < τ < R (trainer account --tau takes τ/R)")
	fs.Float64Var(&cfg.LaplaceB, "b", cfg.LaplaceB, "PTR Laplace scale b")
	fs.Float64Var(&cfg.Delta0, "delta0", cfg.Delta0, "PTR failure probability δ₀")
	fs.Float64Var(&cfg.TrimFraction, "trim-fraction", cfg.TrimFraction, "trim level F as a fraction of the expected batch (tsum, ptr-tsum, krum's f; coord-trimmed-mean's β)")
	fs.BoolVar(&cfg.DynamicF, "dynamic-f", cfg.DynamicF, "adapt F after each PTR test (Remark 5.3)")
	fs.Float64Var(&cfg.DynamicRate, "dynamic-f-rate", cfg.DynamicRate, "F change per test as a fraction of the batch")
	fs.BoolVar(&cfg.DynamicIncreaseOnPass, "dynamic-f-increase-on-pass", cfg.DynamicIncreaseOnPass, "use appendix B.1.3's direction (increase F on a passed test)")
	fs.Float64Var(&cfg.CenteredClipRadius, "cc-radius", cfg.CenteredClipRadius, "radius ρ of the centered-clip rule")
	fs.StringVar(&cfg.Corruption, "corruption", cfg.Corruption, alternatives(corruption.Kinds()))
	fs.Float64Var(&cfg.CorruptionRatio, "corruption-ratio", cfg.CorruptionRatio, "fraction of training examples corrupted (none: 0; train defaults to no corruption, the default job to label-flip 0.1)")
	fs.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "public seed (published in config.json): model initialization, corruption plan, non-private batches; the privacy noise never derives from it")
	fs.String("noise-key-file", "", "secret key of the privacy noise and sampling (64 hex digits, mode 0600; e.g. an earlier run's private/noise.key): with the same --seed the run is bit-identical (default: a fresh key from the OS)")
	fs.BoolVar(&cfg.FloatNoise, "float-noise", cfg.FloatNoise, "opt out of the secure (floating-point-safe) release, the default of every private method: float noise, whose guarantee does NOT hold against floating-point attacks (Mironov, CCS 2012)")
	fs.Var(deprecatedSecureNoise{stderr}, "secure-noise", "deprecated, does nothing: secure noise is the default (--float-noise opts out)")
	fs.StringVar(&cfg.Out, "out", cfg.Out, "run directory")
	fs.IntVar(&cfg.CheckpointEvery, "checkpoint-every", cfg.CheckpointEvery, "checkpoint every N steps (0: only at the end)")
	fs.IntVar(&cfg.EvalEvery, "eval-every", cfg.EvalEvery, "evaluate test accuracy every N steps (0: every epoch, ⌈N/batch⌉ steps; -1: only at the end)")
	addPDPFlags(fs, &cfg.PDP)
	addMethodOptionFlags(fs, cfg)
	addOptimizerFlags(fs, &cfg.OptimizerSettings)
	resume := fs.Bool("resume", false, "continue the run in --out exactly as stored (only --steps, --epochs, --target-epsilon, --data-dir, --checkpoint-every, --eval-every may be given; a length change is checked and recorded in changes.jsonl)")
	return fs, resume
}

// filterFlags keeps only the named flags (and their values) from args.
func filterFlags(args []string, names ...string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := strings.TrimLeft(args[i], "-")
		name, _, hasValue := strings.Cut(a, "=")
		for _, n := range names {
			if name == n && strings.HasPrefix(args[i], "-") {
				out = append(out, args[i])
				if !hasValue && i+1 < len(args) {
					out = append(out, args[i+1])
					i++
				}
			}
		}
	}
	return out
}

// freeRunDir returns dir, or dir-2, dir-3, … : the first that is missing
// or empty (holds neither a run nor anything else).
func freeRunDir(dir string) string {
	for i := 1; ; i++ {
		d := dir
		if i > 1 {
			d = fmt.Sprintf("%s-%d", dir, i)
		}
		if entries, err := os.ReadDir(d); os.IsNotExist(err) || err == nil && len(entries) == 0 {
			return d
		}
	}
}

// deprecatedSecureNoise is --secure-noise, which asked for the secure
// release when float noise was the default. It is accepted and does
// nothing (secure is the default); --secure-noise=false, which meant float
// noise, is refused so that a script asking for float noise says
// --float-noise.
type deprecatedSecureNoise struct{ stderr io.Writer }

func (deprecatedSecureNoise) String() string   { return "true" }
func (deprecatedSecureNoise) IsBoolFlag() bool { return true }

func (d deprecatedSecureNoise) Set(v string) error {
	on, err := strconv.ParseBool(v)
	if err != nil {
		return err
	}
	if !on {
		return errors.New("--secure-noise=false no longer selects float noise: secure noise is the default; opt out with --float-noise")
	}
	fmt.Fprintln(d.stderr, "note: --secure-noise is deprecated and does nothing: secure noise is the default (--float-noise opts out)")
	return nil
}
