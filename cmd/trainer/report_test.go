package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportCLI: exit codes and one-line errors of trainer report, flags
// before and after the runs, and the files it writes.
func TestReportCLI(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "run")
	os.MkdirAll(run, 0o755)
	os.WriteFile(filepath.Join(run, "config.json"), []byte(`{"method":"dpsgd","dataset":"mnist","model":"logreg"}`), 0o644)
	os.WriteFile(filepath.Join(run, "metrics.jsonl"), []byte("{\"step\":0,\"epsilon\":0.5}\n{\"step\":1,\"epsilon\":0.6}\n{\"step\":1,\"test_accuracy\":0.8}\n"), 0o644)
	page, csvDir := filepath.Join(dir, "r.html"), filepath.Join(dir, "csv")
	for _, c := range []struct {
		args []string
		code int
		err  string
	}{
		{nil, 2, "no run directory given"},
		{[]string{filepath.Join(dir, "nope")}, 2, "nope: no such run directory"},
		{[]string{dir}, 2, "not a run directory (no config.json)"},
		{[]string{"--bogus", run}, 2, "unknown flag --bogus"},
		{[]string{"--out", "", run}, 2, "--out must name a file"},
		{[]string{"--help"}, 0, ""},
		{[]string{run, "--out", page, "--csv", csvDir}, 0, ""},
	} {
		var stdout, stderr bytes.Buffer
		code := dispatch(append([]string{"report"}, c.args...), &stdout, &stderr)
		msg := stderr.String()
		if code != c.code || !strings.Contains(msg, c.err) || strings.Count(msg, "\n") > 1 {
			t.Errorf("report %q: exit %d, stderr %q; want exit %d with %q on one line", c.args, code, msg, c.code, c.err)
		}
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(html, []byte(`<svg xmlns="http://www.w3.org/2000/svg" class="chart" id="epsilon"`)) {
		t.Error("no ε chart on the page")
	}
	eps, err := os.ReadFile(filepath.Join(csvDir, "run", "epsilon.csv"))
	if err != nil || string(eps) != "step,epsilon\n0,0.5\n1,0.6\n" {
		t.Errorf("epsilon.csv %q (%v)", eps, err)
	}
}
