package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/privtrain/privtrain/runner"
)

// TestTrainFlagsCheckedAgainstMethod: flags the chosen method ignores are
// errors naming them; zero values ask for nothing and pass.
func TestTrainFlagsCheckedAgainstMethod(t *testing.T) {
	tests := []struct {
		args []string
		want string // "" = accepted
	}{
		{[]string{"--method", "dpsgd", "--rule", "krum", "--steps", "5"}, "method dpsgd does not use --rule (used by nonprivate-robust)"},
		{[]string{"--method", "dpsgd", "--tau", "0.3", "--steps", "5"}, "does not use --tau (used by tsgd-ptr)"},
		{[]string{"--method", "pdp-sgd", "--sigma", "5"}, "method pdp-sgd does not use --sigma"},
		{[]string{"--method", "pdp-sgd", "--epochs", "3"}, "method pdp-sgd does not use --epochs"},
		{[]string{"--method", "pdp-sgd", "--eval-every", "10"}, "does not use --eval-every"},
		{[]string{"--method", "dpsgd", "--rounds", "4", "--steps", "5"}, "does not use --rounds (used by pdp-sgd"},
		{[]string{"--method", "nonprivate", "--clip", "2", "--steps", "5"}, "does not use --clip"},
		{[]string{"--method", "nonprivate-robust", "--rule", "geomed", "--steps", "5", "--target-epsilon", "0"}, ""},
		{[]string{"--method", "pdp-sgd", "--checkpoint-every", "10"}, ""},
		{[]string{"--method", "dpsgd", "--steps", "5", "--corruption", "none"}, ""},
	}
	for _, tc := range tests {
		_, _, err := parseTrainFlags(append(tc.args, "--out", t.TempDir()), &bytes.Buffer{})
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%v: got %v, want %q", tc.args, err, tc.want)
		}
	}
}

// TestTrainDefaults: `train` has no corruption (the default job keeps its
// 10% label flips); --corruption none needs no ratio; a non-private method
// drops the default budget; a relative --data-dir is stored absolute.
func TestTrainDefaults(t *testing.T) {
	cfg, _, err := parseTrainFlags([]string{"--method", "dpsgd"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Corruption != "none" || cfg.CorruptionRatio != 0 {
		t.Errorf("train --method dpsgd corrupts: %q %v", cfg.Corruption, cfg.CorruptionRatio)
	}
	def, _, err := parseTrainFlagsFrom(nil, runner.DefaultConfig(), &bytes.Buffer{})
	if err != nil || def.Corruption != "label-flip" || def.CorruptionRatio != 0.1 {
		t.Errorf("default job: %q %v (%v), want label-flip 0.1", def.Corruption, def.CorruptionRatio, err)
	}
	cfg, _, err = parseTrainFlags([]string{"--corruption", "label-flip", "--corruption-ratio", "0.2", "--config", writeTemp(t, "c.json", `{"corruption":"feature","corruption_ratio":0.3}`)}, &bytes.Buffer{})
	if err != nil || cfg.Corruption != "label-flip" || cfg.CorruptionRatio != 0.2 {
		t.Errorf("flags over config: %q %v (%v)", cfg.Corruption, cfg.CorruptionRatio, err)
	}
	cfg, _, err = parseTrainFlags([]string{"--corruption", "none", "--config", writeTemp(t, "c.json", `{"corruption":"feature","corruption_ratio":0.3}`)}, &bytes.Buffer{})
	if err != nil || cfg.CorruptionRatio != 0 {
		t.Errorf("--corruption none over a config with a ratio: ratio %v (%v)", cfg.CorruptionRatio, err)
	}
	cfg, _, err = parseTrainFlags([]string{"--method", "nonprivate", "--steps", "3"}, &bytes.Buffer{})
	if err != nil || cfg.TargetEpsilon != 0 {
		t.Errorf("nonprivate: target ε %v (%v)", cfg.TargetEpsilon, err)
	}
	cfg, _, err = parseTrainFlags([]string{"--data-dir", "some/rel"}, &bytes.Buffer{})
	if err != nil || !filepath.IsAbs(cfg.DataDir) || !strings.HasSuffix(cfg.DataDir, "some/rel") {
		t.Errorf("data dir %q (%v), want absolute", cfg.DataDir, err)
	}
}

func writeTemp(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestTrainResumeFlags: --resume continues the stored run; a flag that
// conflicts with it is an error naming the flag (exit 2); the length flags,
// --data-dir and the frequencies may be given.
func TestTrainResumeFlags(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	stored := runner.TrainDefaults()
	stored.Method, stored.Model, stored.Steps, stored.TargetEpsilon, stored.Out = "dpsgd", "logreg", 20, 1, out
	os.MkdirAll(out, 0o755)
	data, _ := json.Marshal(stored)
	os.WriteFile(filepath.Join(out, "config.json"), data, 0o644)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--sigma", "5"}, "--sigma 5 conflicts with the stored value 1.1"},
		{[]string{"--method", "tsgd-ptr"}, "--method tsgd-ptr conflicts with the stored value dpsgd"},
		{[]string{"--seed", "3", "--lr", "2"}, "--lr 2 conflicts with the stored value 0.15; --seed 3 conflicts with the stored value 1"},
		{[]string{"--preset", "ptr-mnist"}, "--preset and --config cannot be combined with it"},
		{[]string{"--sigma", "1.1"}, ""}, // repeating the stored value is fine
		{[]string{"--steps", "30", "--checkpoint-every", "7", "--data-dir", "rel"}, ""},
	}
	for _, tc := range tests {
		cfg, resume, err := parseTrainFlags(append([]string{"--resume", "--out", out}, tc.args...), &bytes.Buffer{})
		if tc.want == "" {
			if err != nil || !resume {
				t.Errorf("%v: %v", tc.args, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want %q", tc.args, err, tc.want)
		}
		_ = cfg
	}
	cfg, _, err := parseTrainFlags([]string{"--resume", "--out", out}, &bytes.Buffer{})
	if err != nil || cfg.Steps != 20 || cfg.TargetEpsilon != 1 || cfg.Method != "dpsgd" {
		t.Errorf("bare --resume: steps %d target %v method %s (%v); want the stored 20, 1, dpsgd", cfg.Steps, cfg.TargetEpsilon, cfg.Method, err)
	}
	cfg, _, err = parseTrainFlags([]string{"--resume", "--out", out, "--steps", "30", "--data-dir", "rel"}, &bytes.Buffer{})
	if err != nil || cfg.Steps != 30 || !filepath.IsAbs(cfg.DataDir) {
		t.Errorf("--steps 30 --data-dir rel: %d %q (%v)", cfg.Steps, cfg.DataDir, err)
	}
	var se bytes.Buffer
	if code := dispatch([]string{"train", "--resume", "--out", filepath.Join(t.TempDir(), "none")}, &bytes.Buffer{}, &se); code != 2 || !strings.Contains(se.String(), "holds no run") {
		t.Errorf("resume of an empty directory: exit %d %q", code, se.String())
	}
}

// TestTrainSignals builds the trainer once and stops short runs with SIGTERM
// and SIGINT: both checkpoint and exit with the resume hint; a second
// process on a run directory in use is refused naming the holder.
func TestTrainSignals(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the trainer and trains on MNIST")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "trainer")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		out := filepath.Join(dir, sig.String())
		cmd := exec.Command(bin, "train", "--method", "dpsgd", "--model", "logreg", "--steps", "100000", "--lr", "1",
			"--target-epsilon", "0", "--checkpoint-every", "1000000", "--out", out)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Wait until training runs (the first metrics are written).
		deadline := time.Now().Add(60 * time.Second)
		for {
			if st, err := os.Stat(filepath.Join(out, "config.json")); err == nil && st.Size() > 0 {
				break
			}
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				t.Fatalf("%v: run did not start: %s", sig, stderr.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
		time.Sleep(700 * time.Millisecond)
		// While it runs, a second writer is refused.
		second := exec.Command(bin, "train", "--resume", "--out", out)
		msg, err := second.CombinedOutput()
		if code := second.ProcessState.ExitCode(); err == nil || code != 2 || !strings.Contains(string(msg), "is in use by process") {
			t.Errorf("second process: exit %d, %q", code, msg)
		}
		cmd.Process.Signal(sig)
		err = cmd.Wait()
		if err == nil || !strings.Contains(stderr.String(), "checkpoint written; continue with --resume") {
			t.Errorf("%v: err %v, stderr %q", sig, err, stderr.String())
		}
		var ck struct {
			NextStep int `json:"next_step"`
		}
		data, _ := os.ReadFile(filepath.Join(out, "state.json"))
		if json.Unmarshal(data, &ck) != nil || ck.NextStep <= 0 {
			t.Errorf("%v: no checkpoint after the signal (state.json %q)", sig, data)
		}
	}
}
