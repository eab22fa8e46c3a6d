package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strings"
	"text/tabwriter"

	"github.com/privtrain/privtrain/internal/fileutil"
	"github.com/privtrain/privtrain/privacy"
	"github.com/privtrain/privtrain/runner"
)

// defaultAccountant is the accountant of an account command: the one given,
// else pld wherever the mechanism has a proven privacy loss distribution
// (the Gaussian with a sampling rate, the Laplace mechanism, PTR with or
// without a sampling rate (docs/ptr-pld.md), DP-SGD's σ, a --history file) and no RDP-only option was given, else rdp.
func defaultAccountant(sub string, f accountFlags) string {
	if f.set["accountant"] {
		return f.accountant
	}
	if sub == "rdp" {
		return privacy.KindRDP
	}
	for _, n := range []string{"orders", "conversion", "direct", "allow-unproven", "bound"} {
		if f.set[n] {
			return privacy.KindRDP
		}
	}
	switch {
	case sub == "sigma", f.set["history"], f.mech == "laplace", f.mech == "ptr", f.mech == "gaussian" && f.set["q"]:
		return privacy.KindPLD
	}
	return privacy.KindRDP
}

// accountantConfig is the configuration --interval gives (unset: each
// accountant's default; the PLD one's is the flag's default).
func accountantConfig(f accountFlags) privacy.AccountantConfig {
	if f.set["interval"] {
		return privacy.AccountantConfig{Interval: f.interval}
	}
	return privacy.AccountantConfig{}
}

// checkAccountantFlags validates --accountant, --history and --interval
// before any computation (all usage errors: exit 2).
func checkAccountantFlags(sub string, f accountFlags) error {
	if err := privacy.CheckAccountantName(f.accountant); err != nil {
		return usagef("--accountant: %v", err)
	}
	if rdpCurve(f) {
		for _, n := range []string{"history", "interval"} {
			if f.set[n] {
				return usagef("--%s needs --accountant pld", n)
			}
		}
		return nil
	}
	// Every other accountant, built in or registered
	// (privacy.RegisterAccountant), answers through privacy.Accountant.
	if sub == "rdp" {
		return usagef("--accountant %s does not apply to `account rdp` (an RDP curve)", f.accountant)
	}
	if !(f.interval > 0 && f.interval <= 1) {
		return usagef("--interval must be in (0, 1], got %v", f.interval)
	}
	for _, n := range []string{"orders", "conversion", "direct", "allow-unproven", "bound"} {
		if f.set[n] {
			return usagef("--%s is an RDP option; it does not apply to --accountant %s", n, f.accountant)
		}
	}
	if f.set["history"] && sub != "epsilon" {
		return usagef("--history applies to `account epsilon` only")
	}
	return nil
}

// historyEntry is one entry of a --history file.
type historyEntry struct {
	Mech  string   `json:"mech"`
	Sigma *float64 `json:"sigma,omitempty"`
	B     *float64 `json:"b,omitempty"`
	Q     *float64 `json:"q,omitempty"`
	Steps *int     `json:"steps"`
}

// checkHistoryKeys refuses keys that differ from historyEntry's only in
// case (encoding/json would take "Sigma" for "sigma") and repeated keys.
func checkHistoryKeys(data []byte) error {
	var raw []map[string]json.RawMessage
	if json.Unmarshal(data, &raw) != nil {
		return nil // the decoder reports malformed input
	}
	known := map[string]bool{}
	var names []string
	t := reflect.TypeOf(historyEntry{})
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		known[name], names = true, append(names, name)
	}
	for i, e := range raw {
		for k := range e {
			if !known[k] {
				return fmt.Errorf("entry %d: unknown key %q (keys, case-sensitive: %s)", i, k, strings.Join(names, ", "))
			}
		}
	}
	return runner.CheckDuplicateJSONKeys(data)
}

// maxHistoryBytes bounds a --history file (a history of 10⁴ entries is
// about 0.6 MB).
const maxHistoryBytes = 4 << 20

// readHistory parses and validates a --history file into mechanisms and
// counts. Every problem is a usage error.
func readHistory(path string) ([]privacy.Mechanism, []int, []historyEntry, error) {
	data, err := fileutil.ReadRegularMax(path, maxHistoryBytes)
	if err != nil {
		return nil, nil, nil, usagef("--history: %v", err)
	}
	if err := checkHistoryKeys(data); err != nil {
		return nil, nil, nil, usagef("--history %s: %v", path, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var entries []historyEntry
	if err := dec.Decode(&entries); err != nil {
		return nil, nil, nil, usagef("--history %s: malformed JSON list: %v", path, err)
	}
	if dec.More() {
		return nil, nil, nil, usagef("--history %s: trailing data after the JSON list", path)
	}
	if len(entries) == 0 {
		return nil, nil, nil, usagef("--history %s: empty history", path)
	}
	var mechs []privacy.Mechanism
	var counts []int
	total := 0
	for i, e := range entries {
		m, n, err := e.mechanism()
		if err != nil {
			return nil, nil, nil, usagef("--history %s: entry %d: %v", path, i, err)
		}
		mechs, counts = append(mechs, m), append(counts, n)
		if total += n; total > maxAccountSteps {
			return nil, nil, nil, usagef("--history %s: more than %d steps in all (the most `account` composes)", path, maxAccountSteps)
		}
	}
	return mechs, counts, entries, nil
}

// mechanism validates one history entry.
func (e historyEntry) mechanism() (privacy.Mechanism, int, error) {
	if e.Steps == nil || *e.Steps < 1 {
		return nil, 0, fmt.Errorf("\"steps\" must be an integer ≥ 1")
	}
	var m privacy.Mechanism
	switch e.Mech {
	case "gaussian":
		if e.Sigma == nil || e.B != nil {
			return nil, 0, fmt.Errorf("mech gaussian needs \"sigma\" (and no \"b\")")
		}
		m = privacy.Gaussian{Sigma: *e.Sigma}
	case "laplace":
		if e.B == nil || e.Sigma != nil {
			return nil, 0, fmt.Errorf("mech laplace needs \"b\" (and no \"sigma\")")
		}
		m = privacy.Laplace{B: *e.B}
	default:
		return nil, 0, fmt.Errorf("unknown mech %q (want gaussian or laplace)", e.Mech)
	}
	if err := m.Validate(); err != nil {
		return nil, 0, err
	}
	if e.Q != nil {
		if !(*e.Q > 0 && *e.Q <= 1) {
			return nil, 0, fmt.Errorf("q must be in (0, 1], got %v", *e.Q)
		}
		if *e.Q < 1 {
			m = privacy.PoissonSubsampled{Base: m, Q: *e.Q}
		}
	}
	return m, *e.Steps, nil
}

type pldEpsilonJSON struct {
	Accountant string `json:"accountant"`
	// Epsilon is the certified upper bound, min(PLD, RDP) (Bound says
	// which), null when no finite one exists (EpsilonReason says why);
	// EpsilonOptimistic the estimate from the optimistic discretization on
	// the same grid.
	Epsilon           boundNum       `json:"epsilon"`
	EpsilonReason     string         `json:"epsilon_reason,omitempty"`
	Bound             string         `json:"bound,omitempty"`
	EpsilonOptimistic num            `json:"epsilon_optimistic"`
	Delta             num            `json:"delta"`
	Interval          num            `json:"interval"`
	Steps             int            `json:"steps"`
	Detail            string         `json:"detail"`
	Mechanism         *privacy.Spec  `json:"mechanism,omitempty"`
	History           []historyEntry `json:"history,omitempty"`
}

// accountEpsilonWith is `account epsilon --accountant NAME` for every
// accountant but the RDP-curve tool (rdpCurve): pld, or any registered one,
// through privacy.Accountant.
func accountEpsilonWith(f accountFlags) (accountOutput, error) {
	if err := checkDelta(f); err != nil {
		return accountOutput{}, err
	}
	var (
		mechs   []privacy.Mechanism
		counts  []int
		entries []historyEntry
		spec    *privacy.Spec
	)
	if f.set["history"] {
		for _, n := range []string{"mech", "steps", "sigma", "b", "q"} {
			if f.set[n] {
				return accountOutput{}, usagef("--history and --%s are exclusive", n)
			}
		}
		var err error
		if mechs, counts, entries, err = readHistory(f.history); err != nil {
			return accountOutput{}, err
		}
	} else {
		if err := checkSteps(f); err != nil {
			return accountOutput{}, err
		}
		m, err := buildMechanism(f)
		if err != nil {
			return accountOutput{}, err
		}
		if f.mech == "gaussian" && !f.set["q"] {
			return accountOutput{}, usagef("--q is required for --mech gaussian with --accountant pld (--q 1: no subsampling)")
		}
		s := m.Spec()
		mechs, counts, spec = []privacy.Mechanism{m}, []int{f.steps}, &s
	}
	acc, err := privacy.NewAccountant(f.accountant, accountantConfig(f))
	if err != nil {
		return accountOutput{}, usageError{err}
	}
	for i, m := range mechs {
		// Losses no grid represents (σ or b → 0) are refused with the
		// accountant's reason (exit 2), never bounded from lost masses.
		if err := acc.Compose(m, counts[i]); err != nil {
			if errors.Is(err, privacy.ErrPLDRange) {
				return accountOutput{}, usageError{err}
			}
			if privacy.CheckAccountant(f.accountant, m) != nil {
				return accountOutput{}, usagef("mechanism %s: %v; use --accountant rdp", m.Spec().Kind, err)
			}
			return accountOutput{}, err
		}
	}
	g, err := acc.EpsilonFor(f.delta)
	if err != nil {
		return accountOutput{}, err
	}
	res := pldEpsilonJSON{Accountant: acc.Kind(), Epsilon: boundNum(g.Epsilon), Bound: g.Bound, EpsilonOptimistic: num(g.Optimistic),
		Delta: num(g.Delta), Interval: num(g.Interval), Steps: g.Steps, Detail: g.Detail, Mechanism: spec, History: entries}
	if !(g.Epsilon < math.Inf(1)) {
		res.EpsilonReason = noFiniteEpsilon(f.delta, "the certified δ(ε) of the composed PLD (its mass at +∞ and round-off slack included) and of the RDP bound")
	}
	return accountOutput{json: res, table: func(w io.Writer) {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "accountant:\t%s (interval %g)\n", acc.Kind(), g.Interval)
		if spec != nil {
			fmt.Fprintf(tw, "mechanism:\t%s\n", specString(*spec))
		} else {
			fmt.Fprintf(tw, "history:\t%d entries\n", len(entries))
		}
		fmt.Fprintf(tw, "steps:\t%d\n", g.Steps)
		fmt.Fprintf(tw, "epsilon:\t%.6g (certified upper bound, %s; %s)\n", g.Epsilon, g.Bound, optimisticNote(g.Optimistic, g.Steps, g.Interval))
		fmt.Fprintf(tw, "delta:\t%.6g\n", g.Delta)
		fmt.Fprintf(tw, "detail:\t%s\n", g.Detail)
		tw.Flush()
	}}, nil
}

// accountSigmaWith is `account sigma --accountant NAME` through
// privacy.CalibrateSigma and privacy.Accountant (see accountEpsilonWith).
func accountSigmaWith(f accountFlags) (accountOutput, error) {
	sigma, err := privacy.CalibrateSigma(privacy.CalibrationRequest{TargetEpsilon: f.target, Delta: f.delta, Q: f.q,
		Steps: f.steps, Accountant: f.accountant, PLDInterval: accountantConfig(f).Interval})
	if err != nil {
		return accountOutput{}, err
	}
	acc, err := privacy.NewAccountant(f.accountant, accountantConfig(f))
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
	res := struct {
		Accountant string `json:"accountant"`
		Sigma      num    `json:"sigma"`
		Epsilon    num    `json:"epsilon"`
		Optimistic num    `json:"epsilon_optimistic"`
		Target     num    `json:"target_epsilon"`
		Delta      num    `json:"delta"`
		Q          num    `json:"q"`
		Steps      int    `json:"steps"`
		Interval   num    `json:"interval"`
		Tolerance  num    `json:"tolerance"`
	}{acc.Kind(), num(sigma), num(g.Epsilon), num(g.Optimistic), num(f.target), num(f.delta), num(f.q), f.steps,
		num(g.Interval), num(privacy.CalibrationTolerance)}
	return accountOutput{json: res, table: func(w io.Writer) {
		fmt.Fprintf(w, "sigma: %.6f (%s ε = %.6g ≤ %g at δ = %g, q = %g, %d steps, interval %g; tolerance %g)\n",
			sigma, acc.Kind(), g.Epsilon, f.target, f.delta, f.q, f.steps, g.Interval, privacy.CalibrationTolerance)
	}}, nil
}

// optimisticNote states the PLD's optimistic estimate, or why it is not
// shown: each step's loss is rounded down by up to one interval h, so over
// n steps the estimate can sit up to n·h below the truth (docs/pld-evidence.md
// §8: 2.27 where the truth is 7.27 at 10⁵ steps). Past n·h = 0.1 it says
// nothing useful and is left out of the human-readable output (the JSON
// keeps it).
func optimisticNote(opt float64, steps int, h float64) string {
	if float64(steps)*h > 0.1 {
		return fmt.Sprintf("optimistic estimate omitted: %d steps × interval %g can bias it low by %.3g", steps, h, float64(steps)*h)
	}
	return fmt.Sprintf("optimistic estimate %.6g", opt)
}
