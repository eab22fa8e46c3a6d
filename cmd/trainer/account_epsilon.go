package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/privtrain/privtrain/privacy"
	"github.com/privtrain/privtrain/runner"
)

// rdpOptions are the flags that configure an RDP curve: they apply to an
// accountant that composes RDP curves (privacy.RDPComposer) and make
// privacy.ChooseAccountant pick one.
var rdpOptions = []string{"orders", "conversion", "direct", "allow-unproven", "bound"}

// checkAccountantFlags validates --accountant, --history and --interval
// before any computation (all usage errors: exit 2). Which accountant
// answers is decided later, by name or by privacy.ChooseAccountant
// (newAccountant).
func checkAccountantFlags(sub string, f accountFlags) error {
	if f.set["accountant"] {
		if err := privacy.CheckAccountantName(f.accountant); err != nil {
			return usagef("--accountant: %v", err)
		}
	}
	if f.set["interval"] && !(f.interval > 0 && f.interval <= 1) {
		return usagef("--interval must be in (0, 1], got %v", f.interval)
	}
	switch sub {
	case "rdp":
		for _, n := range []string{"history", "interval"} {
			if f.set[n] {
				return usagef("--%s does not apply to `account rdp` (an RDP curve)", n)
			}
		}
		if f.set["accountant"] {
			// An RDP curve is no accountant's answer; an accountant that
			// composes RDP curves is accepted as before.
			acc, err := newAccountant(f)
			if err == nil {
				if _, ok := acc.Accountant.(privacy.RDPComposer); !ok {
					err = errors.New("it composes no RDP curves")
				}
			}
			if err != nil {
				return usagef("--accountant %s does not apply to `account rdp` (an RDP curve): %v", f.accountant, err)
			}
		}
	case "sigma":
		if f.set["history"] {
			return usagef("--history applies to `account epsilon` only")
		}
	}
	return nil
}

// accountantConfig is the configuration the flags give: each option only
// when its flag was given (unset: each accountant's default), so that
// privacy.ChooseAccountant sees what the user asked for.
func accountantConfig(f accountFlags) (privacy.AccountantConfig, error) {
	var cfg privacy.AccountantConfig
	if f.set["orders"] {
		orders, err := parseOrders(f)
		if err != nil {
			return cfg, err
		}
		cfg.Orders = orders
	}
	if f.set["conversion"] {
		c, err := parseConversion(f)
		if err != nil {
			return cfg, err
		}
		cfg.Conversion = c
	}
	cfg.AllowUnproven = f.allowUnproven
	if f.set["interval"] {
		cfg.Interval = f.interval
	}
	return cfg, nil
}

// chosenAccountant is an accountant of an account command: the one named
// by --accountant, or the one privacy.ChooseAccountant picked for the
// mechanisms (Reason says why).
type chosenAccountant struct {
	privacy.Accountant
	Reason string
}

// newAccountant returns the accountant that answers for the mechanisms
// ms: --accountant NAME, else privacy.ChooseAccountant (the project's one
// default rule). The RDP options (rdpOptions) need an accountant that
// composes RDP curves (privacy.RDPComposer); every problem is a usage
// error.
func newAccountant(f accountFlags, ms ...privacy.Mechanism) (chosenAccountant, error) {
	cfg, err := accountantConfig(f)
	if err != nil {
		return chosenAccountant{}, err
	}
	name, reason := f.accountant, ""
	if !f.set["accountant"] {
		name, reason = privacy.ChooseAccountant(cfg, ms...)
		reason = "default: " + reason
	}
	acc, err := privacy.NewAccountant(name, cfg)
	if err != nil {
		if reason != "" {
			return chosenAccountant{}, usagef("accountant %s (%s): %v", name, reason, err)
		}
		return chosenAccountant{}, usageError{err}
	}
	if _, ok := acc.(privacy.RDPComposer); !ok {
		for _, n := range rdpOptions {
			if f.set[n] {
				return chosenAccountant{}, usagef("--%s is an RDP option; it does not apply to --accountant %s", n, name)
			}
		}
	}
	return chosenAccountant{Accountant: acc, Reason: reason}, nil
}

// epsilonJSON is the answer of `account epsilon` (every accountant but the
// direct analysis): the fields a Guarantee carries, each when the
// accountant gives it.
type epsilonJSON struct {
	Accountant string `json:"accountant"`
	// AccountantReason says why the default rule picked the accountant
	// (absent with --accountant).
	AccountantReason string `json:"accountant_reason,omitempty"`
	// Epsilon is the certified upper bound, null when no finite one exists
	// (EpsilonReason says why).
	Epsilon       boundNum `json:"epsilon"`
	EpsilonReason string   `json:"epsilon_reason,omitempty"`
	// Bound (PLD accountant) says which bound was reported: pld or rdp.
	Bound string `json:"bound,omitempty"`
	// EpsilonOptimistic (a discretizing accountant: PLD) is the estimate
	// from the optimistic discretization, null when the accountant has no
	// meaningful one (OptimisticReason says why); OptimisticReason also
	// flags a kept estimate whose steps × interval can bias it low
	// (privacy.OptimisticOmitted).
	EpsilonOptimistic *boundNum          `json:"epsilon_optimistic,omitempty"`
	OptimisticReason  string             `json:"epsilon_optimistic_reason,omitempty"`
	Delta             num                `json:"delta"`
	Order             *num               `json:"order,omitempty"`
	Conversion        privacy.Conversion `json:"conversion,omitempty"`
	Interval          *num               `json:"interval,omitempty"`
	Steps             int                `json:"steps"`
	Detail            string             `json:"detail,omitempty"`
	Mechanism         *privacy.Spec      `json:"mechanism,omitempty"`
	History           []historyEntry     `json:"history,omitempty"`
	Proven            bool               `json:"proven"`
	Unproven          []string           `json:"unproven,omitempty"`
	// Method is "rdp" for a conversion of a composed RDP curve (as the
	// RDP answer always said; --direct says its own method).
	Method string `json:"method,omitempty"`
}

// epsilonMechanisms returns the compositions `account epsilon` accounts:
// the --history file, or --mech with --steps.
func epsilonMechanisms(f accountFlags) (mechs []privacy.Mechanism, counts []int, entries []historyEntry, spec *privacy.Spec, err error) {
	if f.set["history"] {
		for _, n := range []string{"mech", "steps", "sigma", "b", "q"} {
			if f.set[n] {
				return nil, nil, nil, nil, usagef("--history and --%s are exclusive", n)
			}
		}
		mechs, counts, entries, err = readHistory(f.history)
		return mechs, counts, entries, nil, err
	}
	if err := checkSteps(f); err != nil {
		return nil, nil, nil, nil, err
	}
	m, err := buildMechanism(f)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	s := m.Spec()
	return []privacy.Mechanism{m}, []int{f.steps}, nil, &s, nil
}

// accountEpsilon is `account epsilon`: the compositions on the named
// accountant or the default one (privacy.ChooseAccountant), through
// privacy.Accountant; --direct is its own analysis (accountDirect).
func accountEpsilon(f accountFlags) (accountOutput, error) {
	if err := checkDelta(f); err != nil {
		return accountOutput{}, err
	}
	if f.direct {
		if f.set["accountant"] {
			if _, err := newAccountant(f); err != nil {
				return accountOutput{}, err
			}
		}
		return accountDirect(f)
	}
	mechs, counts, entries, spec, err := epsilonMechanisms(f)
	if err != nil {
		return accountOutput{}, err
	}
	acc, err := newAccountant(f, mechs...)
	if err != nil {
		return accountOutput{}, err
	}
	for i, m := range mechs {
		if err := acc.Compose(m, counts[i]); err != nil {
			// Losses no grid represents (σ or b → 0) are refused with the
			// accountant's reason (exit 2), never bounded from lost masses;
			// so is a mechanism the accountant cannot account.
			if errors.Is(err, privacy.ErrPLDRange) {
				return accountOutput{}, usageError{err}
			}
			if privacy.CheckAccountant(acc.Kind(), m) != nil {
				return accountOutput{}, usagef("mechanism %s: %v; use --accountant rdp", m.Spec().Kind, err)
			}
			return accountOutput{}, err
		}
	}
	g, err := acc.EpsilonFor(f.delta)
	if err != nil {
		return accountOutput{}, err
	}
	res := epsilonJSON{Accountant: acc.Kind(), AccountantReason: acc.Reason, Epsilon: boundNum(g.Epsilon), Bound: g.Bound,
		Delta: num(g.Delta), Steps: g.Steps, Detail: g.Detail, Mechanism: spec, History: entries, Proven: g.Proven}
	if g.Conversion != "" {
		if !math.IsNaN(g.Order) {
			o := num(g.Order)
			res.Order = &o
		}
		res.Conversion, res.Method = g.Conversion, "rdp"
	}
	if g.Interval > 0 {
		h, opt := num(g.Interval), boundNum(g.Optimistic)
		res.Interval, res.EpsilonOptimistic = &h, &opt
		if math.IsNaN(g.Optimistic) {
			res.OptimisticReason = "the accountant gave no optimistic estimate for this query (see detail)"
		} else if why := g.OptimisticOmitted(); why != "" {
			res.OptimisticReason = "kept for reference, omitted from run summaries: " + why
		}
	}
	if rc, ok := acc.Accountant.(privacy.RDPComposer); ok {
		res.Unproven = rc.UnprovenBounds()
	}
	if !(g.Epsilon < math.Inf(1)) {
		res.EpsilonReason = noFiniteEpsilon(f.delta, fmt.Sprintf("the %s accountant's certified δ(ε) (%s)", acc.Kind(), g.Detail))
	}
	return accountOutput{json: res, table: epsilonTable(res)}, nil
}

// epsilonTable prints an epsilonJSON for people.
func epsilonTable(r epsilonJSON) func(io.Writer) {
	return func(w io.Writer) {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		acc := r.Accountant
		if r.Interval != nil {
			acc += fmt.Sprintf(" (interval %g)", float64(*r.Interval))
		}
		if r.AccountantReason != "" {
			acc += "; " + r.AccountantReason
		}
		fmt.Fprintf(tw, "accountant:\t%s\n", acc)
		if r.Mechanism != nil {
			fmt.Fprintf(tw, "mechanism:\t%s\n", specString(*r.Mechanism))
		} else {
			fmt.Fprintf(tw, "history:\t%d entries\n", len(r.History))
		}
		fmt.Fprintf(tw, "steps:\t%d\n", r.Steps)
		eps := float64(r.Epsilon)
		switch {
		case !(eps < math.Inf(1)):
			fmt.Fprintf(tw, "epsilon:\tnone (%s)\n", r.EpsilonReason)
		case r.EpsilonOptimistic != nil:
			fmt.Fprintf(tw, "epsilon:\t%.6g (certified upper bound, %s; %s)\n", eps, r.Bound, optimisticText(r))
		default:
			fmt.Fprintf(tw, "epsilon:\t%.6g\n", eps)
		}
		fmt.Fprintf(tw, "delta:\t%.6g\n", float64(r.Delta))
		if r.Order != nil {
			fmt.Fprintf(tw, "order:\t%g\n", float64(*r.Order))
			fmt.Fprintf(tw, "conversion:\t%s\n", r.Conversion)
		}
		fmt.Fprintf(tw, "detail:\t%s\n", r.Detail)
		if !r.Proven {
			fmt.Fprintf(tw, "WARNING:\tunproven bounds used: %s\n", strings.Join(r.Unproven, ", "))
		}
		tw.Flush()
	}
}

// optimisticText is the optimistic part of the ε line.
func optimisticText(r epsilonJSON) string {
	o := float64(*r.EpsilonOptimistic)
	if math.IsNaN(o) {
		return "no optimistic estimate: " + r.OptimisticReason
	}
	return optimisticNote(o, r.Steps, float64(*r.Interval))
}

// sigmaJSON is the answer of `account sigma`.
type sigmaJSON struct {
	Accountant       string             `json:"accountant"`
	AccountantReason string             `json:"accountant_reason,omitempty"`
	Sigma            num                `json:"sigma"`
	Epsilon          num                `json:"epsilon"` // ε actually reached at sigma
	Optimistic       *num               `json:"epsilon_optimistic,omitempty"`
	Target           num                `json:"target_epsilon"`
	Delta            num                `json:"delta"`
	Q                num                `json:"q"`
	Steps            int                `json:"steps"`
	Conversion       privacy.Conversion `json:"conversion,omitempty"`
	Interval         *num               `json:"interval,omitempty"`
	Tolerance        num                `json:"tolerance"`
}

// accountSigma is `account sigma`: privacy.CalibrateSigma on the named
// accountant or the default one for DP-SGD's step, then ε at that σ.
func accountSigma(f accountFlags) (accountOutput, error) {
	if err := need(f, "sigma", "target-epsilon", "q"); err != nil {
		return accountOutput{}, err
	}
	if err := checkSteps(f); err != nil {
		return accountOutput{}, err
	}
	if err := checkDelta(f); err != nil {
		return accountOutput{}, err
	}
	if !(f.q > 0 && f.q <= 1) {
		return accountOutput{}, usagef("--q must be in (0, 1], got %v", f.q)
	}
	if !(f.target > 0 && f.target <= runner.MaxTargetEpsilon) {
		return accountOutput{}, usagef("--target-epsilon must be in (0, %v], got %v", runner.MaxTargetEpsilon, f.target)
	}
	acc, err := newAccountant(f, privacy.SubsampledGaussian{Q: f.q, Sigma: 1})
	if err != nil {
		return accountOutput{}, err
	}
	cfg, _ := accountantConfig(f) // validated by newAccountant
	sigma, err := privacy.CalibrateSigma(privacy.CalibrationRequest{TargetEpsilon: f.target, Delta: f.delta, Q: f.q,
		Steps: f.steps, Accountant: acc.Kind(), Orders: cfg.Orders, Conversion: cfg.Conversion, PLDInterval: cfg.Interval})
	if err != nil {
		return accountOutput{}, err
	}
	if err := acc.Compose(privacy.SubsampledGaussian{Q: f.q, Sigma: sigma}, f.steps); err != nil {
		return accountOutput{}, err
	}
	g, err := acc.EpsilonFor(f.delta)
	if err != nil {
		return accountOutput{}, err
	}
	res := sigmaJSON{Accountant: acc.Kind(), AccountantReason: acc.Reason, Sigma: num(sigma), Epsilon: num(g.Epsilon), Target: num(f.target),
		Delta: num(f.delta), Q: num(f.q), Steps: f.steps, Conversion: g.Conversion, Tolerance: num(privacy.CalibrationTolerance)}
	how := acc.Kind()
	if g.Conversion != "" {
		how += " " + string(g.Conversion)
	}
	if g.Interval > 0 {
		h, opt := num(g.Interval), num(g.Optimistic)
		res.Interval, res.Optimistic = &h, &opt
		how += fmt.Sprintf(", interval %g", g.Interval)
	}
	return accountOutput{json: res, table: func(w io.Writer) {
		fmt.Fprintf(w, "sigma: %.6f (ε = %.6g ≤ %g at δ = %g, q = %g, %d steps, %s; tolerance %g)\n",
			sigma, g.Epsilon, f.target, f.delta, f.q, f.steps, how, privacy.CalibrationTolerance)
	}}, nil
}
