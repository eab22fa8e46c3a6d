package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/privtrain/privtrain/internal/fileutil"
	"github.com/privtrain/privtrain/privacy"
	"github.com/privtrain/privtrain/runner"
)

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

// optimisticNote states the PLD's optimistic estimate, or why it is not
// shown (privacy.OptimisticOmitted: past n·h = 0.1 it says nothing useful).
// The JSON of `account` keeps the number beside the reason; run summaries
// drop it.
func optimisticNote(opt float64, steps int, h float64) string {
	return optimisticWords(opt, privacy.OptimisticOmitted(steps, h))
}

// optimisticWords is the human-readable optimistic part of an ε line: the
// estimate, or why it was omitted (why non-empty).
func optimisticWords(opt float64, why string) string {
	if why != "" {
		return "optimistic estimate omitted: " + why
	}
	return fmt.Sprintf("optimistic estimate %.6g", opt)
}
