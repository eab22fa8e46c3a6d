package main

import (
	"bytes"
	"encoding/json"
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
		{[]string{"--nosuchflag"}, "unknown flag --nosuchflag"},
		{[]string{"--preset", "nope"}, "unknown preset"},
		{[]string{"--config", filepath.Join(dir, "missing.yaml")}, "missing.yaml"},
		{[]string{"extra"}, "unexpected arguments"},
		{[]string{"--accountant", "prv"}, `unknown accountant "prv"`},
		{[]string{"--accountant", "rdp", "--pld-interval", "1e-3"}, "pld interval"},
		// Float noise is an explicit opt-in of the private methods only;
		// the former opt-out spelling is refused, not silently secure.
		{[]string{"--method", "nonprivate", "--float-noise"}, "does not use --float-noise"},
		{[]string{"--secure-noise=false"}, "--secure-noise=false no longer selects float noise"},
		{[]string{"--config", writeFile(t, dir, "old.yaml", "secure_noise: false\n")}, "write float_noise: true"},
		{[]string{"--config", writeFile(t, dir, "both.yaml", "secure_noise: true\n"), "--float-noise"}, "float_noise and secure_noise are both set"},
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
		"--target-epsilon", "0", "--corruption", "none", "--corruption-ratio", "0", "--float-noise", "--out", out}
	if code := dispatch(args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, want := range []string{"test accuracy:", "privacy: (ε, δ) = (", "by the PLD accountant (certified upper bound", "run directory: " + out,
		"privacy randomness: secret", "noise: WARNING: FLOAT NOISE (--float-noise)", "does NOT hold against floating-point attacks (Mironov"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, stdout.String())
		}
	}
	if !strings.Contains(stderr.String(), "WARNING: FLOAT NOISE") {
		t.Errorf("no start-up warning for --float-noise: %s", stderr.String())
	}
	var sum map[string]any
	if data, err := os.ReadFile(filepath.Join(out, "summary.json")); err != nil || json.Unmarshal(data, &sum) != nil {
		t.Fatalf("summary.json: %v", err)
	}
	if sum["float_noise"] != true || sum["secure_noise"] != nil || sum["accountant"] != "pld" ||
		!strings.Contains(sum["noise"].(string), "does NOT hold against floating-point attacks") {
		t.Errorf("summary.json does not state float noise and its accountant: %v", sum)
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
	// The same run as the former code stored it (float was the default, so
	// config.json had no noise key) resumes with float noise and says so.
	path := filepath.Join(out, "config.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	old := strings.Replace(string(data), "\n  \"float_noise\": true,", "", 1)
	if old == string(data) || os.WriteFile(path, []byte(old), 0o644) != nil {
		t.Fatalf("cannot write the former format: %s", data)
	}
	stdout.Reset()
	if code := dispatch([]string{"train", "--resume", "--out", out, "--steps", "33"}, &stdout, &stderr); code != 0 {
		t.Fatalf("resume of a former-format float run: exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "noise: WARNING: FLOAT NOISE") || !strings.Contains(stdout.String(), "33 steps") {
		t.Errorf("former-format run did not resume with float noise:\n%s", stdout.String())
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
// says so, with no warning about the seed); the default (secure) noise is
// accounted by the PLD of the continuous Gaussian it post-processes, like
// float noise. --secure-noise is a deprecated no-op.
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
	if !strings.Contains(stderr.String(), "--secure-noise is deprecated and does nothing") {
		t.Errorf("no deprecation note for --secure-noise: %s", stderr.String())
	}
	for _, want := range []string{"privacy randomness: secret: drawn from the OS", "noise: secure (floating-point safe)", "by the PLD accountant"} {
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

// writeFile writes content to dir/name and returns the path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
