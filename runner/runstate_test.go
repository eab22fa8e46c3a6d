package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/privtrain/privtrain/internal/fileutil"
)

// quickRun is a 6-step DP-SGD logistic regression on MNIST (about a second).
func quickRun(out string) TrainConfig {
	c := TrainDefaults()
	c.Method, c.Model, c.Dataset = "dpsgd", "logreg", "mnist"
	c.TargetEpsilon, c.DynamicF = 0, false
	c.BatchSize, c.Sigma, c.ClipNorm, c.LR = 256, 1.1, 1, 1
	c.Steps, c.CheckpointEvery, c.Seed, c.Out = 6, 3, 7, out
	return c
}

// editJSON rewrites the top-level members of a JSON file through f; the
// members f does not touch keep their bytes.
func editJSON(t *testing.T, path string, f func(m map[string]json.RawMessage)) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	f(m)
	data, _ = json.Marshal(m)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// raw encodes v as a JSON member value.
func raw(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// editHashes edits the sha256 map of a decoded state.json.
func editHashes(m map[string]json.RawMessage, f func(h map[string]string)) {
	var h map[string]string
	json.Unmarshal(m["sha256"], &h)
	f(h)
	m["sha256"] = raw(h)
}

// rebind recomputes state.json's SHA-256 map, as someone editing the
// checkpoint consistently would: the semantic checks must still refuse.
func rebind(t *testing.T, dir string, cfg TrainConfig) {
	t.Helper()
	var ck checkpoint
	if err := readJSON(filepath.Join(dir, stateFile), &ck); err != nil {
		t.Fatal(err)
	}
	cfg.Out = dir
	if contains(pdpMethods(), cfg.Method) {
		cfg.PDP.FillDefaults() // the configuration as Train binds it
	}
	if err := bind(dir, &cfg, &ck); err != nil {
		t.Fatal(err)
	}
	if err := writeJSONAtomic(filepath.Join(dir, stateFile), ck); err != nil {
		t.Fatal(err)
	}
}

// TestCheckpointTamperingRefused damages a finished run's checkpoint in
// every way the issue lists and checks that resuming refuses with an error
// naming the piece, and never starts fresh.
func TestCheckpointTamperingRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("trains on MNIST")
	}
	dir := t.TempDir()
	base := quickRun(filepath.Join(dir, "base"))
	if _, err := Train(context.Background(), base, Options{}); err != nil {
		t.Fatal(err)
	}
	other := quickRun(filepath.Join(dir, "other"))
	other.Seed = 8
	if _, err := Train(context.Background(), other, Options{}); err != nil {
		t.Fatal(err)
	}
	state := func(d string) string { return filepath.Join(d, stateFile) }
	tests := []struct {
		name   string
		damage func(d string)
		want   string
	}{
		{"accountant deleted", func(d string) {
			editJSON(t, state(d), func(m map[string]json.RawMessage) { delete(m, "accountant") })
		}, "the accountant history is missing from the checkpoint"},
		{"accountant deleted and rebound", func(d string) {
			editJSON(t, state(d), func(m map[string]json.RawMessage) {
				delete(m, "accountant")
				editHashes(m, func(h map[string]string) { delete(h, "accountant") })
			})
		}, "the accountant history is missing from the checkpoint"},
		{"accountant edited", func(d string) {
			editJSON(t, state(d), func(m map[string]json.RawMessage) {
				m["accountant"] = json.RawMessage(strings.Replace(string(m["accountant"]), `"count": 6`, `"count": 5`, 1))
			})
		}, "the accountant history does not match the checkpoint"},
		{"next_step moved", func(d string) {
			editJSON(t, state(d), func(m map[string]json.RawMessage) { m["next_step"] = raw(3) })
		}, `the model file of step 3 is model-3.bin, state.json names "model-6.bin"`},
		{"next_step negative", func(d string) {
			editJSON(t, state(d), func(m map[string]json.RawMessage) { m["next_step"] = raw(-2) })
		}, "next step -2 is negative"},
		{"next_step and model moved consistently", func(d string) {
			os.Rename(filepath.Join(d, "model-6.bin"), filepath.Join(d, "model-3.bin"))
			editJSON(t, state(d), func(m map[string]json.RawMessage) { m["next_step"], m["model_file"] = raw(3), raw("model-3.bin") })
			rebind(t, d, base)
		}, "the accountant history holds 6 steps, the checkpoint is at step 3"},
		{"model swapped", func(d string) {
			data, _ := os.ReadFile(filepath.Join(other.Out, "model-6.bin"))
			os.WriteFile(filepath.Join(d, "model-6.bin"), data, 0o644)
		}, "the model file model-6.bin does not match the checkpoint"},
		{"model deleted", func(d string) { os.Remove(filepath.Join(d, "model-6.bin")) },
			"the model file model-6.bin is missing from the checkpoint"},
		{"config edited", func(d string) {
			editJSON(t, filepath.Join(d, configFile), func(m map[string]json.RawMessage) { m["sigma"] = raw(5.0) })
		}, "the configuration (config.json) does not match the checkpoint"},
		{"hashes removed", func(d string) {
			editJSON(t, state(d), func(m map[string]json.RawMessage) { delete(m, "sha256") })
		}, "the checkpoint does not bind the configuration"},
		{"foreign piece bound", func(d string) {
			editJSON(t, state(d), func(m map[string]json.RawMessage) {
				editHashes(m, func(h map[string]string) { h["pdp"] = "00" })
			})
		}, "the personalized-DP ledger and rounds is missing from the checkpoint"},
		{"unknown piece bound", func(d string) {
			editJSON(t, state(d), func(m map[string]json.RawMessage) {
				editHashes(m, func(h map[string]string) { h["key"] = "00" })
			})
		}, "binds pieces this run does not have: key"},
		{"state deleted", func(d string) { os.Remove(state(d)) },
			"state.json is missing but the run has trained"},
		{"old checkpoint version", func(d string) {
			editJSON(t, state(d), func(m map[string]json.RawMessage) { m["version"] = raw(1) })
		}, "checkpoint version 1, this trainer reads 2 and 3"},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := filepath.Join(dir, fmt.Sprintf("case-%d", i))
			copyDir(t, base.Out, d)
			tc.damage(d)
			before, _ := os.ReadFile(state(d))
			c := base
			c.Out = d
			_, err := Train(context.Background(), c, Options{Resume: true})
			var setup *SetupError
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.As(err, &setup) {
				t.Fatalf("got %v, want a setup error containing %q", err, tc.want)
			}
			after, _ := os.ReadFile(state(d))
			if string(before) != string(after) {
				t.Error("a refused resume changed state.json")
			}
		})
	}
}

// TestResumeContinuesStoredRun: a resume continues exactly the stored run;
// a conflicting setting is an error naming it; shortening is refused; an
// extension is checked, recorded in changes.jsonl and equals an
// uninterrupted run of the new length.
func TestResumeContinuesStoredRun(t *testing.T) {
	if testing.Short() {
		t.Skip("trains on MNIST")
	}
	dir := t.TempDir()
	c := quickRun(filepath.Join(dir, "run"))
	first, err := Train(context.Background(), c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfgBefore, _ := os.ReadFile(filepath.Join(c.Out, configFile))
	again, err := Train(context.Background(), c, Options{Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	if again.Steps != first.Steps || again.Epsilon != first.Epsilon {
		t.Errorf("resuming a finished run changed it: %d steps ε %v, was %d steps ε %v", again.Steps, again.Epsilon, first.Steps, first.Epsilon)
	}
	if cfgAfter, _ := os.ReadFile(filepath.Join(c.Out, configFile)); string(cfgAfter) != string(cfgBefore) {
		t.Error("resume without changes rewrote config.json")
	}
	if _, err := os.Stat(filepath.Join(c.Out, changesFile)); !os.IsNotExist(err) {
		t.Error("resume without changes wrote changes.jsonl")
	}
	conflicts := []struct {
		name string
		edit func(*TrainConfig)
		want string
	}{
		{"sigma", func(c *TrainConfig) { c.Sigma = 5 }, "sigma (stored 1.1, given 5)"},
		{"method", func(c *TrainConfig) { c.Method, c.Tau, c.LaplaceB, c.Delta0 = "tsgd-ptr", 0.5, 1, 1e-8 }, "method (stored \"dpsgd\", given \"tsgd-ptr\")"},
		{"seed", func(c *TrainConfig) { c.Seed = 9 }, "seed (stored 7, given 9)"},
		{"shorter", func(c *TrainConfig) { c.Steps = 4 }, "the configured length (4 steps) is shorter than the 6 steps already done"},
	}
	for _, tc := range conflicts {
		x := c
		tc.edit(&x)
		if _, err := Train(context.Background(), x, Options{Resume: true}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
	long := c
	long.Steps = 9
	got, err := Train(context.Background(), long, Options{Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	ref := quickRun(filepath.Join(dir, "ref"))
	ref.Steps = 9
	want, err := Train(context.Background(), ref, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Steps != 9 || got.Epsilon != want.Epsilon {
		t.Errorf("extended run: %d steps ε %v, uninterrupted 9-step run ε %v", got.Steps, got.Epsilon, want.Epsilon)
	}
	lines := readLines(t, filepath.Join(c.Out, changesFile))
	if len(lines) != 1 || !strings.Contains(lines[0], `"field":"steps","from":6,"to":9`) || !strings.Contains(lines[0], `"at_step":6`) {
		t.Errorf("changes.jsonl = %q", lines)
	}
}

// TestRunDirectoryLock: a second writer is refused while the first holds
// the directory, and the directory is usable once it is released.
func TestRunDirectoryLock(t *testing.T) {
	if testing.Short() {
		t.Skip("trains on MNIST")
	}
	c := quickRun(filepath.Join(t.TempDir(), "run"))
	l, err := fileutil.Lock(c.Out)
	if err != nil {
		t.Fatal(err)
	}
	for _, resume := range []bool{false, true} {
		_, err := Train(context.Background(), c, Options{Resume: resume})
		want := fmt.Sprintf("run directory %s is in use by process %d", c.Out, os.Getpid())
		if err == nil || err.Error() != want {
			t.Errorf("resume=%v: got %v, want %q", resume, err, want)
		}
	}
	l.Release()
	if _, err := Train(context.Background(), c, Options{}); err != nil {
		t.Fatalf("after release: %v", err)
	}
}

// TestFailedBeforeFirstStepDoesNotBlock: a run stopped before its first
// step (its checkpoint is at step 0) neither blocks a new run nor a resume,
// and interrupted-write temp files are removed on the next start.
func TestFailedBeforeFirstStepDoesNotBlock(t *testing.T) {
	if testing.Short() {
		t.Skip("trains on MNIST")
	}
	dir := t.TempDir()
	c := quickRun(filepath.Join(dir, "run"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Train(ctx, c, Options{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled before step 0: %v", err)
	}
	ck, err := readCheckpoint(c.Out)
	if err != nil || ck == nil || ck.NextStep != 0 {
		t.Fatalf("checkpoint at step 0 expected: %+v, %v", ck, err)
	}
	stale := filepath.Join(c.Out, ".state.json.tmp-12345")
	os.WriteFile(stale, []byte("torn"), 0o644)
	if _, err := Train(context.Background(), c, Options{}); err != nil {
		t.Fatalf("new run over a run with no step done: %v", err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Error("temp file of an interrupted write survived the next start")
	}
	// A run killed before its first checkpoint (configuration and logged
	// metrics, no checkpoint, no model) resumes from step 0.
	d3 := filepath.Join(dir, "killed")
	os.MkdirAll(d3, 0o755)
	c3 := quickRun(d3)
	c3.ResolveNoise() // config.json as Train writes it (a secure run)
	writeJSONAtomic(filepath.Join(d3, configFile), c3)
	os.WriteFile(filepath.Join(d3, metricsFile), []byte(`{"step":0,"loss":2.3}`+"\n"+`{"step":1,"loss":2.2}`+"\n"), 0o644)
	if s, err := Train(context.Background(), c3, Options{Resume: true}); err != nil || s.Steps != 6 {
		t.Fatalf("resume of a run killed before its first checkpoint: %v", err)
	}
	if lines := readLines(t, filepath.Join(d3, metricsFile)); len(lines) != 6 {
		t.Errorf("metrics has %d lines after the resume, want 6", len(lines))
	}
	// Resuming a directory with a configuration but no checkpoint and no
	// trained step starts at step 0.
	d2 := filepath.Join(dir, "cfgonly")
	os.MkdirAll(d2, 0o755)
	c2 := quickRun(d2)
	c2.ResolveNoise()
	writeJSONAtomic(filepath.Join(d2, configFile), c2)
	if s, err := Train(context.Background(), c2, Options{Resume: true}); err != nil || s.Steps != 6 {
		t.Fatalf("resume of a run that never started: %v", err)
	}
}

// TestSetupRefusedBeforeWriting: bad configurations are refused before
// anything is loaded or written (the run directory is not created).
func TestSetupRefusedBeforeWriting(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		edit func(*TrainConfig)
		want string
	}{
		{"dataset", func(c *TrainConfig) { c.Dataset = "imagenet" }, "unknown dataset \"imagenet\""},
		{"model", func(c *TrainConfig) { c.Model = "resnet" }, "unknown model \"resnet\""},
		{"rule", func(c *TrainConfig) { c.Method, c.Rule, c.Sigma = "nonprivate-robust", "magic", 0 }, "unknown rule \"magic\""},
		{"rule with dpsgd", func(c *TrainConfig) { c.Rule = "krum" }, "applies only to nonprivate-robust"},
		{"corruption", func(c *TrainConfig) { c.Corruption, c.CorruptionRatio = "bitrot", 0.1 }, "unknown corruption \"bitrot\""},
		{"none with ratio", func(c *TrainConfig) { c.Corruption, c.CorruptionRatio = "none", 0.1 }, "needs a corruption kind"},
		{"kind without ratio", func(c *TrainConfig) { c.Corruption = "label-flip" }, "needs a ratio > 0"},
		{"bound", func(c *TrainConfig) { c.Bound = "magic" }, "unknown subsampling bound"},
		{"NaN dynamic rate", func(c *TrainConfig) { c.DynamicRate = math.NaN() }, "dynamic F rate must be finite"},
		{"NaN cc radius", func(c *TrainConfig) { c.CenteredClipRadius = math.NaN() }, "centered-clip radius ρ must be finite"},
		{"tiny sigma", func(c *TrainConfig) { c.Sigma = 1e-9 }, "is below 0.001"},
		{"tau above R", func(c *TrainConfig) {
			c.Method, c.Tau, c.LaplaceB, c.Delta0 = "tsgd-ptr", 1.5, 1, 1e-8
		}, "PTR τ must satisfy 0 < τ < R = 1"},
		{"tau equal to R", func(c *TrainConfig) {
			c.Method, c.Tau, c.LaplaceB, c.Delta0 = "tsgd-ptr", 1, 1, 1e-8
		}, "PTR τ must satisfy 0 < τ < R = 1"},
		{"whitebox outside its conditions", func(c *TrainConfig) {
			c.Method, c.Tau, c.LaplaceB, c.Delta0, c.Bound = "tsgd-ptr", 0.5, 1, 1e-8, "whitebox"
		}, "proven only for σ₂ = σ·τ/R ≥ 4"},
		{"target below one step", func(c *TrainConfig) { c.Steps, c.TargetEpsilon, c.FloatNoise, c.Accountant = 0, 0.01, true, "rdp" }, "is smaller than the ε of a single step (0.630"},
	}
	for i, tc := range tests {
		c := quickRun(filepath.Join(dir, fmt.Sprintf("r%d", i)))
		tc.edit(&c)
		_, err := Train(context.Background(), c, Options{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
		if _, serr := os.Stat(c.Out); !os.IsNotExist(serr) {
			t.Errorf("%s: the run directory was created", tc.name)
		}
	}
}

// TestPDPCheckpointInsideRound interrupts PDP-SGD inside its second round:
// the checkpoint is at the interrupted step (not the round's start), and
// damaged PDP state is refused, also when the hashes are recomputed.
func TestPDPCheckpointInsideRound(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a CNN on MNIST")
	}
	dir := t.TempDir()
	c := pdpRun("pdp-sgd", filepath.Join(dir, "run"))
	c.CheckpointEvery = 0
	// 8 steps in 2 rounds of 4; stop before step 6 (inside round 2).
	_, err := Train(&countdown{Context: context.Background(), n: 6}, c, Options{})
	if err == nil || !strings.Contains(err.Error(), "interrupted in round 2 at step 6") {
		t.Fatalf("interruption: %v", err)
	}
	ck, err := readCheckpoint(c.Out)
	if err != nil {
		t.Fatal(err)
	}
	var st pdpState
	if err := json.Unmarshal(ck.PDP, &st); err != nil {
		t.Fatal(err)
	}
	if ck.NextStep != 6 || st.NextRound != 1 || st.Round == nil || st.Round.Start != 4 || st.Round.Steps != 4 {
		t.Fatalf("checkpoint at step %d, next round %d, round in progress %+v; want step 6 inside round 2 (steps 4–7)", ck.NextStep, st.NextRound+1, st.Round)
	}
	editPDP := func(d string, f func(st map[string]json.RawMessage)) {
		editJSON(t, filepath.Join(d, stateFile), func(m map[string]json.RawMessage) {
			var p map[string]json.RawMessage
			json.Unmarshal(m["pdp"], &p)
			f(p)
			m["pdp"] = raw(p)
		})
	}
	zeroSpend := func(p map[string]json.RawMessage) {
		var l map[string]json.RawMessage
		json.Unmarshal(p["ledger"], &l)
		var classes []map[string]json.RawMessage
		json.Unmarshal(l["classes"], &classes)
		for _, cl := range classes {
			cl["spent"] = raw(0)
		}
		l["classes"] = raw(classes)
		p["ledger"] = raw(l)
	}
	tests := []struct {
		name   string
		damage func(d string)
		want   string
	}{
		{"ledger spend zeroed", func(d string) { editPDP(d, zeroSpend) },
			"the personalized-DP ledger and rounds does not match the checkpoint"},
		{"ledger spend zeroed and rebound", func(d string) { editPDP(d, zeroSpend); rebind(t, d, c) },
			"recorded spend 0"},
		{"next round moved back and rebound", func(d string) {
			editPDP(d, func(p map[string]json.RawMessage) { p["next_round"] = raw(0) })
			rebind(t, d, c)
		}, "the ledger has charged 1 rounds and the reports cover 1, but the state's next round is 1"},
		{"round progress dropped and rebound", func(d string) {
			editPDP(d, func(p map[string]json.RawMessage) { delete(p, "round") })
			rebind(t, d, c)
		}, "the finished rounds hold 4 steps, but the checkpoint is at step 6 with round in progress false"},
		{"pdp state deleted", func(d string) {
			editJSON(t, filepath.Join(d, stateFile), func(m map[string]json.RawMessage) { delete(m, "pdp") })
		}, "the personalized-DP ledger and rounds is missing from the checkpoint"},
	}
	for i, tc := range tests {
		d := filepath.Join(dir, fmt.Sprintf("case-%d", i))
		copyDir(t, c.Out, d)
		tc.damage(d)
		x := c
		x.Out = d
		if _, err := Train(context.Background(), x, Options{Resume: true}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
	// The undamaged run resumes inside round 2 and finishes.
	s, err := Train(context.Background(), c, Options{Resume: true})
	if err != nil || s.Steps != 8 {
		t.Fatalf("resume: %v", err)
	}
}
