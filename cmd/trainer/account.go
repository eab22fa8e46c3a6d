package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/privtrain/privtrain/privacy"
)

// accountUsage is the one-screen help of `trainer account`.
const accountUsage = `usage: trainer account rdp|epsilon|sigma [flags]

  rdp      RDP curve of one mechanism:   --mech M [mechanism flags] [--q Q --bound B] [--orders LIST]
  epsilon  (ε, δ) after T compositions: --mech M [mechanism flags] [--q Q --bound B] --steps T --delta D
           [--conversion mironov|bbg] [--orders LIST]; --mech ptr --direct: Theorem 4.2 + strong composition
  sigma    noise multiplier of DP-SGD:  --target-epsilon E --delta D --q Q --steps T [--conversion C] [--orders LIST]

--accountant NAME (epsilon, sigma) selects the accountant: pld, rdp or any registered one. The default
is the project's one rule (privacy.ChooseAccountant): rdp when an RDP option is given (--orders,
--conversion, --bound, --allow-unproven, --direct), else pld when every mechanism has a proven privacy
loss distribution whose losses the grid represents (gaussian, laplace, ptr, with or without --q), else
rdp; every output names its accountant and, for the default, why ("accountant_reason"). pld: a
privacy loss distribution (certified upper bound "epsilon", plus "epsilon_optimistic" from the
optimistic discretization, a lower estimate, and the "interval"):
  epsilon --accountant pld --mech gaussian --sigma S [--q Q] --steps N --delta D   (no --q: no subsampling)
  epsilon --accountant pld --mech laplace --b B [--q Q] --steps N --delta D      (sensitivity 1)
  epsilon --accountant pld --mech ptr --sigma1 S --tau T --b B --delta0 D0 [--q Q] --steps N --delta D
          (PTR's envelope pair, docs/ptr-pld.md; no white-box conditions)
  epsilon --accountant pld --history H.json --delta D   (H.json: [{"mech":"gaussian","sigma":S,"q":Q,"steps":N}, …])
  [--interval H] is the discretization interval of the loss axis (default 1e-4).

mechanisms: gaussian (--sigma), laplace (--b), ptr (--sigma1 --tau --b --delta0; σ2 = τ·σ1),
            rgm (--eta --gamma --dim [--sigma] [--r-rel])
--q Q wraps the mechanism in Poisson subsampling at rate Q ∈ (0,1] with --bound whitebox|blackbox|lower|auto.
--allow-unproven accepts bounds outside their proven conditions (the output then says so).
--json prints JSON on stdout; otherwise a table.
`

// accountFlags holds the parsed command line of `trainer account`.
type accountFlags struct {
	mech, bound, orders, conversion  string
	accountant, history              string
	interval                         float64
	q, sigma, b, sigma1, tau, delta0 float64
	eta, gamma, rRel, delta, target  float64
	dim, steps                       int
	direct, allowUnproven, json      bool
	set                              map[string]bool
}

// runAccount implements `trainer account rdp|epsilon|sigma`. It returns the
// process exit code: 0 on success, 2 on bad arguments, 1 when the
// computation itself fails; errors are one line on stderr.
func runAccount(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, accountUsage)
		return 2
	}
	if isHelpArg(args[0]) {
		fmt.Fprint(stdout, accountUsage)
		return 0
	}
	sub := args[0]
	if sub != "rdp" && sub != "epsilon" && sub != "sigma" {
		fmt.Fprintf(stderr, "trainer account: %s\n", unknownName("subcommand", sub, accountSubcommands))
		return 2
	}
	f, err := parseAccountFlags(sub, args[1:])
	if printHelp(err, stdout) {
		return 0
	}
	if err == nil {
		err = checkAccountantFlags(sub, f)
	}
	if err != nil {
		fmt.Fprintf(stderr, "trainer account %s: %s\n", sub, oneLine(err.Error()))
		return 2
	}
	var out accountOutput
	switch sub {
	case "rdp":
		out, err = accountRDP(f)
	case "epsilon":
		out, err = accountEpsilon(f)
	case "sigma":
		out, err = accountSigma(f)
	}
	if err != nil {
		code := 1
		var ue usageError
		if errors.As(err, &ue) {
			code = 2
		}
		fmt.Fprintf(stderr, "trainer account %s: %s\n", sub, oneLine(err.Error()))
		return code
	}
	if f.json {
		b, err := json.Marshal(out.json)
		if err != nil {
			fmt.Fprintf(stderr, "trainer account %s: encoding JSON: %v\n", sub, err)
			return 1
		}
		fmt.Fprintln(stdout, string(b))
	} else {
		out.table(stdout)
	}
	return 0
}

// accountSubcommands are the subcommands of `trainer account`.
var accountSubcommands = []string{"epsilon", "rdp", "sigma"}

// usageError marks an error caused by the arguments (exit code 2).
type usageError struct{ error }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func parseAccountFlags(sub string, args []string) (accountFlags, error) {
	var f accountFlags
	fs := flag.NewFlagSet("trainer account "+sub, flag.ContinueOnError)
	setUsage(fs, "trainer account "+sub+" [flags]   (trainer account --help: what each mechanism needs)")
	fs.StringVar(&f.mech, "mech", "", "mechanism: gaussian, laplace, ptr or rgm")
	fs.StringVar(&f.bound, "bound", string(privacy.SubsampleAuto), "subsampling bound: whitebox, blackbox, lower or auto")
	fs.StringVar(&f.orders, "orders", "", "comma-separated Rényi orders (default: Opacus' grid)")
	fs.StringVar(&f.conversion, "conversion", string(privacy.DefaultConversion), "RDP→DP conversion: mironov or bbg")
	fs.Float64Var(&f.q, "q", 0, "Poisson sampling rate in (0, 1]")
	fs.Float64Var(&f.sigma, "sigma", 0, "Gaussian noise multiplier (gaussian; baseline σ for rgm)")
	fs.Float64Var(&f.b, "b", 0, "Laplace scale (laplace, ptr)")
	fs.Float64Var(&f.sigma1, "sigma1", 0, "PTR: noise multiplier of the SUM branch")
	fs.Float64Var(&f.tau, "tau", 0, "PTR: normalized proposed sensitivity τ/R ∈ (0, 1] (train's --tau divided by its --clip R), σ2 = τ·σ1")
	fs.Float64Var(&f.delta0, "delta0", 0, "PTR: failure probability of the test")
	fs.Float64Var(&f.eta, "eta", 0, "RGM: relative sensitivity η")
	fs.Float64Var(&f.gamma, "gamma", 0, "RGM: relative noise scale γ")
	fs.Float64Var(&f.rRel, "r-rel", 0, "RGM: absolute sensitivity term R_rel")
	fs.IntVar(&f.dim, "dim", 0, "RGM: output dimension d")
	fs.IntVar(&f.steps, "steps", 0, "number of compositions T")
	fs.Float64Var(&f.delta, "delta", 0, "target δ in (0, 1)")
	fs.Float64Var(&f.target, "target-epsilon", 0, "target ε (sigma)")
	fs.BoolVar(&f.direct, "direct", false, "ptr: Theorem 4.2 composed by strong composition")
	fs.BoolVar(&f.allowUnproven, "allow-unproven", false, "accept bounds outside their proven conditions")
	fs.BoolVar(&f.json, "json", false, "JSON on stdout")
	fs.StringVar(&f.accountant, "accountant", "", "accountant: pld, rdp or any registered one (default: pld where the mechanism has a proven PLD, else rdp)")
	fs.StringVar(&f.history, "history", "", "pld: JSON list of compositions to account")
	fs.Float64Var(&f.interval, "interval", privacy.DefaultPLDInterval, "pld: discretization interval of the privacy loss")
	if err := parseArgs(fs, args); err != nil {
		return f, err
	}
	if fs.NArg() > 0 {
		return f, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	f.set = map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { f.set[fl.Name] = true })
	return f, nil
}

// parseOrders parses a comma-separated list of orders (each finite and > 1);
// an empty flag gives the default grid.
func parseOrders(f accountFlags) ([]float64, error) {
	if !f.set["orders"] {
		return privacy.DefaultOrders(), nil
	}
	var out []float64
	for _, s := range strings.Split(f.orders, ",") {
		s = strings.TrimSpace(s)
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, usagef("--orders: %q is not a number", s)
		}
		if !(v > 1) || math.IsInf(v, 0) {
			return nil, usagef("--orders: order %v must be finite and > 1", v)
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, usagef("--orders: empty list")
	}
	return out, nil
}

// need fails unless every named flag was given.
func need(f accountFlags, what string, names ...string) error {
	for _, n := range names {
		if !f.set[n] {
			return usagef("--%s is required for %s", n, what)
		}
	}
	return nil
}

// buildMechanism turns the mechanism flags into a validated Mechanism.
func buildMechanism(f accountFlags) (privacy.Mechanism, error) {
	var m privacy.Mechanism
	switch f.mech {
	case "":
		return nil, usagef("--mech is required (gaussian, laplace, ptr or rgm)")
	case "gaussian":
		if err := need(f, "--mech gaussian", "sigma"); err != nil {
			return nil, err
		}
		m = privacy.Gaussian{Sigma: f.sigma}
	case "laplace":
		if err := need(f, "--mech laplace", "b"); err != nil {
			return nil, err
		}
		m = privacy.Laplace{B: f.b}
	case "ptr":
		if err := need(f, "--mech ptr", "sigma1", "tau", "b", "delta0"); err != nil {
			return nil, err
		}
		m = privacy.PTR{Sigma1: f.sigma1, Tau: f.tau, B: f.b, Delta0: f.delta0}
	case "rgm":
		if err := need(f, "--mech rgm", "eta", "gamma", "dim"); err != nil {
			return nil, err
		}
		m = privacy.RGM{Eta: f.eta, Gamma: f.gamma, Dim: f.dim, Sigma: f.sigma, RRel: f.rRel}
	default:
		return nil, usagef("unknown --mech %q (want gaussian, laplace, ptr or rgm)", f.mech)
	}
	own := map[string][]string{"gaussian": {"sigma"}, "laplace": {"b"}, "ptr": {"sigma1", "tau", "b", "delta0"},
		"rgm": {"eta", "gamma", "dim", "sigma", "r-rel"}}[f.mech]
	for _, fl := range []string{"sigma", "b", "sigma1", "tau", "delta0", "eta", "gamma", "dim", "r-rel"} {
		if f.set[fl] && !contains(own, fl) {
			return nil, usagef("--%s is not a parameter of --mech %s (its parameters: --%s)", fl, f.mech, strings.Join(own, ", --"))
		}
	}
	if err := m.Validate(); err != nil {
		return nil, usageError{err}
	}
	if f.set["q"] {
		if !(f.q > 0 && f.q <= 1) {
			return nil, usagef("--q must be in (0, 1], got %v", f.q)
		}
		bound := privacy.SubsampleBound(f.bound)
		if err := bound.Validate(); err != nil {
			return nil, usageError{err}
		}
		m = privacy.PoissonSubsampled{Base: m, Q: f.q, Bound: bound, AllowUnproven: f.allowUnproven}
		if err := m.Validate(); err != nil {
			return nil, usageError{err}
		}
	} else if f.set["bound"] {
		return nil, usagef("--bound needs --q (it selects the subsampling bound)")
	}
	return m, nil
}

func parseConversion(f accountFlags) (privacy.Conversion, error) {
	c := privacy.Conversion(f.conversion)
	if err := c.Validate(); err != nil {
		return "", usageError{err}
	}
	return c, nil
}

func checkDelta(f accountFlags) error {
	if err := need(f, "this subcommand", "delta"); err != nil {
		return err
	}
	if !(f.delta > 0 && f.delta < 1) {
		return usagef("--delta must be in (0, 1), got %v", f.delta)
	}
	return nil
}

func checkSteps(f accountFlags) error {
	if err := need(f, "this subcommand", "steps"); err != nil {
		return err
	}
	if f.steps < 1 || f.steps > maxAccountSteps {
		return usagef("--steps must be in [1, %d], got %d", maxAccountSteps, f.steps)
	}
	return nil
}

// maxAccountSteps is the most compositions `account` accepts: far more than
// any training run here, and with the PLD accountant already about 20 s and
// 0.6 GB (Gaussian, q = 0.01, 10⁶ steps, measured). Larger counts would run
// for minutes at gigabytes.
const maxAccountSteps = 1_000_000

// accountOutput is a result: its JSON object and a table for people.
type accountOutput struct {
	json  any
	table func(w io.Writer)
}

// num is privacy.JSONFloat: non-finite values are written as "+Inf",
// "-Inf" or "NaN" strings (encoding/json rejects them).
type num = privacy.JSONFloat

func nums(xs []float64) []num {
	out := make([]num, len(xs))
	for i, x := range xs {
		out[i] = num(x)
	}
	return out
}

type rdpJSON struct {
	Mechanism privacy.Spec `json:"mechanism"`
	Orders    []num        `json:"orders"`
	RDP       []num        `json:"rdp"`
	Bound     []string     `json:"bound"`
	Valid     []bool       `json:"valid"`
}

func accountRDP(f accountFlags) (accountOutput, error) {
	m, err := buildMechanism(f)
	if err != nil {
		return accountOutput{}, err
	}
	orders, err := parseOrders(f)
	if err != nil {
		return accountOutput{}, err
	}
	res := rdpJSON{Mechanism: m.Spec(), Orders: nums(orders)}
	for _, a := range orders {
		v, err := m.RDP(a)
		if err != nil {
			return accountOutput{}, err
		}
		res.RDP = append(res.RDP, num(v.Epsilon))
		res.Bound = append(res.Bound, v.Bound)
		res.Valid = append(res.Valid, v.Valid)
	}
	return accountOutput{json: res, table: func(w io.Writer) {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "mechanism: %s\n", specString(res.Mechanism))
		fmt.Fprintln(tw, "order\trdp\tbound\tvalid")
		for i := range orders {
			fmt.Fprintf(tw, "%g\t%.10g\t%s\t%v\n", orders[i], float64(res.RDP[i]), res.Bound[i], res.Valid[i])
		}
		tw.Flush()
	}}, nil
}

// specString renders a Spec on one line, e.g.
// poisson-subsampled(q=0.01, bound=auto; ptr(b=1, …)).
func specString(s privacy.Spec) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// boundNum is a certified bound in JSON: a number when finite, else null
// (with the reason in a separate epsilon_reason field), never a string.
type boundNum float64

// MarshalJSON writes null for ±Inf and NaN.
func (b boundNum) MarshalJSON() ([]byte, error) {
	if math.IsInf(float64(b), 0) || math.IsNaN(float64(b)) {
		return []byte("null"), nil
	}
	return num(b).MarshalJSON()
}

// noFiniteEpsilon is the epsilon_reason of a null ε.
func noFiniteEpsilon(delta float64, what string) string {
	return fmt.Sprintf("no finite ε: %s stays above δ = %g for every finite float64 ε", what, delta)
}

// directSplits is the number of ways accountDirect tries to split δ between
// the per-step Gaussian δ and the strong-composition slack.
const directSplits = 99

// accountDirect is `epsilon --mech ptr --direct`: each step is
// (1/b + √(2 log(1.25/δ_s))/σ1, δ0 + δ_s)-DP (Theorem 4.2, privacy.PTRDirect),
// and T steps compose by privacy.StrongComposition with slack δ'. The total
// δ = 1 − (1−δ0−δ_s)^T (1−δ') is set to --delta; the split between δ_s and δ'
// is chosen on a grid of 99 fractions to minimize ε.
func accountDirect(f accountFlags) (accountOutput, error) {
	if err := checkSteps(f); err != nil {
		return accountOutput{}, err
	}
	if f.mech != "ptr" {
		return accountOutput{}, usagef("--direct applies to --mech ptr only")
	}
	if f.set["q"] {
		return accountOutput{}, usagef("--direct is the full-batch analysis of Theorem 4.2: it does not take --q")
	}
	m, err := buildMechanism(f)
	if err != nil {
		return accountOutput{}, err
	}
	T := float64(f.steps)
	// Budget for the T steps' δ0 + δ_s, in log(1−·) form: (1−δ0−δ_s)^T (1−δ') = 1−δ.
	logKeep := math.Log1p(-f.delta)
	if T*math.Log1p(-f.delta0) <= logKeep {
		return accountOutput{}, fmt.Errorf("direct analysis impossible: %d steps with δ0 = %v already exceed δ = %v", f.steps, f.delta0, f.delta)
	}
	best := directJSON{Epsilon: boundNum(math.Inf(1))}
	var lastErr error
	for i := 1; i <= directSplits; i++ {
		frac := float64(i) / (directSplits + 1)
		// δ' takes frac of the room left by δ0 (in log(1−·) space).
		room := logKeep - T*math.Log1p(-f.delta0) // < 0
		slack := -math.Expm1(frac * room)
		perStep := -math.Expm1((1 - frac) * room / T) // (1−δ0−δ_s) = (1−δ0)·(1−perStep)
		deltaStep := perStep * (1 - f.delta0)
		if !(deltaStep > 0 && slack > 0 && slack < 1) {
			continue
		}
		eps1, d1, err := privacy.PTRDirect(f.sigma1, f.b, f.delta0, deltaStep)
		if err != nil {
			lastErr = err
			continue
		}
		epsT, dT, bound, err := privacy.StrongCompositionBound(eps1, d1, f.steps, slack)
		if err != nil {
			lastErr = err
			continue
		}
		if epsT < float64(best.Epsilon) && dT <= f.delta*(1+1e-9) {
			e1, ds, sl := num(eps1), num(deltaStep), num(slack)
			best = directJSON{Epsilon: boundNum(epsT), Delta: num(dT), Order: num(0), Steps: f.steps, Mechanism: m.Spec(),
				Proven: true, Method: "ptr-thm4.2+strong-composition", StepEps: &e1, StepDelta: &ds, DeltaSlack: &sl, Bound: bound}
		}
	}
	if math.IsInf(float64(best.Epsilon), 1) {
		if lastErr != nil {
			return accountOutput{}, lastErr
		}
		return accountOutput{}, fmt.Errorf("direct analysis: no valid split of δ = %v", f.delta)
	}
	return accountOutput{json: best, table: directTable(best)}, nil
}

// directJSON is the result of the direct analysis (--direct).
type directJSON struct {
	Epsilon    boundNum     `json:"epsilon"`
	Delta      num          `json:"delta"`
	Order      num          `json:"order"`
	Steps      int          `json:"steps"`
	Mechanism  privacy.Spec `json:"mechanism"`
	Proven     bool         `json:"proven"`
	Method     string       `json:"method"`
	StepEps    *num         `json:"step_epsilon"`
	StepDelta  *num         `json:"step_delta"`
	DeltaSlack *num         `json:"delta_slack"`
	Bound      string       `json:"bound"`
}

func directTable(r directJSON) func(io.Writer) {
	return func(w io.Writer) {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "mechanism:\t%s\n", specString(r.Mechanism))
		fmt.Fprintf(tw, "steps:\t%d\n", r.Steps)
		fmt.Fprintf(tw, "epsilon:\t%.6g\n", float64(r.Epsilon))
		fmt.Fprintf(tw, "delta:\t%.6g\n", float64(r.Delta))
		fmt.Fprintf(tw, "method:\t%s (%s)\n", r.Method, r.Bound)
		fmt.Fprintf(tw, "per step:\tε=%.6g δ0+δ=%.3g, slack δ'=%.3g\n", float64(*r.StepEps), float64(*r.StepDelta), float64(*r.DeltaSlack))
		tw.Flush()
	}
}
