package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestBoundedInputsRefused: every input that used to cost minutes or
// gigabytes before an answer is refused at once, with one line and exit 2,
// and names its documented maximum.
func TestBoundedInputsRefused(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(big, bytes.Repeat([]byte(" "), maxHistoryBytes+1), 0o644); err != nil {
		t.Fatal(err)
	}
	many := filepath.Join(dir, "many.json")
	if err := os.WriteFile(many, []byte(fmt.Sprintf(`[{"mech":"gaussian","sigma":1,"q":0.01,"steps":%d},{"mech":"gaussian","sigma":1,"q":0.01,"steps":2}]`, maxAccountSteps-1)), 0o644); err != nil {
		t.Fatal(err)
	}
	gauss := []string{"--mech", "gaussian", "--sigma", "1", "--q", "0.01", "--delta", "1e-5"}
	for _, c := range []struct {
		cmd  func([]string, *bytes.Buffer, *bytes.Buffer) int
		args []string
		want string
	}{
		{acct, append([]string{"epsilon", "--steps", "1000000000000000000"}, gauss...), "[1, 1000000]"},
		{acct, append([]string{"epsilon", "--steps", "1000001"}, gauss...), "[1, 1000000]"},
		{acct, append([]string{"epsilon", "--accountant", "rdp", "--steps", "1000001"}, gauss...), "[1, 1000000]"},
		{acct, []string{"sigma", "--target-epsilon", "1e308", "--delta", "1e-5", "--q", "0.01", "--steps", "100"}, "(0, 100]"},
		{acct, []string{"sigma", "--accountant", "rdp", "--target-epsilon", "101", "--delta", "1e-5", "--q", "0.01", "--steps", "100"}, "(0, 100]"},
		{acct, []string{"epsilon", "--history", dir, "--delta", "1e-5"}, "not a regular file"},
		{acct, []string{"epsilon", "--history", big, "--delta", "1e-5"}, "larger than"},
		{acct, []string{"epsilon", "--history", many, "--delta", "1e-5"}, "more than 1000000 steps"},
		{expt, []string{"ptr-table", "--seeds", "1-100000000", "--plan", "--out", dir}, "more than 10000 seeds"},
		{expt, []string{"ptr-table", "--seeds", "1-5000,6000-11000", "--plan", "--out", dir}, "more than 10000 seeds"},
		{expt, []string{"ptr-table", "--epsilon", strings.Repeat("3,", 99) + "3", "--corruptions", "paper", "--seeds", "1-20", "--plan", "--out", dir}, "more than 10000 cells"},
		{expt, []string{"pdp-table", "--seeds", "1-3000", "--plan", "--out", dir}, "more than 10000 cells"},
		{train, []string{"--method", "dpsgd", "--steps", "2", "--target-epsilon", "1e308", "--out", filepath.Join(dir, "r")}, "above 100"},
	} {
		var so, se bytes.Buffer
		start := time.Now()
		code := c.cmd(c.args, &so, &se)
		if code != 2 || !strings.Contains(se.String(), c.want) || strings.Count(se.String(), "\n") != 1 {
			t.Errorf("%.80v: exit %d, stderr %q; want exit 2, one line with %q", c.args, code, se.String(), c.want)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%.80v: took %v to refuse", c.args, d)
		}
	}
}

func acct(a []string, so, se *bytes.Buffer) int  { return runAccount(a, so, se) }
func expt(a []string, so, se *bytes.Buffer) int  { return runExperiment(a, so, se) }
func train(a []string, so, se *bytes.Buffer) int { return runTrain(a, so, se) }

// TestBudgetSearchBoundedBySteps: a target ε as large as accepted with
// --steps 2 trains its two steps at once; the budget search used to try up
// to 2³¹ steps (80 s and 1.1 GB at ε = 100 before the first step).
func TestBudgetSearchBoundedBySteps(t *testing.T) {
	if testing.Short() {
		t.Skip("trains on MNIST")
	}
	out := filepath.Join(t.TempDir(), "run")
	var so, se bytes.Buffer
	start := time.Now()
	if code := runTrain([]string{"--method", "dpsgd", "--model", "logreg", "--steps", "2", "--target-epsilon", "100", "--out", out}, &so, &se); code != 0 {
		t.Fatalf("exit %d: %s", code, se.String())
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("2 steps with --target-epsilon 100 took %v", d)
	}
	if !strings.Contains(so.String(), "2 steps (stopped by steps)") {
		t.Errorf("stdout: %s", so.String())
	}
}
