package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTrainRejectsBadInput(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--sigma", "0"}, "σ"},
		{[]string{"--delta", "1.5"}, "δ"},
		{[]string{"--q", "2"}, "sampling rate"},
		{[]string{"--method", "magic"}, "unknown method"},
		{[]string{"--nosuchflag"}, "not defined"},
		{[]string{"--preset", "nope"}, "unknown preset"},
		{[]string{"--config", filepath.Join(dir, "missing.yaml")}, "missing.yaml"},
		{[]string{"extra"}, "unexpected arguments"},
		{[]string{"--accountant", "prv"}, "accountant must be pld or rdp"},
		{[]string{"--method", "tsgd-ptr", "--accountant", "pld"}, "no proven privacy loss distribution"},
		{[]string{"--accountant", "rdp", "--pld-interval", "1e-3"}, "pld interval"},
	}
	for _, tc := range tests {
		var stdout, stderr bytes.Buffer
		code := dispatch(append([]string{"train", "--out", filepath.Join(dir, "r")}, tc.args...), &stdout, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("train %v: exit %d, stderr %q; want exit 2 mentioning %q", tc.args, code, stderr.String(), tc.want)
		}
		if _, err := os.Stat(filepath.Join(dir, "r")); err == nil {
			t.Errorf("train %v: created a run directory despite the error", tc.args)
		}
	}
}

func TestTrainEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("trains on MNIST")
	}
	out := filepath.Join(t.TempDir(), "run")
	var stdout, stderr bytes.Buffer
	args := []string{"train", "--method", "dpsgd", "--model", "logreg", "--steps", "30", "--lr", "1",
		"--target-epsilon", "0", "--corruption", "none", "--corruption-ratio", "0", "--secure-noise=false", "--out", out}
	if code := dispatch(args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, want := range []string{"test accuracy:", "privacy: (ε, δ) = (", "by the PLD accountant (certified upper bound", "run directory: " + out,
		"privacy randomness: secret", "noise: floating point"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, stdout.String())
		}
	}
	for _, f := range []string{"config.json", "metrics.jsonl", "summary.json", "model.bin", "state.json"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("run directory lacks %s", f)
		}
	}
	// Starting over the finished run is refused; resuming it is fine.
	if code := dispatch(args, &stdout, &stderr); code == 0 {
		t.Error("a second run into the same directory was accepted")
	}
	if code := dispatch(append(args, "--resume"), &stdout, &stderr); code != 0 {
		t.Errorf("resume of a finished run: exit %d: %s", code, stderr.String())
	}
}

func TestFreeRunDir(t *testing.T) {
	base := filepath.Join(t.TempDir(), "default")
	if got := freeRunDir(base); got != base {
		t.Fatalf("empty: got %s", got)
	}
	for _, d := range []string{base, base + "-2"} {
		os.MkdirAll(d, 0o755)
		os.WriteFile(filepath.Join(d, "config.json"), []byte("{}"), 0o644)
	}
	if got := freeRunDir(base); got != base+"-3" {
		t.Errorf("got %s, want %s-3", got, base)
	}
}

// --seed is public (the noise stays secret, from the OS, and the console
// says so, with no warning about the seed); the default secure noise is accounted by
// the discrete Gaussian's curve with the ZW19 subsampling bound (on RDP:
// the discrete mechanism has no proven PLD).
func TestTrainSeedWarnsAndSecureDefault(t *testing.T) {
	if testing.Short() {
		t.Skip("trains on MNIST")
	}
	out := filepath.Join(t.TempDir(), "run")
	var stdout, stderr bytes.Buffer
	args := []string{"train", "--method", "dpsgd", "--model", "logreg", "--steps", "5", "--lr", "1", "--seed", "3",
		"--target-epsilon", "0", "--corruption", "none", "--corruption-ratio", "0", "--secure-noise", "--out", out}
	if code := dispatch(args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, want := range []string{"privacy randomness: secret: drawn from the OS", "noise: secure", "zw19", "RDP accountant"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, stdout.String())
		}
	}
	if strings.Contains(stdout.String()+stderr.String(), "REPRODUCIBLE") || strings.Contains(stderr.String(), "WARNING") {
		t.Errorf("--seed is public, yet the output warns:\n%s%s", stdout.String(), stderr.String())
	}
}

// TestDefaultJobFlags: flags without a command run the default job's
// configuration (TSGD+PTR, secure noise) into --out, as the README says.
func TestDefaultJobFlags(t *testing.T) {
	if testing.Short() {
		t.Skip("trains 3 steps on MNIST")
	}
	dir := filepath.Join(t.TempDir(), "run")
	var stdout, stderr bytes.Buffer
	if code := dispatch([]string{"--out", dir, "--steps", "3"}, &stdout, &stderr); code != 0 {
		t.Fatalf("trainer --out DIR --steps 3: exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "method tsgd-ptr") {
		t.Errorf("not the default job's method: %s", stdout.String())
	}
	cfg, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(cfg), `"secure_noise": true`) {
		t.Errorf("config.json of the default job lacks secure noise: %s", cfg)
	}
	if code := dispatch([]string{"--no-such-flag"}, &stdout, &stderr); code != 2 {
		t.Errorf("unknown flag without a command: exit %d, want 2", code)
	}
}
