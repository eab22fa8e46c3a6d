package main

import (
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
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
	if err := parseArgs(fs, args); err != nil {
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

// checkMethodFlags rejects flags given explicitly (with a value other than
// zero, false or none) that the method ignores.
// Which methods use which flag is the method registry's
// (runner.MethodFlags).
func checkMethodFlags(fs *flag.FlagSet, method string) error {
	users := runner.MethodFlags()
	var bad []string
	fs.Visit(func(f *flag.Flag) {
		switch f.Value.String() {
		case "0", "false", "", "none":
			return // asks for nothing the method would ignore
		}
		if users, ok := users[f.Name]; ok && !contains(users, method) {
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

// addMethodOptionFlags defines --NAME for every option a registered method
// declares (runner.Method.Options), stored in cfg.MethodOptions when given.
func addMethodOptionFlags(fs *flag.FlagSet, cfg *runner.TrainConfig) {
	for _, o := range runner.MethodOptions() {
		if fs.Lookup(o.Name) != nil {
			continue // a built-in flag wins; RegisterMethod's doc says so
		}
		fs.Var(methodOptionFlag{cfg, o}, o.Name, fmt.Sprintf("%s (default %g)", o.Usage, o.Default))
	}
}

// methodOptionFlag is the flag of one method option.
type methodOptionFlag struct {
	cfg *runner.TrainConfig
	opt runner.MethodOption
}

func (f methodOptionFlag) String() string {
	if f.cfg == nil {
		return ""
	}
	if v, ok := f.cfg.MethodOptions[f.opt.Name]; ok {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	return ""
}

func (f methodOptionFlag) Set(s string) error {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return err
	}
	if f.cfg.MethodOptions == nil {
		f.cfg.MethodOptions = map[string]float64{}
	}
	f.cfg.MethodOptions[f.opt.Name] = v
	return nil
}

// methodHelp is --method's help: the registered methods, then each one's
// summary (runner.Method.Summary).
func methodHelp() string {
	var b strings.Builder
	b.WriteString(alternatives(runner.Methods()))
	for _, n := range runner.Methods() {
		if m, ok := runner.LookupMethod(n); ok && m.Summary != "" {
			fmt.Fprintf(&b, "\n%s: %s", n, m.Summary)
		}
	}
	return b.String()
}
