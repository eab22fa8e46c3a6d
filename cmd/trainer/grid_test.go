package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestGridCLI(t *testing.T) {
	out := t.TempDir()
	run := func(args ...string) (int, string, string) {
		var so, se bytes.Buffer
		code := runExperiment(args, &so, &se)
		return code, so.String(), se.String()
	}
	base := []string{"ptr-table", "--epsilon", "3,5", "--corruptions", "paper", "--methods", "tsgd-ptr,tsgd-gaussian",
		"--seeds", "1-5", "--out", out}
	code, so, se := run(append(base, "--plan")...)
	if code != 0 {
		t.Fatalf("--plan: exit %d: %s", code, se)
	}
	// 2 budgets × 7 settings × 2 methods × 5 seeds, plus two header lines
	// and three summary lines (cells and wall time, its source, the data)
	if n := strings.Count(so, "\n"); n != 140+2+3 {
		t.Errorf("--plan printed %d lines, want 145:\n%s", n, so)
	}
	if !strings.Contains(so, "# 140 cells, 140 to run: estimated wall time 18 h 50 min one cell at a time\n") || !strings.Contains(so, "# data: every unfinished cell's dataset is present") {
		t.Errorf("--plan lacks the time estimate or the data check:\n%s", so)
	}
	if !strings.Contains(so, "139  ") || !strings.Contains(so, "gradient-noise") {
		t.Errorf("--plan:\n%s", so)
	}
	for _, bad := range [][]string{{"--cell", "140"}, {"--jobs", "0"}, {"--plan", "--collect"}} {
		if code, _, se := run(append(base, bad...)...); code == 0 || strings.Count(se, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q", bad, code, se)
		}
	}
	if code, _, se := run("ptr-table", "--epsilon", "x", "--plan"); code == 0 || !strings.Contains(se, "ε") {
		t.Errorf("bad ε: exit %d %q", code, se)
	}
	// --collect on an empty grid: the table lists every cell as missing, exit 1.
	code, so, _ = run(append(base, "--collect")...)
	if code != 1 || !strings.Contains(so, "Missing 140 of 140 cells: 0-139") {
		t.Errorf("--collect: exit %d\n%s", code, so)
	}
	for _, bad := range []string{"/nonexistent/trainer", out} {
		if code, _, se := run(append(base, "--slurm", "--trainer", bad)...); code != 2 || !strings.Contains(se, "--trainer") {
			t.Errorf("--trainer %s: exit %d %q", bad, code, se)
		}
	}
	if code, _, se := run(append(base, "--slurm", "--trainer", "/bin/sh", "--slurm-partition", "a\nb")...); code != 2 || !strings.Contains(se, "control character") {
		t.Errorf("partition with a newline: exit %d %q", code, se)
	}
	trainer := filepath.Join(t.TempDir(), "trainer")
	if err := os.WriteFile(trainer, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	code, so, se = run(append(base, "--slurm", "--trainer", trainer, "--slurm-concurrency", "4", "--slurm-option=--qos=low")...)
	if code != 0 {
		t.Fatalf("--slurm: exit %d: %s", code, se)
	}
	b, err := os.ReadFile(filepath.Join(out, "slurm", "array-tsgd-ptr.sbatch"))
	if err != nil {
		t.Fatal(err)
	}
	want := "exec " + trainer + " experiment ptr-table --corruptions=paper --epsilon=3,5 --methods=tsgd-ptr,tsgd-gaussian --seeds=1-5 --out=" + out + ` --cell "${SLURM_ARRAY_TASK_ID}"`
	if !strings.Contains(string(b), want) || !strings.Contains(string(b), "#SBATCH --qos=low\n") || !strings.Contains(string(b), "%4\n") {
		t.Errorf("array script lacks %q:\n%s", want, b)
	}
	if !strings.Contains(so, "submit with: bash "+filepath.Join(out, "slurm", "submit.sh")) {
		t.Errorf("stdout: %s", so)
	}
}
