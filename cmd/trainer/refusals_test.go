package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSilentAcceptancesRefused: each of these used to run (or plan) as if
// the value had not been given, or exit 0 on a mistake; each is now a
// one-line refusal with exit 2 that names the problem. (`--secure-noise`
// with nonprivate is the noise mode's, issue 22.)
func TestSilentAcceptancesRefused(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	out := filepath.Join(dir, "run")
	tr := []string{"train", "--model", "logreg", "--steps", "2", "--target-epsilon", "0", "--out", out}
	gauss := []string{"--steps", "10", "--delta", "1e-5", "--q", "0.01"}
	plan := []string{"experiment", "ptr-table", "--plan", "--out", filepath.Join(dir, "grid")}
	for _, c := range []struct {
		args  []string
		want  string
		lines int // stderr lines (0: exactly one)
	}{
		{append(tr, "--checkpoint-every", "-1"), "checkpoint interval must be ≥ 0", 0},
		{append(tr, "--eval-every", "-2"), "evaluation interval ≥ −1", 0},
		{append(tr, "--method", "pdp-sgd", "--round-epochs", "-1"), "epochs per round must be finite and ≥ 0", 0},
		{append(tr, "--method", "dpsgd", "--accountant", "pld", "--allow-unproven"), "options of the RDP accountant", 0},
		{append(tr, "--method", "dpsgd", "--accountant", "pld", "--conversion", "mironov"), "options of the RDP accountant", 0},
		{append(tr, "--method", "dpsgd", "--conversion", "mironov"), "accounted with PLD", 0},
		{append(tr, "--preset", "ptr-mnist", "--preset=ptr-mnist"), "--preset given twice", 0},
		{append(tr, "--config", write("dup.json", `{"steps": 2, "steps": 3}`)), `key "steps" appears twice`, 0},
		{append(tr, "--config", write("null.json", "null")), "not null", 0},
		{append(tr, "--config", write("null.yaml", "~\n")), "not a scalar, list or null", 0},
		{append([]string{"account", "epsilon", "--mech", "gaussian", "--sigma", "1", "--sigma1", "2"}, gauss...), "--sigma1 is not a parameter of --mech gaussian", 0},
		{append([]string{"account", "epsilon", "--mech", "gaussian", "--sigma", "1", "--tau", "0.5"}, gauss...), "--tau is not a parameter", 0},
		{[]string{"account", "rdp", "--mech", "laplace", "--b", "1", "--sigma", "1"}, "--sigma is not a parameter of --mech laplace", 0},
		{[]string{"account", "epsilon", "--delta", "1e-5", "--history", write("h.json", `[{"mech":"gaussian","Sigma":1,"q":0.01,"steps":10}]`)}, `unknown key "Sigma"`, 0},
		{[]string{"audit", "mechanism", "--rule", "sum", "--confidence", "0"}, "--confidence must be in (0, 1)", 0},
		{[]string{"audit", "mechanism", "--rule", "sum", "--dim", "0"}, "--dim must be ≥ 1", 0},
		{[]string{"audit", "mechanism", "--rule", "sum", "--workers", "-1"}, "--workers must be ≥ 0", 0},
		{[]string{"audit", "run", "--canaries", "0", "--method", "dpsgd", "--steps", "2"}, "--canaries must be ≥ 1", 0},
		{append(plan, "--methods", ""), `unknown method ""`, 0},
		{append(plan, "--dpsgd-sigma", "NaN"), "dpsgd σ must be finite", 0},
		{append(plan, "--accountant", "moments"), "unknown accountant \"moments\"", 0},
		{append(plan[:2:2], "--slurm", "--trainer", "/nonexistent", "--out", filepath.Join(dir, "grid")), "--trainer", 0},
		{append(plan[:2:2], "--slurm", "--trainer", "/bin/sh", "--slurm-concurrency", "-1", "--out", filepath.Join(dir, "grid")), "--slurm-concurrency must be ≥ 0", 0},
		{[]string{"rgm-gd", "--figure", "--nodes", "4", "--out", filepath.Join(dir, "rgm")}, "--figure sets --nodes itself", 0},
		{[]string{"rgm-gd", "--figure", "--method", "clip", "--out", filepath.Join(dir, "rgm")}, "--figure sets --method itself", 0},
		{[]string{"help", "bogus"}, `unknown command "bogus"`, -1},
		{[]string{"--version", "extra"}, "unexpected arguments: extra", 0},
	} {
		var so, se bytes.Buffer
		code := dispatch(c.args, &so, &se)
		first, _, _ := strings.Cut(se.String(), "\n")
		if code != 2 || !strings.Contains(first, c.want) || c.lines == 0 && strings.Count(se.String(), "\n") != 1 {
			t.Errorf("%q: exit %d, stderr %q; want exit 2, first line containing %q", c.args, code, se.String(), c.want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Fatalf("%q: refused but left %s", c.args, out)
		}
	}
}
