package main

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/privtrain/privtrain/runner"
)

func TestAuditMechanismJSON(t *testing.T) {
	var out, errb bytes.Buffer
	args := []string{"mechanism", "--rule", "sum", "--sigma", "1.1", "--delta", "1e-3", "--samples", "20000", "--tests", "real", "--json"}
	if code := runAudit(args, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var m map[string]any
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		t.Fatalf("%v in %q", err, out.String())
	}
	for _, k := range []string{"empirical_epsilon", "claimed_epsilon", "confidence", "samples", "case"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON lacks %q: %s", k, out.String())
		}
	}
	if c := m["claimed_epsilon"].(float64); math.Abs(c-3.1506) > 1e-3 {
		t.Errorf("claimed ε %v, want 3.1506 (RDP, one Gaussian step σ = 1.1, δ = 1e-3)", c)
	}
	if e := m["empirical_epsilon"].(float64); !(e > 0.5 && e < 2.79) {
		t.Errorf("empirical ε %v outside (0.5, 2.79 = exact)", e)
	}
	if m["samples"].(float64) != 20000 || m["case"] != "add-one" || m["confidence"].(float64) != 0.95 {
		t.Errorf("unexpected fields: %s", out.String())
	}
}

func TestAuditBadInput(t *testing.T) {
	for _, args := range [][]string{
		nil,
		{"nosuch"},
		{"mechanism"},
		{"mechanism", "--rule", "nosuch"},
		{"mechanism", "--rule", "sum", "--samples", "10"},
		{"mechanism", "--rule", "sum", "--tests", "some"},
		{"mechanism", "--rule", "sum", "--delta", "2"},
		{"mechanism", "--rule", "krum"},
		{"mechanism", "--rule", "sum", "extra"},
		{"run", "--method", "nonprivate", "--steps", "5"},
		{"run", "--method", "dpsgd", "--guesses", "x"},
		{"run", "--method", "dpsgd", "--steps", "5", "--canaries", "1"},
	} {
		var out, errb bytes.Buffer
		code := runAudit(args, &out, &errb)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2 (stderr %q)", args, code, errb.String())
		}
		if len(args) > 1 && strings.Count(strings.TrimSpace(errb.String()), "\n") > 0 && !strings.Contains(errb.String(), "Usage") {
			t.Errorf("%v: error is not one line: %q", args, errb.String())
		}
	}
}

func TestAuditRunCLI(t *testing.T) {
	var out, errb bytes.Buffer
	args := []string{"run", "--method", "dpsgd", "--model", "logreg", "--dataset", "mnist", "--sigma", "1", "--steps", "20",
		"--batch-size", "600", "--lr", "0.5", "--clip", "1", "--target-epsilon", "0", "--corruption", "none",
		"--corruption-ratio", "0", "--canaries", "100", "--guesses", "10,100", "--json"}
	if code := runAudit(args, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var m map[string]any
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		t.Fatalf("%v in %q", err, out.String())
	}
	if m["steps"].(float64) != 20 || m["samples"].(float64) != 100 || !(m["claimed_epsilon"].(float64) > 0) {
		t.Errorf("unexpected run audit: %s", out.String())
	}
	if g := m["white_box"].(map[string]any)["guesses"].(float64); g != 10 && g != 100 {
		t.Errorf("guess count %v not one of --guesses", g)
	}
}

func TestSplitFlags(t *testing.T) {
	named, rest := splitFlags([]string{"--method", "dpsgd", "--canaries", "5", "--json", "--guesses=1,2", "-steps", "3"}, runAuditFlags...)
	if strings.Join(named, " ") != "--canaries 5 --json --guesses=1,2" || strings.Join(rest, " ") != "--method dpsgd -steps 3" {
		t.Errorf("named %q, rest %q", named, rest)
	}
}

// The audits gate: exit 3 when a test exceeds its claim, naming the setting
// that fixes it, exit 0 otherwise. The float release of sum leaks through
// the float32 granularity of its outputs (empirical ε ≈ 8 against a claimed
// 3.15 at 10⁵ releases); the secure release, the default, stays below.
func TestAuditExitCodes(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string // on stderr
	}{
		{[]string{"--float-noise"}, 3, "fix: drop --float-noise: the secure release is floating-point safe"},
		{nil, 0, ""},
		{[]string{"--secure-noise"}, 0, "deprecated"},
		{[]string{"--float-noise", "--tests", "real"}, 0, ""},
	} {
		var out, errb bytes.Buffer
		args := append([]string{"mechanism", "--rule", "sum", "--sigma", "1.1", "--clip", "1", "--delta", "1e-3", "--samples", "100000"}, tc.args...)
		code := runAudit(args, &out, &errb)
		if code != tc.code || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%v: exit %d (stderr %q), want %d with %q", tc.args, code, errb.String(), tc.code, tc.want)
		}
		secure := !strings.Contains(strings.Join(tc.args, " "), "--float-noise")
		if label := noiseLabel(secure); !strings.Contains(out.String(), label) {
			t.Errorf("%v: output does not name the %s:\n%s", tc.args, label, out.String())
		}
	}
	// --json gates the same way.
	var out, errb bytes.Buffer
	if code := runAudit([]string{"mechanism", "--rule", "sum", "--samples", "100000", "--delta", "1e-3", "--float-noise", "--json"}, &out, &errb); code != 3 {
		t.Errorf("--json: exit %d, want 3", code)
	}
	var m map[string]any
	if err := json.Unmarshal(out.Bytes(), &m); err != nil || m["exceeds_claim"] != true {
		t.Errorf("--json: %v, exceeds_claim %v", err, m["exceeds_claim"])
	}
	// A rule without a secure release is refused by default (one line,
	// naming --float-noise) and audited with --float-noise.
	rgm := []string{"mechanism", "--rule", "rgm-sum", "--eta", "0.1", "--r-rel", "1", "--gamma", "1", "--rgm-sigma", "1", "--samples", "20000", "--tests", "real"}
	errb.Reset()
	if code := runAudit(rgm, &out, &errb); code != 2 || !strings.Contains(errb.String(), "no secure-noise mode") || !strings.Contains(errb.String(), "--float-noise") ||
		strings.Count(strings.TrimSpace(errb.String()), "\n") > 0 {
		t.Errorf("rgm-sum without --float-noise: exit %d, stderr %q", code, errb.String())
	}
	errb.Reset()
	if code := runAudit(append(rgm, "--float-noise"), &out, &errb); code != 0 {
		t.Errorf("rgm-sum --float-noise: exit %d, stderr %q", code, errb.String())
	}
}

// trainer audit run exits 3 when the run's empirical ε exceeds its claim,
// with the fix for its noise mode.
func TestRunAuditExit(t *testing.T) {
	for _, tc := range []struct {
		res  runner.RunAuditResult
		code int
		want string
	}{
		{runner.RunAuditResult{EmpiricalEpsilon: 1, ClaimedEpsilon: 2}, 0, ""},
		{runner.RunAuditResult{EmpiricalEpsilon: 3, ClaimedEpsilon: 2, Exceeds: true, FloatNoise: true, Confidence: 0.95}, 3, "drop --float-noise"},
		{runner.RunAuditResult{EmpiricalEpsilon: 3, ClaimedEpsilon: 2, Exceeds: true, SecureNoise: true, Confidence: 0.95}, 3, "evidence of a bug (or, with probability ≤ 0.05"},
	} {
		var errb bytes.Buffer
		if code := runAuditExit(&tc.res, &errb); code != tc.code || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%+v: exit %d (%q), want %d with %q", tc.res, code, errb.String(), tc.code, tc.want)
		}
	}
}
