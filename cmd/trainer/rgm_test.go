package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"github.com/privtrain/privtrain/experiments/rgmfig"
	"math"
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
		{"--out", t.TempDir(), "--figure", "--protocol", "code"},
		{"--out", t.TempDir(), "--protocol", "authors"}, // --protocol without --figure
	} {
		var so, se bytes.Buffer
		if code := runRGM(args, &so, &se); code != 2 {
			t.Errorf("%v: exit %d, want 2 (stderr %q)", args, code, se.String())
		}
	}
	// Missing data is refused before anything runs: exit 2, one line.
	var so, se bytes.Buffer
	if code := runRGM([]string{"--out", t.TempDir(), "--data-dir", t.TempDir()}, &so, &se); code != 2 || !strings.Contains(se.String(), "ijcnn1") || strings.Count(se.String(), "\n") != 1 {
		t.Errorf("missing data: exit %d, stderr %q", code, se.String())
	}
	t.Setenv("PRIVTRAIN_DATA", "")
	se.Reset()
	if code := runRGM([]string{"--figure", "--out", t.TempDir()}, &so, &se); code != 2 || !strings.Contains(se.String(), "pass --data-dir DIR") {
		t.Errorf("no data directory: exit %d, stderr %q", code, se.String())
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
		var sum rgmfig.GDSummary
		b, err := os.ReadFile(filepath.Join(out, "summary.json"))
		if err != nil || json.Unmarshal(b, &sum) != nil || sum.N != 141691 || sum.D != 22 {
			t.Fatalf("%v: summary %v %+v", tc.args, err, sum)
		}
		// The float noise is stated, on the console and in summary.json.
		if !strings.Contains(sum.Noise, "NOT floating-point safe") || !strings.Contains(so.String(), "noise: WARNING: float noise, NOT floating-point safe") {
			t.Errorf("%v: noise not stated: summary %q, stdout %q", tc.args, sum.Noise, so.String())
		}
		if b, err := os.ReadFile(filepath.Join(out, rgmfig.OperatorNoticeFile)); err != nil || !strings.HasPrefix(string(b), "OPERATOR-ONLY") {
			t.Errorf("%v: no operator-only notice: %v", tc.args, err)
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

// TestRGMValidatesBeforeLoading: every bad flag value is refused (exit 2,
// naming the flag) before the data is loaded — the data directory here is
// empty, so reaching the loader would give the ijcnn1 error instead — and
// nothing is written.
func TestRGMValidatesBeforeLoading(t *testing.T) {
	empty := t.TempDir()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--method", "magic"}, "--method must be rgm, clip, none"},
		{[]string{"--split", "diagonal"}, "--split must be random, label, label-offset, bias"},
		{[]string{"--nodes", "0"}, "--nodes must be in [1, 10000]"},
		{[]string{"--iterations", "0"}, "--iterations must be ≥ 1"},
		{[]string{"--epsilon", "NaN"}, "--epsilon must be finite and > 0"},
		{[]string{"--epsilon", "-1"}, "--epsilon must be finite and > 0"},
		{[]string{"--alpha", "1"}, "--alpha must be finite and > 1"},
		{[]string{"--mu-reg", "Inf"}, "--mu-reg must be finite"},
		{[]string{"--clip-noise", "loud"}, "--clip-noise must be eq82, replace-one"},
		{[]string{"--constants", "vibes"}, "--constants must be rigorous, paper"},
		{[]string{"--ptr-delta", "1"}, "--ptr-delta must be in (0, 1)"},
		{[]string{"--workers", "0"}, "--workers must be ≥ 1"},
	}
	for _, tc := range tests {
		out := filepath.Join(t.TempDir(), "out")
		var so, se bytes.Buffer
		args := append([]string{"--out", out, "--data-dir", empty}, tc.args...)
		if code := runRGM(args, &so, &se); code != 2 || !strings.Contains(se.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tc.args, code, se.String(), tc.want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%v: the output directory was created", tc.args)
		}
	}
}

// TestRGMSummaryNeverEmpty: a summary that cannot be encoded (NaN) is an
// error and leaves no summary.json, instead of a 0-byte file.
func TestRGMSummaryNeverEmpty(t *testing.T) {
	dir := t.TempDir()
	err := (&rgmfig.GDResult{Summary: rgmfig.GDSummary{MuReg: math.NaN()}}).Write(dir, "csv")
	if err == nil {
		t.Fatal("NaN summary written without error")
	}
	if _, serr := os.Stat(filepath.Join(dir, "summary.json")); !os.IsNotExist(serr) {
		t.Error("summary.json exists after a failed write")
	}
	if err := (&rgmfig.GDResult{Summary: rgmfig.GDSummary{MuReg: 0.03}}).Write(dir, "csv"); err != nil {
		t.Fatal(err)
	}
	var back rgmfig.GDSummary
	data, _ := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err := json.Unmarshal(data, &back); err != nil || back.MuReg != 0.03 {
		t.Errorf("summary.json = %q (%v)", data, err)
	}
}
