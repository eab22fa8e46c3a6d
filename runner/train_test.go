package runner

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/privtrain/privtrain/model"
	"github.com/privtrain/privtrain/privacy"
)

// shortRun is a small DP-SGD run on real MNIST with the TF-Privacy CNN.
func shortRun(t *testing.T, out string) TrainConfig {
	c := TrainDefaults()
	c.FloatNoise = true // the float release resumes bit for bit too (quickRun: the secure one)
	c.Method, c.Model, c.Dataset = "dpsgd", "tfp-cnn", "mnist"
	c.Corruption, c.CorruptionRatio, c.TargetEpsilon, c.DynamicF = "", 0, 0, false
	c.BatchSize, c.Sigma, c.ClipNorm, c.LR = 128, 1.1, 1, 0.15
	c.Epochs, c.Steps = 0, 12
	c.CheckpointEvery = 5
	c.Out = out
	c.Seed = 42
	c.NoiseKey, c.NoiseKeySource = testNoiseKey(c.Seed), noiseKeySupplied // runs in different directories are compared
	return c
}

func readParams(t *testing.T, path string) []float32 {
	t.Helper()
	m, err := model.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return m.Params()
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}

// sameRun fails unless the runs in directories want (uninterrupted) and got
// (resumed) end with the same model parameters and the same metrics.jsonl.
func sameRun(t *testing.T, want, got string) {
	t.Helper()
	pw, pg := readParams(t, filepath.Join(want, finalModel)), readParams(t, filepath.Join(got, finalModel))
	for i := range pw {
		if pw[i] != pg[i] {
			t.Fatalf("parameter %d: resumed %v, uninterrupted %v", i, pg[i], pw[i])
		}
	}
	lw, lg := readLines(t, filepath.Join(want, metricsFile)), readLines(t, filepath.Join(got, metricsFile))
	if strings.Join(lw, "\n") != strings.Join(lg, "\n") {
		t.Errorf("metrics differ:\nuninterrupted %d lines\nresumed %d lines", len(lw), len(lg))
	}
}

// TestResumeIsExact interrupts a run after 7 steps (checkpoint at step 5)
// and resumes it: the final model, the per-step log and the privacy spent
// must equal the uninterrupted run's exactly.
func TestResumeIsExact(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a CNN on MNIST")
	}
	dir := t.TempDir()
	full := shortRun(t, filepath.Join(dir, "full"))
	want, err := Train(context.Background(), full, Options{})
	if err != nil {
		t.Fatal(err)
	}

	part := shortRun(t, filepath.Join(dir, "part"))
	part.Steps = 7 // stops after step 6, checkpointing at 5 and at the end (7)
	if _, err := Train(context.Background(), part, Options{}); err != nil {
		t.Fatal(err)
	}
	// Simulate a crash after the checkpoint at step 5: roll state back by
	// re-running from an older checkpoint is covered by the metrics
	// truncation; here we resume from the step-7 checkpoint.
	if _, err := Train(context.Background(), part, Options{}); err == nil || !strings.Contains(err.Error(), "--resume") {
		t.Fatalf("starting over an existing run must be refused, got %v", err)
	}
	part.Steps = 12
	got, err := Train(context.Background(), part, Options{Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	if got.Epsilon != want.Epsilon || got.Steps != want.Steps || got.TestAccuracy != want.TestAccuracy {
		t.Errorf("resumed summary (ε %v, steps %d, acc %v) differs from uninterrupted (ε %v, steps %d, acc %v)",
			got.Epsilon, got.Steps, got.TestAccuracy, want.Epsilon, want.Steps, want.TestAccuracy)
	}
	sameRun(t, full.Out, part.Out)
	// The accountant restored from the checkpoint holds all 12 steps once.
	var ck checkpoint
	if err := readJSON(filepath.Join(part.Out, stateFile), &ck); err != nil {
		t.Fatal(err)
	}
	acct, err := privacy.LoadAccountant(ck.Accountant, privacy.AccountantConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if acct.Steps() != 12 || acct.Kind() != privacy.KindPLD || got.Accountant != privacy.KindPLD {
		t.Errorf("accountant %s holds %d steps after resume, want pld with 12 (summary says %q)", acct.Kind(), acct.Steps(), got.Accountant)
	}
	g, _ := acct.EpsilonFor(full.Delta)
	if g.Epsilon != got.Epsilon {
		t.Errorf("re-composed checkpoint history gives ε %v, summary %v", g.Epsilon, got.Epsilon)
	}
}

// TestResumeTruncatesRedoneSteps resumes from a checkpoint older than the
// last logged step (a crash between checkpoints): the steps after the
// checkpoint are redone identically and logged once.
func TestResumeTruncatesRedoneSteps(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a CNN on MNIST")
	}
	dir := t.TempDir()
	c := shortRun(t, filepath.Join(dir, "run"))
	c.Steps = 7
	c.CheckpointEvery = 5
	if _, err := Train(context.Background(), c, Options{}); err != nil {
		t.Fatal(err)
	}
	// Roll the checkpoint back to step 5 as if the process died at step 7
	// before checkpointing: rebuild state.json from a fresh 5-step run.
	ref := shortRun(t, filepath.Join(dir, "ref"))
	ref.Steps = 5
	if _, err := Train(context.Background(), ref, Options{}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(ref.Out, "model-5.bin"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(c.Out, "model-5.bin"), data, 0o644)
	// The step-5 checkpoint of the 7-step run is ref's, bound to c's
	// configuration (which differs in its length).
	ck, err := readCheckpoint(ref.Out)
	if err != nil {
		t.Fatal(err)
	}
	c.Steps = 7
	if err := bind(c.Out, &c, ck); err != nil {
		t.Fatal(err)
	}
	if err := writeJSONAtomic(filepath.Join(c.Out, stateFile), ck); err != nil {
		t.Fatal(err)
	}
	if _, err := Train(context.Background(), c, Options{Resume: true}); err != nil {
		t.Fatal(err)
	}
	lines := readLines(t, filepath.Join(c.Out, metricsFile))
	if len(lines) != 7 {
		t.Fatalf("metrics has %d lines after redoing steps 5–6, want 7", len(lines))
	}
	for i, l := range lines {
		var rec struct{ Step int }
		json.Unmarshal([]byte(l), &rec)
		if rec.Step != i {
			t.Errorf("line %d is step %d", i, rec.Step)
		}
	}
}

// TestBudgetStop trains until the next step would exceed the target ε.
func TestBudgetStop(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a CNN on MNIST")
	}
	c := shortRun(t, filepath.Join(t.TempDir(), "budget"))
	// q = 1024/60000, σ = 1.1: one step costs ε ≈ 0.89 and ten ≈ 0.99 at
	// δ = 1e-5, so a handful of steps fit in 0.95.
	c.Steps, c.Epochs = 0, 0
	c.BatchSize = 1024
	c.TargetEpsilon = 0.95
	c.FloatNoise = true // the check below recomputes the float mechanism's (MTZ19) budget
	c.Model = "logreg"  // the PLD accountant fits ~100 steps: keep them cheap
	s, err := Train(context.Background(), c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.StoppedBy != "budget" || s.Epsilon > c.TargetEpsilon || s.Accountant != privacy.KindPLD {
		t.Fatalf("stopped by %s at ε = %v (%s), want budget stop within %v by pld", s.StoppedBy, s.Epsilon, s.Accountant, c.TargetEpsilon)
	}
	// One more step of the same mechanism would exceed the target, for the
	// PLD accountant of this run and for the RDP accountant of a second run.
	q := float64(c.BatchSize) / 60000
	step := privacy.PoissonSubsampled{Base: privacy.Gaussian{Sigma: c.Sigma}, Q: q}
	c2 := c
	c2.Accountant, c2.Out = privacy.KindRDP, filepath.Join(t.TempDir(), "budget-rdp")
	s2, err := Train(context.Background(), c2, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, run := range []*Summary{s, s2} {
		acct, _ := privacy.NewAccountant(run.Accountant, privacy.AccountantConfig{})
		if err := acct.Compose(step, run.Steps+1); err != nil {
			t.Fatal(err)
		}
		r, _ := acct.EpsilonFor(c.Delta)
		if r.Epsilon <= c.TargetEpsilon {
			t.Errorf("%s: %d steps stay at ε = %v ≤ %v: the run stopped early", run.Accountant, run.Steps+1, r.Epsilon, c.TargetEpsilon)
		}
	}
	if s2.Steps < 2 || s.Steps <= s2.Steps || s2.Accountant != privacy.KindRDP {
		t.Errorf("pld fits %d steps, rdp (%s) %d, in ε = %v", s.Steps, s2.Accountant, s2.Steps, c.TargetEpsilon)
	}
	t.Logf("steps within ε = %v: pld %d (ε %.4f), rdp %d (ε %.4f); accounting %.2f s of %.2f s", c.TargetEpsilon, s.Steps, s.Epsilon, s2.Steps, s2.Epsilon, s.AccountingSeconds, s.WallSeconds)
}

// TestPTRRunWithCorruption runs TSGD+PTR with label corruption: the run
// records the corrupted examples, the PTR outcomes and a proven bound.
func TestPTRRunWithCorruption(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a CNN on MNIST")
	}
	c := DefaultConfig()
	c.Method = "tsgd-ptr"
	if err := ApplyPreset(&c, "ptr-mnist"); err != nil {
		t.Fatal(err)
	}
	c.Steps, c.Epochs = 6, 0
	c.Corruption, c.CorruptionRatio = "label-flip", 0.1
	c.DynamicF = true
	c.Out = filepath.Join(t.TempDir(), "ptr")
	s, err := Train(context.Background(), c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.PTRTests != 6 || s.CorruptedExamples != 6000 {
		t.Errorf("PTR tests %d (want 6), corrupted %d (want 6000)", s.PTRTests, s.CorruptedExamples)
	}
	// TSGD+PTR is accounted by its PLD (docs/ptr-pld.md); an RDP summary
	// would list its bounds instead.
	if s.Unproven || s.Accountant != "pld" || !(s.PLDInterval > 0) || math.IsNaN(s.Epsilon) || s.Epsilon <= 0 || s.EpsilonOptimistic > s.Epsilon {
		t.Errorf("privacy summary: ε %v (optimistic %v, interval %v), accountant %q, unproven %v", s.Epsilon, s.EpsilonOptimistic, s.PLDInterval, s.Accountant, s.Unproven)
	}
	var rec struct{ Indices []int }
	if err := readJSON(filepath.Join(c.Out, corruptedFile), &struct {
		Kind    string
		Ratio   float64
		N       int
		Seed    uint64
		Indices *[]int
	}{Indices: &rec.Indices}); err != nil {
		t.Fatal(err)
	}
	if len(rec.Indices) != 6000 {
		t.Errorf("corrupted.json lists %d examples, want 6000", len(rec.Indices))
	}
	for _, l := range readLines(t, filepath.Join(c.Out, metricsFile)) {
		if !strings.Contains(l, `"branch":"`) {
			t.Errorf("PTR step without a branch: %s", l)
		}
	}
}

// TestSummaryOptimisticEstimate: summary.json carries the PLD's optimistic
// estimate only while steps × interval ≤ privacy.OptimisticBiasLimit, and
// otherwise says why it left it out (the console prints the same).
func TestSummaryOptimisticEstimate(t *testing.T) {
	if testing.Short() {
		t.Skip("trains on MNIST")
	}
	for _, tc := range []struct {
		interval float64
		omitted  string
	}{
		{1e-4, ""}, // 12 × 1e-4 = 0.0012
		{0.01, "12 steps × interval 0.01 can bias it low by 0.12"},
	} {
		c := shortRun(t, filepath.Join(t.TempDir(), "opt"))
		c.FloatNoise, c.Model, c.PLDInterval = false, "logreg", tc.interval
		s, err := Train(context.Background(), c, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var pub map[string]any
		if err := readJSON(filepath.Join(c.Out, summaryFile), &pub); err != nil {
			t.Fatal(err)
		}
		opt, has := pub["epsilon_optimistic"].(float64)
		switch {
		case s.Accountant != privacy.KindPLD || s.Steps != 12:
			t.Fatalf("interval %v: accountant %s, %d steps; want pld, 12", tc.interval, s.Accountant, s.Steps)
		case tc.omitted == "" && !(has && opt > 0 && opt <= s.Epsilon && s.Epsilon-opt < 0.05):
			t.Errorf("interval %v: published optimistic %v (present %v), certified %v", tc.interval, pub["epsilon_optimistic"], has, s.Epsilon)
		case tc.omitted != "" && (has || s.EpsilonOptimistic != 0):
			t.Errorf("interval %v: optimistic %v published beside ε %v; want it omitted", tc.interval, pub["epsilon_optimistic"], s.Epsilon)
		case pub["epsilon_optimistic_omitted"] != nil && pub["epsilon_optimistic_omitted"] != tc.omitted || tc.omitted != s.EpsilonOptimisticOmitted:
			t.Errorf("interval %v: omission reason %q (public %v), want %q", tc.interval, s.EpsilonOptimisticOmitted, pub["epsilon_optimistic_omitted"], tc.omitted)
		}
	}
}
