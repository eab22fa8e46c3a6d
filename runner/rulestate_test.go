package runner

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// ptrRun is quickRun as TSGD+PTR with dynamic F, tuned so that tests both
// pass and fail.
func ptrRun(out string) TrainConfig {
	c := quickRun(out)
	c.Method, c.DynamicF, c.NoiseKey, c.NoiseKeySource = "tsgd-ptr", true, testNoiseKey(c.Seed), noiseKeySupplied
	c.BatchSize, c.ClipNorm, c.Tau, c.LaplaceB, c.LR, c.LRFail, c.LRPass = 128, 20, 10, 0.3, 0.15, 0.1, 0.2
	c.Steps, c.CheckpointEvery = 14, 5
	return c
}

// TestRuleStateResume resumes TSGD+PTR with dynamic F from a version-3
// checkpoint (the rule's trim level and test counts under "rule") and from
// the same checkpoint rewritten in the version-2 layout (those fields at
// the top level): both must end exactly as the uninterrupted run, with the
// same test counts and final F in the summary. A version-3 checkpoint
// without the rule's state is refused.
func TestRuleStateResume(t *testing.T) {
	dir := t.TempDir()
	full := ptrRun(filepath.Join(dir, "full"))
	want, err := Train(context.Background(), full, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want.PTRPassed == 0 || want.PTRPassed == want.PTRTests || want.FinalF == 0 {
		t.Fatalf("the run should both pass and fail tests: %d of %d passed, final F %d", want.PTRPassed, want.PTRTests, want.FinalF)
	}
	for _, layout := range []string{"v3", "v2", "v3-without-rule"} {
		t.Run(layout, func(t *testing.T) {
			part := ptrRun(filepath.Join(dir, layout))
			part.Steps = 8
			if _, err := Train(context.Background(), part, Options{}); err != nil {
				t.Fatal(err)
			}
			editJSON(t, filepath.Join(part.Out, stateFile), func(m map[string]json.RawMessage) {
				if string(m["version"]) != "3" || len(m["rule"]) == 0 {
					t.Fatalf("checkpoint version %s, rule state %s", m["version"], m["rule"])
				}
				switch layout {
				case "v2":
					var rule map[string]json.RawMessage
					if err := json.Unmarshal(m["rule"], &rule); err != nil {
						t.Fatal(err)
					}
					for k, v := range rule {
						m[k] = v
					}
					delete(m, "rule")
					m["version"] = raw(2)
				case "v3-without-rule":
					delete(m, "rule")
				}
			})
			part.Steps = 14
			got, err := Train(context.Background(), part, Options{Resume: true})
			if layout == "v3-without-rule" {
				if err == nil || !strings.Contains(err.Error(), "holds no state of rule ptr-tsum") {
					t.Fatalf("resume without the rule's state: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.PTRTests != want.PTRTests || got.PTRPassed != want.PTRPassed || got.PTRPassRate != want.PTRPassRate || got.FinalF != want.FinalF || got.Epsilon != want.Epsilon {
				t.Errorf("resumed: %d of %d passed (rate %v), final F %d, ε %v; uninterrupted: %d of %d (rate %v), final F %d, ε %v",
					got.PTRPassed, got.PTRTests, got.PTRPassRate, got.FinalF, got.Epsilon, want.PTRPassed, want.PTRTests, want.PTRPassRate, want.FinalF, want.Epsilon)
			}
			sameRun(t, full.Out, part.Out)
		})
	}
}
