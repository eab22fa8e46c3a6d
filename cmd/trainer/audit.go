package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/privtrain/privtrain/aggregate"
	aggaudit "github.com/privtrain/privtrain/aggregate/audit"
	"github.com/privtrain/privtrain/privacy"
	"github.com/privtrain/privtrain/runner"
)

const auditUsage = `usage: trainer audit mechanism|run [flags]

  mechanism  one-step audit of a private aggregation rule: --rule NAME [rule flags]
             --delta D --samples N [--confidence C] [--tests all|real] [--case NAME,…] [--json]
  run        one-run audit (Steinke, Nasr & Jagielski 2023) of a training run: any
             'trainer train' flags (method, dataset, σ, steps, …) plus [--canaries M]
             [--canary-norm X] [--guesses K,…] [--confidence C] [--json]

The empirical ε is a lower confidence bound: with probability ≥ confidence the
rule (run) is not (ε, δ)-DP for any smaller ε. Both audit the secure
(floating-point-safe) release by default; --float-noise audits the float one.
Exit status: 0 when every test stays below its claim, 3 when a test exceeds it
(with the setting that would fix it on stderr), 2 on bad arguments, 1 when the
audit fails. Run 'trainer audit mechanism -h' for the rule flags.
`

// exitExceeds is the exit status of an audit whose empirical ε exceeds the
// claimed ε, so that CI can gate on it.
const exitExceeds = 3

// runAudit implements `trainer audit mechanism|run`: exit 0 when every
// test is below its claim, 3 when one exceeds it, 2 on bad arguments, 1
// when the audit fails.
func runAudit(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, auditUsage)
		return 2
	}
	if isHelpArg(args[0]) {
		fmt.Fprint(stdout, auditUsage)
		return 0
	}
	switch args[0] {
	case "mechanism":
		return auditMechanism(args[1:], stdout, stderr)
	case "run":
		return auditRun(args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "trainer audit: %s\n", unknownName("subcommand", args[0], auditSubcommands))
	return 2
}

// auditSubcommands are the subcommands of `trainer audit`.
var auditSubcommands = []string{"mechanism", "run"}

// mechanismOutput is the JSON of `trainer audit mechanism`.
type mechanismOutput struct {
	*aggaudit.Result
	ClaimedEpsilon   privacy.JSONFloat `json:"claimed_epsilon"`
	ClaimOrder       privacy.JSONFloat `json:"claim_order"`
	EmpiricalEpsilon privacy.JSONFloat `json:"empirical_epsilon"`
}

func auditMechanism(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("trainer audit mechanism", flag.ContinueOnError)
	setUsage(fs, "trainer audit mechanism --rule NAME [flags]")
	var cfg aggregate.Config
	var opt aggaudit.Options
	rule := fs.String("rule", "", "registered aggregation rule (e.g. sum, tsum, ptr-tsum, rgm-sum)")
	fs.Float64Var(&cfg.Sigma, "sigma", 1.1, "noise multiplier σ")
	fs.Float64Var(&cfg.ClipNorm, "clip", 1, "clip norm R")
	fs.IntVar(&cfg.F, "f", 0, "trim level F (tsum, ptr-tsum)")
	fs.Float64Var(&cfg.Tau, "tau", 0.5, "PTR proposed sensitivity τ (gradient-norm units; 0 < τ < R; default: the PTR paper's τ = R/2 at R = 1)")
	fs.Float64Var(&cfg.B, "b", 1, "PTR Laplace scale b")
	fs.Float64Var(&cfg.Delta0, "delta0", 1e-8, "PTR failure probability δ₀")
	fs.Float64Var(&cfg.RGM.Eta, "eta", 0, "rgm-sum relative sensitivity η")
	fs.Float64Var(&cfg.RGM.RRel, "r-rel", 0, "rgm-sum absolute sensitivity term R_rel")
	fs.Float64Var(&cfg.RGM.Gamma, "gamma", 0, "rgm-sum relative noise scale γ")
	fs.Float64Var(&cfg.RGM.Sigma, "rgm-sigma", 0, "rgm-sum baseline noise σ")
	floatNoise := fs.Bool("float-noise", false, "audit the float release instead of the secure (floating-point-safe) one, the default; rules without a secure release (centered-clip, rgm-sum, …) need it")
	fs.Var(deprecatedSecureNoise{stderr}, "secure-noise", "deprecated, does nothing: the secure release is audited by default (--float-noise audits the float one)")
	fs.Float64Var(&opt.Delta, "delta", 1e-5, "δ at which ε is bounded")
	fs.IntVar(&opt.Samples, "samples", 1000000, "releases per batch and case (half select the test, half evaluate it)")
	fs.Float64Var(&opt.Confidence, "confidence", 0.95, "confidence of the reported bound (over all cases)")
	fs.IntVar(&opt.Dim, "dim", 2, "gradient dimension of the audit batches")
	fs.IntVar(&opt.Workers, "workers", 0, "goroutines (0: all cores)")
	fs.Uint64Var(&opt.Seed, "seed", 1, "random seed")
	fs.StringVar(&opt.Tests, "tests", aggaudit.TestsAll, "all (real-valued and float32-granularity tests) | real (the mechanism over the reals)")
	cases := fs.String("case", "", "comma-separated cases to run (default: all of the rule's cases)")
	asJSON := fs.Bool("json", false, "print JSON on stdout")
	if err := parseArgs(fs, args); err != nil {
		if printHelp(err, stdout) {
			return 0
		}
		fmt.Fprintf(stderr, "trainer audit mechanism: %v\n", err)
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "trainer audit mechanism: unexpected arguments: %s\n", strings.Join(fs.Args(), " "))
		return 2
	}
	if *rule == "" {
		fmt.Fprintf(stderr, "trainer audit mechanism: --rule is required (registered: %s)\n", strings.Join(aggregate.Names(), ", "))
		return 2
	}
	// The library reads 0 as "default"; on the command line it is a value.
	if msg := auditRange(opt.Confidence, opt.Dim, opt.Workers); msg != "" {
		fmt.Fprintf(stderr, "trainer audit mechanism: %s\n", msg)
		return 2
	}
	cfg.RGM.Dim = opt.Dim
	if *cases != "" {
		opt.Cases = strings.Split(*cases, ",")
	}
	cfg.FloatNoise = *floatNoise
	if _, err := aggregate.New(*rule, cfg); err != nil {
		msg := oneLine(err.Error())
		if !cfg.FloatNoise && strings.Contains(msg, "no secure-noise mode") {
			msg += "; audit its float release with --float-noise"
		}
		fmt.Fprintf(stderr, "trainer audit mechanism: %s\n", msg)
		return 2
	}
	res, err := aggaudit.Rule(*rule, cfg, opt)
	if err != nil {
		fmt.Fprintf(stderr, "trainer audit mechanism: %s\n", oneLine(err.Error()))
		if errors.Is(err, aggaudit.ErrOptions) {
			return 2
		}
		return 1
	}
	if *asJSON {
		b, err := json.Marshal(mechanismOutput{res, privacy.JSONFloat(res.ClaimedEpsilon), privacy.JSONFloat(res.ClaimOrder), privacy.JSONFloat(res.EmpiricalEpsilon)})
		if err != nil {
			fmt.Fprintf(stderr, "trainer audit mechanism: encoding JSON: %v\n", err)
			return 1
		}
		fmt.Fprintln(stdout, string(b))
		return mechanismExit(res, *rule, cfg, stderr)
	}
	verdict := "below the claim"
	if res.Exceeds {
		verdict = "ABOVE THE CLAIM: the rule leaks more than its accounting says"
	}
	fmt.Fprintf(stdout, "rule %s, %s, mechanism %s, δ = %g, %d releases per batch and case, %s tests\n", res.Rule, noiseLabel(!cfg.FloatNoise), res.Mechanism.Kind, res.Delta, res.Samples, res.Tests)
	fmt.Fprintf(stdout, "claimed ε = %.4f (one step, RDP order %g); empirical ε ≥ %.4f at confidence %g (case %s): %s\n",
		res.ClaimedEpsilon, res.ClaimOrder, res.EmpiricalEpsilon, res.Confidence, res.Case, verdict)
	if res.ClaimedEpsilonPLD != nil {
		v := "below"
		if res.ExceedsPLD {
			v = "ABOVE"
		}
		fmt.Fprintf(stdout, "PLD claim ε = %.4f (one step, %s): empirical ε %s it\n", *res.ClaimedEpsilonPLD, privacy.KindPLD, v)
	}
	w := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "case\tempirical ε\tpass rate D/D′\tseconds\ttest")
	for _, c := range res.Cases {
		pass := "-"
		if c.PassRateD != nil {
			pass = fmt.Sprintf("%.4f/%.4f", *c.PassRateD, *c.PassRateDPrime)
		}
		fmt.Fprintf(w, "%s\t%.4f\t%s\t%.1f\t%s\n", c.Case, c.EmpiricalEpsilon, pass, c.Seconds, c.Test)
	}
	w.Flush()
	return mechanismExit(res, *rule, cfg, stderr)
}

// noiseLabel names the audited release.
func noiseLabel(secure bool) string {
	if secure {
		return "secure release (floating-point safe)"
	}
	return "FLOAT-noise release (--float-noise: not floating-point safe)"
}

// mechanismExit returns 0, or 3 when the audit exceeds the claim, printing
// on stderr which setting would fix it.
func mechanismExit(res *aggaudit.Result, rule string, cfg aggregate.Config, stderr io.Writer) int {
	if !res.Exceeds {
		return 0
	}
	granularity := false
	for _, c := range res.Cases {
		if c.Case == res.Case && strings.Contains(c.Test, "float32 granularity") {
			granularity = true
		}
	}
	sec := cfg
	sec.FloatNoise = false
	_, err := aggregate.New(rule, sec)
	fmt.Fprintf(stderr, "trainer audit mechanism: empirical ε %.4f exceeds the claimed %.4f (case %s)\n", res.EmpiricalEpsilon, res.ClaimedEpsilon, res.Case)
	fmt.Fprintf(stderr, "fix: %s\n", exceedsFix(cfg.FloatNoise, err == nil, granularity, res.Confidence))
	return exitExceeds
}

// exceedsFix says which setting would bring an audit that exceeds its claim
// below it: the secure release for float noise (its leak is the
// floating-point one, Mironov CCS 2012); otherwise the claim itself is in
// doubt.
func exceedsFix(float, secureAvailable, granularity bool, confidence float64) string {
	switch {
	case float && secureAvailable:
		return "drop --float-noise: the secure release is floating-point safe (exact integer sums, exactly sampled noise), so the float32-granularity leak disappears at no cost in ε"
	case float && granularity:
		return "this rule has no secure release, and its float release leaks through the float32 granularity of its outputs (Mironov, CCS 2012): use a rule with a secure release (sum, tsum, ptr-tsum), or audit the mechanism over the reals only with --tests real"
	default:
		return fmt.Sprintf("no setting fixes this: the release leaks more than its accounting claims, which is evidence of a bug (or, with probability ≤ %.3g, chance: re-run with another --seed); do not release models trained with it", 1-confidence)
	}
}

// maxScale bounds --canary-norm (a multiple of the clip norm).
const maxScale = 1e6

// auditRange checks the audit flags that the library would read as
// "default" when 0: the message, or "" when they are valid.
func auditRange(confidence float64, dim, workers int) string {
	switch {
	case !(confidence > 0 && confidence < 1):
		return fmt.Sprintf("--confidence must be in (0, 1), got %v", confidence)
	case dim < 1:
		return fmt.Sprintf("--dim must be ≥ 1, got %d", dim)
	case workers < 0:
		return fmt.Sprintf("--workers must be ≥ 0 (0: all cores), got %d", workers)
	}
	return ""
}

// runAuditFlags are the flags of `trainer audit run` besides the train flags.
var runAuditFlags = []string{"canaries", "canary-norm", "guesses", "confidence", "json"}

func auditRun(args []string, stdout, stderr io.Writer) int {
	own, rest := splitFlags(args, runAuditFlags...)
	fs := flag.NewFlagSet("trainer audit run", flag.ContinueOnError)
	setUsage(fs, "trainer audit run [audit flags] [trainer train flags]\naudit flags:")
	var opt runner.RunAuditOptions
	fs.IntVar(&opt.Canaries, "canaries", 1000, "number m of gradient canaries (each included with probability ½)")
	fs.Float64Var(&opt.Norm, "canary-norm", 1, "canary gradient norm as a multiple of the clip norm R")
	guesses := fs.String("guesses", "", "comma-separated guess counts (default m/50, m/20, m/10, m/5, m/2, m)")
	fs.Float64Var(&opt.Confidence, "confidence", 0.95, "confidence of the reported bound")
	asJSON := fs.Bool("json", false, "print JSON on stdout")
	if err := parseArgs(fs, own); err == nil && len(rest) > 0 && rest[0] == "help" {
		rest[0] = "--help" // `trainer audit run help`
	} else if err != nil {
		fmt.Fprintf(stderr, "trainer audit run: %v\n", err)
		return 2
	}
	if msg := auditRange(opt.Confidence, 1, 0); msg != "" || opt.Canaries < 1 || !(opt.Norm > 0 && opt.Norm <= maxScale) {
		if msg == "" {
			msg = fmt.Sprintf("--canaries must be ≥ 1 and --canary-norm in (0, %g], got %d and %v", maxScale, opt.Canaries, opt.Norm)
		}
		fmt.Fprintf(stderr, "trainer audit run: %s\n", msg)
		return 2
	}
	if *guesses != "" {
		for _, s := range strings.Split(*guesses, ",") {
			k, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil {
				fmt.Fprintf(stderr, "trainer audit run: --guesses: %q is not an integer\n", s)
				return 2
			}
			opt.Guesses = append(opt.Guesses, k)
		}
	}
	cfg, _, err := parseTrainFlags(rest, stderr)
	if errors.Is(err, flag.ErrHelp) {
		printHelp(&helpRequest{fs}, stdout)
		fmt.Fprint(stdout, "train flags (the run to audit):\n")
		printHelp(err, stdout)
		return 0
	}
	if err != nil {
		msg := oneLine(err.Error())
		if name, ok := strings.CutPrefix(msg, "unknown flag --"); ok {
			// The flag may be a misspelt audit flag rather than a train flag.
			name, _, _ = strings.Cut(name, ":")
			name, _, _ = strings.Cut(name, " ")
			if s := suggest(name, runAuditFlags); s != "" {
				msg = fmt.Sprintf("unknown flag --%s: did you mean --%s? (see trainer audit run --help)", name, s)
			}
		}
		msg = strings.ReplaceAll(msg, "(see trainer train --help)", "(see trainer audit run --help)")
		fmt.Fprintf(stderr, "trainer audit run: %s\n", msg)
		return 2
	}
	if !*asJSON {
		opt.Progress = stderr
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res, err := runner.AuditRun(ctx, cfg, opt)
	if err != nil {
		fmt.Fprintf(stderr, "trainer audit run: %s\n", oneLine(err.Error()))
		if errors.Is(err, runner.ErrRunAuditOptions) || strings.Contains(err.Error(), "invalid configuration") {
			return 2
		}
		return 1
	}
	if *asJSON {
		b, err := json.Marshal(struct {
			*runner.RunAuditResult
			ClaimedEpsilon privacy.JSONFloat `json:"claimed_epsilon"`
		}{res, privacy.JSONFloat(res.ClaimedEpsilon)})
		if err != nil {
			fmt.Fprintf(stderr, "trainer audit run: encoding JSON: %v\n", err)
			return 1
		}
		fmt.Fprintln(stdout, string(b))
		return runAuditExit(res, stderr)
	}
	fmt.Fprintf(stdout, "method %s on %s (%s): %d steps, q = %.5g, σ = %g, test accuracy %.2f%%, %d canary rows, %.0fs\n",
		res.Method, res.Dataset, res.Model, res.Steps, res.Q, res.Sigma, 100*res.TestAccuracy, res.CanaryRows, res.WallSeconds)
	fmt.Fprintf(stdout, "noise: %s\n", res.Noise)
	fmt.Fprintf(stdout, "claimed ε = %.4f at δ = %g by the %s accountant; empirical ε ≥ %.4f at confidence %g (%s audit, %d canaries)\n",
		res.ClaimedEpsilon, res.Delta, res.Accountant, res.EmpiricalEpsilon, res.Confidence, res.Case, res.Samples)
	for _, a := range []struct {
		name string
		r    any
	}{{"final model", res.FinalModel}, {"white box", res.WhiteBox}} {
		b, _ := json.Marshal(a.r)
		fmt.Fprintf(stdout, "  %s: %s\n", a.name, b)
	}
	return runAuditExit(res, stderr)
}

// runAuditExit returns 0, or 3 when the run's empirical ε exceeds its
// claim, printing on stderr which setting would fix it.
func runAuditExit(res *runner.RunAuditResult, stderr io.Writer) int {
	if !res.Exceeds {
		return 0
	}
	fmt.Fprintf(stderr, "trainer audit run: empirical ε %.4f exceeds the claimed %.4f (%s audit)\n", res.EmpiricalEpsilon, res.ClaimedEpsilon, res.Case)
	fmt.Fprintf(stderr, "fix: %s\n", exceedsFix(res.FloatNoise, true, false, res.Confidence))
	return exitExceeds
}

// splitFlags separates the named flags (with their values) from the other
// arguments.
func splitFlags(args []string, names ...string) (named, rest []string) {
	for i := 0; i < len(args); i++ {
		a := strings.TrimLeft(args[i], "-")
		name, _, hasValue := strings.Cut(a, "=")
		match := false
		for _, n := range names {
			if name == n && strings.HasPrefix(args[i], "-") {
				match = true
			}
		}
		if !match {
			rest = append(rest, args[i])
			continue
		}
		named = append(named, args[i])
		// Boolean flags take no separate value.
		if !hasValue && name != "json" && i+1 < len(args) {
			named = append(named, args[i+1])
			i++
		}
	}
	return named, rest
}
