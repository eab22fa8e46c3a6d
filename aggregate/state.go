package aggregate

import (
	"encoding/json"
	"fmt"
)

// A rule may keep state of a whole run and say so through optional
// interfaces, as it reports a step's record through Diagnostics: a run
// checkpoints a Stateful rule's state and restores it on resume, and writes a
// Summarizer's statistics to the run's summary. The run then needs no
// knowledge of which rule it drives.

// Stateful is implemented by rules whose state changes between steps (the
// trim level F of tsum and ptr-tsum, which a dynamic-F policy moves, and
// ptr-tsum's test counts). A run stores the state in every checkpoint and
// restores it on resume, so a resumed run continues exactly.
type Stateful interface {
	// MarshalState returns the state as a JSON object.
	MarshalState() ([]byte, error)
	// UnmarshalState restores the state from a JSON object MarshalState
	// returned; keys it does not know are ignored.
	UnmarshalState(data []byte) error
}

// Summarizer is implemented by rules with statistics of the whole run for
// its summary (ptr-tsum: tests run and passed, the final F). Summary
// returns a value that marshals to a JSON object whose keys are fields of
// the run's summary (runner.Summary); a run refuses, before its first
// step, a rule that reports a field the summary does not have. The values
// must be release-safe (functions of the privatized releases and the
// public configuration): summary.json is published.
type Summarizer interface {
	Summary() any
}

// trimState is the state of tsum and ptr-tsum: the trim level F and
// ptr-tsum's test counts (JSON keys as in checkpoints of version 2, which
// held them at the top level).
type trimState struct {
	F      int `json:"trim_level"`
	Tests  int `json:"ptr_tests,omitempty"`
	Passed int `json:"ptr_passed,omitempty"`
}

func unmarshalTrimState(rule string, data []byte) (trimState, error) {
	var s trimState
	if err := json.Unmarshal(data, &s); err != nil {
		return s, fmt.Errorf("%s: state: %w", rule, err)
	}
	if s.F < 0 || s.Tests < 0 || s.Passed < 0 || s.Passed > s.Tests {
		return s, fmt.Errorf("%s: invalid state %+v", rule, s)
	}
	return s, nil
}

// MarshalState returns {"trim_level": F}.
func (a *TSum) MarshalState() ([]byte, error) { return json.Marshal(trimState{F: a.f}) }

// UnmarshalState restores F.
func (a *TSum) UnmarshalState(data []byte) error {
	s, err := unmarshalTrimState(a.Name(), data)
	if err == nil {
		a.f = s.F
	}
	return err
}

// Summary returns the final trim level.
func (a *TSum) Summary() any {
	return struct {
		F int `json:"final_f,omitempty"`
	}{a.f}
}

// MarshalState returns F and the test counts.
func (a *PTRTSum) MarshalState() ([]byte, error) {
	return json.Marshal(trimState{F: a.f, Tests: a.tests, Passed: a.passed})
}

// UnmarshalState restores F and the test counts.
func (a *PTRTSum) UnmarshalState(data []byte) error {
	s, err := unmarshalTrimState(a.Name(), data)
	if err == nil {
		a.f, a.tests, a.passed = s.F, s.Tests, s.Passed
	}
	return err
}

// Summary returns the tests run and passed (the published outcome bits),
// the pass rate and the final trim level.
func (a *PTRTSum) Summary() any {
	s := struct {
		Tests    int     `json:"ptr_tests,omitempty"`
		Passed   int     `json:"ptr_passed,omitempty"`
		PassRate float64 `json:"ptr_pass_rate,omitempty"`
		F        int     `json:"final_f,omitempty"`
	}{Tests: a.tests, Passed: a.passed, F: a.f}
	if a.tests > 0 {
		s.PassRate = float64(a.passed) / float64(a.tests)
	}
	return s
}

// count records a test's outcome.
func (a *PTRTSum) count(o PTROutcome) {
	a.tests++
	if o == PTRPassed {
		a.passed++
	}
}
