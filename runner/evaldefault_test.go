package runner

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// evalSteps returns the steps of metrics.jsonl's test-accuracy records.
func evalSteps(t *testing.T, dir string) []int {
	t.Helper()
	var steps []int
	for _, l := range readLines(t, filepath.Join(dir, metricsFile)) {
		var rec struct {
			Step int
			Acc  *float64 `json:"test_accuracy"`
		}
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Acc != nil {
			steps = append(steps, rec.Step)
		}
	}
	return steps
}

// TestEvalEveryEpochByDefault: a new run without eval_every evaluates every
// epoch (⌈60000/20000⌉ = 3 steps) and stores that interval; a run stored
// without it (written before this default) keeps evaluating only at the
// end when resumed; -1 asks for the end only.
func TestEvalEveryEpochByDefault(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name      string
		batch     int
		eval      int
		wantEval  int
		wantSteps []int
	}{
		{"epoch3", 20000, 0, 3, []int{2, 5}},
		{"epoch4", 15001, 0, 4, []int{3}}, // ⌈60000/15001⌉ = 4
		{"explicit2", 20000, 2, 2, []int{1, 3, 5}},
		{"end-only", 20000, -1, -1, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := logregRun(filepath.Join(dir, c.name), 6)
			cfg.BatchSize, cfg.EvalEvery = c.batch, c.eval
			if _, err := Train(context.Background(), cfg, Options{}); err != nil {
				t.Fatal(err)
			}
			stored, err := ReadRunConfig(cfg.Out)
			if err != nil {
				t.Fatal(err)
			}
			if stored.EvalEvery != c.wantEval {
				t.Errorf("stored eval_every %d, want %d", stored.EvalEvery, c.wantEval)
			}
			if got := evalSteps(t, cfg.Out); !equalInts(got, c.wantSteps) {
				t.Errorf("evaluated after steps %v, want %v", got, c.wantSteps)
			}
		})
	}

	// An old run: config.json without eval_every, resumed with it unset.
	old := logregRun(filepath.Join(dir, "old"), 3)
	old.BatchSize, old.EvalEvery = 20000, -1
	if _, err := Train(context.Background(), old, Options{}); err != nil {
		t.Fatal(err)
	}
	editJSON(t, filepath.Join(old.Out, configFile), func(m map[string]json.RawMessage) { delete(m, "eval_every") })
	old.EvalEvery, old.Steps = 0, 6
	if _, err := Train(context.Background(), old, Options{Resume: true}); err != nil {
		t.Fatal(err)
	}
	if got := evalSteps(t, old.Out); len(got) != 0 {
		t.Errorf("resumed old run evaluated after steps %v, want only at the end", got)
	}
	data, err := os.ReadFile(filepath.Join(old.Out, configFile))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	if v, ok := m["eval_every"]; ok {
		t.Errorf("resumed old run stores eval_every %v, want it unset", v)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
