package main

import (
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/privtrain/privtrain/runner"
)

// resumeTarget finds --resume and --out in args without parsing the rest.
func resumeTarget(args []string) (out string, resume bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch name {
		case "resume":
			resume = !hasVal || val == "true" || val == "1" || val == "t" || val == "T" || val == "TRUE" || val == "True"
		case "out":
			if hasVal {
				out = val
			} else if i+1 < len(args) {
				out = args[i+1]
				i++
			}
		}
	}
	return out, resume
}

// resumeMutableFlags may be given with --resume; any other flag must repeat
// the stored value.
var resumeMutableFlags = map[string]bool{
	"out": true, "resume": true, "data-dir": true, "checkpoint-every": true, "eval-every": true,
	"steps": true, "epochs": true, "target-epsilon": true,
	"noise-key-file": true, // checked against the run's private/noise.key
}

// parseResumeFlags parses args on top of the stored configuration: a flag
// that would change anything but the run length, the data directory or the
// checkpoint/evaluation frequency is an error naming it.
func parseResumeFlags(args []string, stored runner.TrainConfig, stderr io.Writer) (runner.TrainConfig, error) {
	parsed := stored
	fs, _ := trainFlagSet(&parsed, "", "", stderr)
	if err := fs.Parse(args); err != nil {
		return stored, err
	}
	if fs.NArg() > 0 {
		return stored, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	var errs []string
	fs.Visit(func(f *flag.Flag) {
		if !resumeMutableFlags[f.Name] && f.Value.String() != f.DefValue {
			stored := f.DefValue
			if stored == "" {
				stored = "(unset: the method's default)"
			}
			errs = append(errs, fmt.Sprintf("--%s %s conflicts with the stored value %s", f.Name, f.Value, stored))
		}
	})
	if len(errs) > 0 {
		return stored, fmt.Errorf("resume: %s: a resumed run continues exactly as stored in %s; only --steps, --epochs, --target-epsilon (checked and recorded), --data-dir, --checkpoint-every and --eval-every may be given",
			strings.Join(errs, "; "), parsed.Out)
	}
	// Take only the mutable fields from the flags; everything else (also
	// the PDP flags' built-in defaults) stays as stored.
	c := stored
	c.Out, c.DataDir, c.CheckpointEvery, c.EvalEvery = parsed.Out, parsed.DataDir, parsed.CheckpointEvery, parsed.EvalEvery
	c.Steps, c.Epochs, c.TargetEpsilon = parsed.Steps, parsed.Epochs, parsed.TargetEpsilon
	if path := fs.Lookup("noise-key-file").Value.String(); path != "" {
		k, err := runner.ReadNoiseKeyFile(path)
		if err != nil {
			return c, err
		}
		c.NoiseKey = &k // the runner checks it is the run's key
	}
	if err := absDataDir(&c); err != nil {
		return c, err
	}
	if err := c.Validate(); err != nil {
		return c, err
	}
	return c, nil
}

// methodFlags lists, for flags that only some methods use, the methods that
// use them: giving one to another method is an error, never silence.
var methodFlags = func() map[string][]string {
	ptr := []string{"tsgd-ptr"}
	trim := []string{"tsgd-gaussian", "tsgd-ptr", "nonprivate-robust"}
	sgd := []string{"nonprivate", "dpsgd", "tsgd-gaussian", "tsgd-ptr", "nonprivate-robust"}
	private := []string{"dpsgd", "tsgd-gaussian", "tsgd-ptr"}
	pdp := []string{"pdp-sgd", "pdp-sampling", "pdp-adapdp", "pdp-dpsgd"}
	m := map[string][]string{
		"rule": {"nonprivate-robust"}, "cc-radius": {"nonprivate-robust"},
		"tau": ptr, "b": ptr, "delta0": ptr, "dynamic-f": ptr, "dynamic-f-rate": ptr,
		"dynamic-f-increase-on-pass": ptr, "lr-fail": ptr, "lr-pass": ptr, "bound": ptr,
		"trim-fraction":  trim,
		"sigma":          append(append([]string{}, private...), "pdp-adapdp"),
		"target-epsilon": private, "allow-unproven": private,
		"epochs": sgd, "eval-every": sgd, "corruption": sgd, "corruption-ratio": sgd,
		"clip":  append(append([]string{"nonprivate-robust"}, private...), pdp...),
		"delta": append(append([]string{}, private...), pdp...), "conversion": append(append([]string{}, private...), pdp...),
		"noise-guard": {"pdp-sgd"}, "adapdp-rounds": {"pdp-adapdp"}, "sampling-draw": {"pdp-sampling"},
		"float-noise": append(append([]string{}, private...), pdp...),
	}
	m["noise-key-file"] = append(append([]string{}, private...), pdp...)
	for _, f := range optimizerFlags {
		m[f] = sgd
	}
	for _, f := range []string{"threshold-loss", "w1", "w2", "rounds", "round-epochs", "budgets", "budget-groups", "budget-min", "budget-max", "budget-k", "pdp-accounting"} {
		m[f] = pdp
	}
	return m
}()

// checkMethodFlags rejects flags given explicitly (with a value other than
// zero, false or none) that the method ignores.
func checkMethodFlags(fs *flag.FlagSet, method string) error {
	var bad []string
	fs.Visit(func(f *flag.Flag) {
		switch f.Value.String() {
		case "0", "false", "", "none":
			return // asks for nothing the method would ignore
		}
		if users, ok := methodFlags[f.Name]; ok && !contains(users, method) {
			bad = append(bad, fmt.Sprintf("--%s (used by %s)", f.Name, strings.Join(users, ", ")))
		}
	})
	if len(bad) > 0 {
		return fmt.Errorf("method %s does not use %s", method, strings.Join(bad, "; "))
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// absDataDir stores a relative --data-dir as an absolute path, so that the
// run resumes from any working directory.
func absDataDir(c *runner.TrainConfig) error {
	if c.DataDir == "" {
		return nil
	}
	abs, err := filepath.Abs(c.DataDir)
	if err != nil {
		return fmt.Errorf("--data-dir: %w", err)
	}
	c.DataDir = abs
	return nil
}
