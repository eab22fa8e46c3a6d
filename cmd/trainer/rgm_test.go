package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func ijcnn1DirOrSkip(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("PRIVTRAIN_DATA")
	if dir == "" {
		dir = "/work/shared/datasets"
	}
	if _, err := os.Stat(filepath.Join(dir, "ijcnn1")); err != nil {
		t.Skipf("ijcnn1 not found under %s", dir)
	}
	return dir
}

func TestRGMFlagErrors(t *testing.T) {
	for _, args := range [][]string{
		{}, // no --out
		{"--out", t.TempDir(), "--format", "xml"},
		{"--out", t.TempDir(), "--runs", "0"},
		{"--out", t.TempDir(), "extra"},
		{"--bogus"},
	} {
		var so, se bytes.Buffer
		if code := runRGM(args, &so, &se); code != 2 {
			t.Errorf("%v: exit %d, want 2 (stderr %q)", args, code, se.String())
		}
	}
	var so, se bytes.Buffer
	if code := runRGM([]string{"--out", t.TempDir(), "--data-dir", t.TempDir()}, &so, &se); code != 1 || !strings.Contains(se.String(), "ijcnn1") {
		t.Errorf("missing data: exit %d, stderr %q", code, se.String())
	}
}

func TestRGMRunWritesGaps(t *testing.T) {
	dir := ijcnn1DirOrSkip(t)
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"--method", "rgm", "--split", "random", "--iterations", "20", "--runs", "2"}, 0},
		{[]string{"--method", "clip", "--split", "bias", "--clip-factor", "10", "--iterations", "20"}, 0},
		{[]string{"--method", "nope", "--iterations", "2"}, 2},
		{[]string{"--method", "rgm", "--split", "label", "--iterations", "2"}, 1}, // rigorous ε floor > 0.1 on the small node
	} {
		out := t.TempDir()
		var so, se bytes.Buffer
		code := runRGM(append([]string{"--data-dir", dir, "--out", out}, tc.args...), &so, &se)
		if code != tc.code {
			t.Fatalf("%v: exit %d, want %d; stderr %s", tc.args, code, tc.code, se.String())
		}
		if code != 0 {
			continue
		}
		var sum rgmSummary
		b, err := os.ReadFile(filepath.Join(out, "summary.json"))
		if err != nil || json.Unmarshal(b, &sum) != nil || sum.N != 141691 || sum.D != 22 {
			t.Fatalf("%v: summary %v %+v", tc.args, err, sum)
		}
		f, _ := os.Open(filepath.Join(out, "gap.csv"))
		sc := bufio.NewScanner(f)
		lines := 0
		for sc.Scan() {
			lines++
		}
		f.Close()
		if lines != 22 { // header + iterations 0..20
			t.Errorf("%v: gap.csv has %d lines", tc.args, lines)
		}
		for _, r := range sum.Runs {
			if r.Error != "" || !(r.FinalGap > 0) || len(r.Nodes) != 2 || r.Nodes[0].StepRDP == nil {
				t.Errorf("%v: run %+v", tc.args, r)
			}
		}
		jl, _ := os.ReadFile(filepath.Join(out, "gap.jsonl"))
		if n := strings.Count(string(jl), "\n"); n != 21*len(sum.Runs) {
			t.Errorf("%v: gap.jsonl has %d lines", tc.args, n)
		}
	}
}
