package runner

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOptimizerResumeIsExact: a run with Adam, a cosine schedule (horizon
// resolved from the run length), warm-up and gradient accumulation,
// interrupted and resumed from its checkpoint, ends bit-identical to the
// uninterrupted run (the checkpoint carries the moments and the update
// count), and spends exactly the ε of plain SGD.
func TestOptimizerResumeIsExact(t *testing.T) {
	if testing.Short() {
		t.Skip("trains on MNIST")
	}
	dir := t.TempDir()
	run := func(name string, opt OptimizerSettings) TrainConfig {
		c := quickRun(filepath.Join(dir, name))
		c.NoiseKey, c.NoiseKeySource = testNoiseKey(c.Seed), noiseKeySupplied
		c.LR, c.OptimizerSettings = 0.01, opt
		return c
	}
	opt := OptimizerSettings{Optimizer: "adamw", WeightDecay: 0.01, LRSchedule: "cosine", WarmupSteps: 2, Accumulate: 3}
	full := run("full", opt)
	want, err := Train(context.Background(), full, Options{})
	if err != nil {
		t.Fatal(err)
	}
	stored, err := ReadRunConfig(full.Out)
	if err != nil {
		t.Fatal(err)
	}
	if stored.LRDecaySteps != full.Steps {
		t.Fatalf("stored cosine horizon %d, want the run length %d", stored.LRDecaySteps, full.Steps)
	}
	part := run("part", opt)
	part.Steps = 4                 // checkpoint at step 3 and at the end (4), the crash
	part.LRDecaySteps = full.Steps // as the full run resolved it
	if _, err := Train(context.Background(), part, Options{}); err != nil {
		t.Fatal(err)
	}
	var ck checkpoint
	if err := readJSON(filepath.Join(part.Out, stateFile), &ck); err != nil {
		t.Fatal(err)
	}
	var st struct {
		Optimizer string `json:"optimizer"`
		Updates   int    `json:"updates"`
		M, V      string
	}
	if err := json.Unmarshal(ck.Optimizer, &st); err != nil || st.Optimizer != "adamw" || st.Updates != 4 || st.M == "" || st.V == "" {
		t.Fatalf("checkpoint optimizer state %s (%v)", ck.Optimizer, err)
	}
	// Resumed as the CLI does: the stored configuration, longer.
	resumed, err := ReadRunConfig(part.Out)
	if err != nil {
		t.Fatal(err)
	}
	resumed.Steps = full.Steps
	resumed.NoiseKey = full.NoiseKey
	got, err := Train(context.Background(), resumed, Options{Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	if got.Epsilon != want.Epsilon || got.Steps != want.Steps {
		t.Errorf("resumed ε %v after %d steps, uninterrupted ε %v after %d", got.Epsilon, got.Steps, want.Epsilon, want.Steps)
	}
	sameRun(t, full.Out, part.Out)

	plain, err := Train(context.Background(), run("plain", OptimizerSettings{}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if plain.Epsilon != want.Epsilon || plain.Steps != want.Steps {
		t.Errorf("plain SGD: ε %v after %d steps; AdamW with accumulation: ε %v after %d", plain.Epsilon, plain.Steps, want.Epsilon, want.Steps)
	}
	if pw, pp := readParams(t, filepath.Join(full.Out, finalModel)), readParams(t, filepath.Join(filepath.Join(dir, "plain"), finalModel)); pw[0] == pp[0] && pw[len(pw)-1] == pp[len(pp)-1] {
		t.Error("the AdamW run trained the plain SGD model")
	}
	// The plain run's config.json has no optimizer key (old runs' bytes).
	data, err := os.ReadFile(filepath.Join(dir, "plain", configFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"optimizer", "accumulate", "lr_schedule", "momentum"} {
		if strings.Contains(string(data), `"`+k+`"`) {
			t.Errorf("plain run's config.json has key %q", k)
		}
	}
}

// TestOptimizerConfigFile: the settings are top-level keys in JSON and YAML
// config files; bad values and other methods are refused.
func TestOptimizerConfigFile(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"c.json": `{"method": "dpsgd", "optimizer": "nesterov", "momentum": 0.9, "lr_schedule": "step", "lr_step_size": 100, "lr_gamma": 0.5, "accumulate": 4}`,
		"c.yaml": "method: dpsgd\noptimizer: nesterov\nmomentum: 0.9\nlr_schedule: step\nlr_step_size: 100\nlr_gamma: 0.5\naccumulate: 4\n",
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		c := TrainDefaults()
		if err := LoadConfigFile(path, &c); err != nil {
			t.Fatal(err)
		}
		want := OptimizerSettings{Optimizer: "nesterov", Momentum: 0.9, LRSchedule: "step", LRStepSize: 100, LRGamma: 0.5, Accumulate: 4}
		if c.OptimizerSettings != want {
			t.Fatalf("%s: %+v, want %+v", name, c.OptimizerSettings, want)
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	path := filepath.Join(dir, "bad.json")
	os.WriteFile(path, []byte(`{"method": "dpsgd", "Optimizer": "adam"}`), 0o644)
	c := TrainDefaults()
	if err := LoadConfigFile(path, &c); err == nil || !strings.Contains(err.Error(), `did you mean "optimizer"`) {
		t.Fatalf("mis-cased key: %v", err)
	}
	for _, tc := range []struct {
		edit func(*TrainConfig)
		want string
	}{
		{func(c *TrainConfig) { c.Optimizer = "rmsprop" }, "unknown optimizer"},
		{func(c *TrainConfig) { c.Optimizer, c.Momentum = "adam", 0.9 }, "momentum is used by"},
		{func(c *TrainConfig) { c.Accumulate = -1 }, "accumulate must be"},
		{func(c *TrainConfig) { c.Method, c.Optimizer = "pdp-sgd", "adam"; c.PDP.FillDefaults() }, "not pdp-sgd"},
	} {
		c := TrainDefaults()
		c.Method = "dpsgd"
		tc.edit(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want an error containing %q", err, tc.want)
		}
	}
	c = TrainDefaults()
	c.Method, c.LRSchedule, c.Steps, c.Epochs, c.TargetEpsilon = "dpsgd", "cosine", 0, 0, 3
	if err := c.resolveDecaySteps(60000, 256); err == nil || !strings.Contains(err.Error(), "--lr-decay-steps") {
		t.Errorf("cosine with only a target ε: %v", err)
	}
	c.Epochs = 2
	if err := c.resolveDecaySteps(60000, 256); err != nil || c.LRDecaySteps != 469 {
		t.Errorf("cosine horizon of 2 epochs of 60000/256: %d (%v), want ⌈468.75⌉ = 469", c.LRDecaySteps, err)
	}
}
