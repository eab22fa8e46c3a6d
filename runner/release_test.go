package runner

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/privtrain/privtrain/aggregate"
	"github.com/privtrain/privtrain/privacy"
)

// logregRun is a fast private run: DP-SGD with logistic regression on MNIST.
func logregRun(out string, steps int) TrainConfig {
	c := DefaultConfig()
	c.Method, c.Model, c.Dataset, c.Preset = "dpsgd", "logreg", "mnist", ""
	c.Corruption, c.CorruptionRatio, c.TargetEpsilon, c.DynamicF = "", 0, 0, false
	c.BatchSize, c.Sigma, c.ClipNorm, c.LR = 256, 1.1, 1, 0.5
	c.Epochs, c.Steps, c.CheckpointEvery = 0, steps, 0
	c.Out = out
	return c
}

func fileHash(t *testing.T, path string) [32]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(data)
}

// TestSecretNoiseByDefault: two runs with identical configurations (the
// default: secret privacy randomness) release different models, while two
// runs given the same noise key release the same one; a secret run resumed from its
// checkpoint (reading private/noise.key) ends bit-for-bit where an
// uninterrupted copy of it ends.
func TestSecretNoiseByDefault(t *testing.T) {
	dir := t.TempDir()
	run := func(c TrainConfig, resume bool) {
		t.Helper()
		if _, err := Train(context.Background(), c, Options{Resume: resume}); err != nil {
			t.Fatal(err)
		}
	}
	a, b := logregRun(filepath.Join(dir, "a"), 6), logregRun(filepath.Join(dir, "b"), 6)
	run(a, false)
	run(b, false)
	if fileHash(t, filepath.Join(a.Out, finalModel)) == fileHash(t, filepath.Join(b.Out, finalModel)) {
		t.Fatal("two default runs released identical models: the noise is not secret")
	}
	ra, rb := logregRun(filepath.Join(dir, "ra"), 6), logregRun(filepath.Join(dir, "rb"), 6)
	ra.NoiseKey, rb.NoiseKey = testNoiseKey(7), testNoiseKey(7)
	run(ra, false)
	run(rb, false)
	if fileHash(t, filepath.Join(ra.Out, finalModel)) != fileHash(t, filepath.Join(rb.Out, finalModel)) {
		t.Fatal("two runs given the same noise key differ")
	}
	key, err := os.ReadFile(filepath.Join(ra.Out, privateDir, noiseKeyFile))
	if want, _ := ra.NoiseKey.MarshalText(); err != nil || strings.TrimSpace(string(key)) != string(want) {
		t.Errorf("private/noise.key of a run given its key: %q, %v; want the key", key, err)
	}
	var sum Summary
	if err := readJSON(filepath.Join(ra.Out, summaryFile), &sum); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sum.PrivacyRandomness, "operator's key") {
		t.Errorf("the summary of a run given its key must say so: %q", sum.PrivacyRandomness)
	}

	// Resume: stop a secret run at step 3, copy its directory, continue the
	// original and the copy to 6 steps: the secret key is read back, so both
	// end at the same model, and a fresh key would have been detected.
	p := logregRun(filepath.Join(dir, "p"), 3)
	run(p, false)
	cp := filepath.Join(dir, "p-copy")
	copyDir(t, p.Out, cp)
	p.Steps = 6
	run(p, true)
	q := logregRun(cp, 6)
	run(q, true)
	if fileHash(t, filepath.Join(p.Out, finalModel)) != fileHash(t, filepath.Join(q.Out, finalModel)) {
		t.Fatal("resuming a secret run is not exact")
	}
	if err := os.Remove(filepath.Join(cp, privateDir, noiseKeyFile)); err != nil {
		t.Fatal(err)
	}
	q.Steps = 8
	if _, err := Train(context.Background(), q, Options{Resume: true}); err == nil || !strings.Contains(err.Error(), "noise key") {
		t.Errorf("resume without the secret key must fail clearly, got %v", err)
	}
}

// TestReleaseSafeFiles checks the split of a TSGD+PTR run's files: the
// public ones hold no unprivatized value and no key; the private ones exist
// with operator-only permissions.
func TestReleaseSafeFiles(t *testing.T) {
	c := logregRun(filepath.Join(t.TempDir(), "ptr"), 4)
	c.Method, c.Sigma, c.Tau, c.LaplaceB, c.Delta0, c.TrimFraction = "tsgd-ptr", 1.1, 0.5, 1, 1e-8, 0.25
	c.DynamicF, c.DynamicRate = true, 0.02
	c.Corruption, c.CorruptionRatio = "label-flip", 0.1
	c.EvalEvery = 2
	if _, err := Train(context.Background(), c, Options{}); err != nil {
		t.Fatal(err)
	}
	key, err := os.ReadFile(filepath.Join(c.Out, privateDir, noiseKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	keyHex := strings.TrimSpace(string(key))
	// epsilon_steps is the public step count on the PLD accountant's grid of
	// counts at which ε was evaluated (a function of the step number).
	allowed := map[string]bool{"step": true, "epsilon": true, "epsilon_steps": true, "branch": true, "f": true, "test_accuracy": true}
	lines := readLines(t, filepath.Join(c.Out, metricsFile))
	if len(lines) != 6 { // 4 steps + 2 evaluations
		t.Fatalf("metrics.jsonl has %d lines, want 6", len(lines))
	}
	branches := 0
	for _, l := range lines {
		var rec map[string]any
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatal(err)
		}
		for k := range rec {
			if !allowed[k] {
				t.Errorf("metrics.jsonl holds the unprivatized field %q: %s", k, l)
			}
		}
		if _, ok := rec["branch"]; ok {
			branches++
		}
	}
	if branches != 4 {
		t.Errorf("%d PTR outcome bits logged, want 4", branches)
	}
	diag := readLines(t, filepath.Join(c.Out, privateDir, diagnosticsFile))
	if len(diag) != 4 || !strings.Contains(diag[0], `"loss"`) || !strings.Contains(diag[0], `"batch_size"`) {
		t.Errorf("diagnostics.jsonl: %d lines, first %s", len(diag), diag[0])
	}
	var pub map[string]any
	data, err := os.ReadFile(filepath.Join(c.Out, summaryFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &pub); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"final_train_loss", "examples_processed", "wall_seconds", "examples_per_second", "corrupted_examples"} {
		if _, ok := pub[k]; ok {
			t.Errorf("public summary.json holds diagnostic %q", k)
		}
	}
	var full Summary
	if err := readFullSummary(c.Out, &full); err != nil || full.Examples == 0 || full.CorruptedExamples == 0 {
		t.Errorf("private summary lacks diagnostics: %+v, %v", full, err)
	}
	for _, f := range []string{configFile, summaryFile, metricsFile, corruptedFile} {
		data, err := os.ReadFile(filepath.Join(c.Out, f))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), keyHex) {
			t.Errorf("%s contains the secret noise key", f)
		}
	}
	for path, mode := range map[string]os.FileMode{
		privateDir: 0o700, filepath.Join(privateDir, noiseKeyFile): 0o600,
		filepath.Join(privateDir, diagnosticsFile): 0o600, filepath.Join(privateDir, summaryFile): 0o600,
	} {
		st, err := os.Stat(filepath.Join(c.Out, path))
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != mode {
			t.Errorf("%s has mode %v, want %v", path, st.Mode().Perm(), mode)
		}
	}
}

// copyDir copies the regular files of src (recursively) to dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o700)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A secure-noise run is accounted by the continuous Gaussian mechanism its
// release post-processes (privacy.Gaussian{σ}, as a float run): it stops
// within the target, and one more step of that mechanism, Poisson-subsampled
// and composed independently here, would exceed it.
func TestSecureBudgetStop(t *testing.T) {
	c := logregRun(filepath.Join(t.TempDir(), "budget"), 0)
	c.BatchSize, c.TargetEpsilon, c.SecureNoise = 1024, 0.95, true
	c.Accountant = "rdp" // composed independently below with the RDP accountant
	s, err := Train(context.Background(), c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.StoppedBy != "budget" || s.Epsilon > c.TargetEpsilon || !s.SecureNoise || s.Steps < 1 {
		t.Fatalf("stopped by %s after %d steps at ε = %v (secure %v)", s.StoppedBy, s.Steps, s.Epsilon, s.SecureNoise)
	}
	agg, err := aggregate.New("sum", aggregate.Config{Sigma: c.Sigma, ClipNorm: c.ClipNorm})
	if err != nil {
		t.Fatal(err)
	}
	mech := agg.(aggregate.Planned).Mechanism()
	if mech != (privacy.Gaussian{Sigma: c.Sigma}) {
		t.Fatalf("secure sum's mechanism is %#v, want privacy.Gaussian{σ}", mech)
	}
	for _, k := range []int{s.Steps, s.Steps + 1} {
		acct, _ := privacy.NewRDPAccountant(nil)
		if err := acct.Compose(privacy.PoissonSubsampled{Base: mech, Q: 1024.0 / 60000}, k); err != nil {
			t.Fatal(err)
		}
		r, _ := acct.Epsilon(c.Delta, privacy.ConversionBBG)
		if k == s.Steps && math.Abs(r.Epsilon-s.Epsilon) > 1e-12 {
			t.Errorf("%d steps: run reports ε = %v, independent composition %v", k, s.Epsilon, r.Epsilon)
		}
		if k == s.Steps+1 && r.Epsilon <= c.TargetEpsilon {
			t.Errorf("%d steps stay at ε = %v ≤ %v: the run stopped early", k, r.Epsilon, c.TargetEpsilon)
		}
	}
}
