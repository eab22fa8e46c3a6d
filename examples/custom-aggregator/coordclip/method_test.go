package coordclip

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/privtrain/privtrain/randstream"
	"github.com/privtrain/privtrain/runner"
)

// TestMethodTrains: the method registered by this module trains through
// runner.Train. Its release is the Gaussian mechanism with multiplier σ at
// its own sensitivity, so after the same steps at the same q its ε equals
// DP-SGD's (an independent run of the built-in method); its option is
// validated and recorded in config.json.
func TestMethodTrains(t *testing.T) {
	if testing.Short() {
		t.Skip("trains on MNIST")
	}
	dir := t.TempDir()
	cfg := func(method, out string) runner.TrainConfig {
		c := runner.TrainDefaults()
		c.Method, c.Model, c.Dataset, c.Preset = method, "logreg", "mnist", ""
		c.TargetEpsilon, c.DynamicF, c.TrimFraction, c.Tau, c.LaplaceB, c.Delta0, c.DynamicRate = 0, false, 0, 0, 0, 0, 0
		c.BatchSize, c.Sigma, c.ClipNorm, c.LR, c.Steps, c.EvalEvery = 256, 1.1, 1, 0.5, 4, -1
		k := randstream.FromSeed(11).Derive("privacy")
		c.NoiseKey, c.Out = &k, filepath.Join(dir, out)
		return c
	}
	bad := cfg(MethodName, "bad")
	bad.MethodOptions = map[string]float64{MethodOptionC: -1}
	if _, err := runner.Train(context.Background(), bad, runner.Options{}); err == nil || !strings.Contains(err.Error(), "--coord-clip must be in (0, 1e6]") {
		t.Fatalf("c = -1: err = %v", err)
	}
	own := cfg(MethodName, "own")
	own.MethodOptions = map[string]float64{MethodOptionC: 0.01}
	sOwn, err := runner.Train(context.Background(), own, runner.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sRef, err := runner.Train(context.Background(), cfg("dpsgd", "ref"), runner.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sOwn.Method != MethodName || sOwn.Steps != 4 || !(sOwn.Epsilon > 0) || sOwn.Epsilon != sRef.Epsilon {
		t.Errorf("%s: method %s, %d steps, ε = %v; dpsgd: ε = %v (want equal)", MethodName, sOwn.Method, sOwn.Steps, sOwn.Epsilon, sRef.Epsilon)
	}
	data, err := os.ReadFile(filepath.Join(own.Out, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var stored struct {
		Method  string             `json:"method"`
		Options map[string]float64 `json:"method_options"`
	}
	if err := json.Unmarshal(data, &stored); err != nil || stored.Method != MethodName || stored.Options[MethodOptionC] != 0.01 {
		t.Errorf("config.json: %+v, %v", stored, err)
	}
}
