package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/privtrain/privtrain/aggregate"
	"github.com/privtrain/privtrain/optim"
	"github.com/privtrain/privtrain/runner"
)

// scaledLR is the test method's step policy: the learning rate times the
// method's option lr-scale.
type scaledLR struct{ scale float64 }

func (p scaledLR) LearningRate(_ aggregate.Diagnostics, lr float64) float64 { return lr * p.scale }
func (p scaledLR) Observe(aggregate.Diagnostics)                            {}

// The test method, registered from outside the runner as a user's package
// would: DP-SGD's plan (rule sum) with its own option and step policy.
func init() {
	runner.RegisterMethod(runner.Method{
		Name:    "test-dpsgd-scaled",
		Summary: "DP-SGD with the learning rate scaled by --lr-scale (a test method)",
		Private: true,
		Flags:   append(runner.SGDFlags(), runner.PrivateFlags()...),
		Options: []runner.MethodOption{{Name: "lr-scale", Usage: "factor of the learning rate", Default: 1}},
		Rule: func(_ *runner.TrainConfig, ac aggregate.Config) (string, aggregate.Config) {
			return "sum", ac
		},
		Policy: func(c *runner.TrainConfig, _ float64) optim.StepPolicy {
			return scaledLR{c.MethodOption("lr-scale")}
		},
		Validate: func(c *runner.TrainConfig) error {
			if s := c.MethodOption("lr-scale"); !(s > 0 && s <= 1) {
				return errBadScale
			}
			return nil
		},
	})
}

var errBadScale = errors.New("invalid configuration: --lr-scale must be in (0, 1]")

// TestExternalMethodCLI: a method registered outside the runner is listed
// by --method's help, its option is a flag of `trainer train`, validated by
// the method, refused for other methods, and it trains: with lr 1 and
// --lr-scale 0.5 it releases exactly the model DP-SGD releases at lr 0.5
// with the same key and seed (the same plan, the policy's rate).
func TestExternalMethodCLI(t *testing.T) {
	run := func(args ...string) (int, string, string) {
		var so, se bytes.Buffer
		code := dispatch(args, &so, &se)
		return code, so.String(), se.String()
	}
	if !strings.Contains(strings.Join(runner.Methods(), ","), "test-dpsgd-scaled") {
		t.Fatalf("runner.Methods() = %v", runner.Methods())
	}
	dir := t.TempDir()
	if code, _, se := run("train", "--method", "test-dpsgd-scaled", "--lr-scale", "2", "--model", "logreg", "--steps", "2", "--out", filepath.Join(dir, "bad")); code != 2 || !strings.Contains(se, "--lr-scale must be in (0, 1]") {
		t.Errorf("bad option: exit %d, %s", code, se)
	}
	if code, _, se := run("train", "--method", "dpsgd", "--lr-scale", "0.5", "--model", "logreg", "--steps", "2", "--out", filepath.Join(dir, "bad2")); code != 2 || !strings.Contains(se, "does not use --lr-scale (used by test-dpsgd-scaled)") {
		t.Errorf("option of another method: exit %d, %s", code, se)
	}
	if testing.Short() {
		t.Skip("trains on MNIST")
	}
	key := writeKey(t, filepath.Join(dir, "key"), testKeyA, 0o600)
	common := []string{"--model", "logreg", "--steps", "3", "--seed", "5", "--target-epsilon", "0", "--eval-every", "-1", "--noise-key-file", key}
	var models [2][]byte
	for i, args := range [][]string{
		{"--method", "test-dpsgd-scaled", "--lr", "1", "--lr-scale", "0.5"},
		{"--method", "dpsgd", "--lr", "0.5"},
	} {
		out := filepath.Join(dir, args[1])
		if code, _, se := run(append(append([]string{"train", "--out", out}, args...), common...)...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, se)
		}
		b, err := os.ReadFile(filepath.Join(out, "model.bin"))
		if err != nil {
			t.Fatal(err)
		}
		models[i] = b
	}
	if !bytes.Equal(models[0], models[1]) {
		t.Error("test-dpsgd-scaled at lr 1 × 0.5 released another model than dpsgd at lr 0.5")
	}
	cfg, err := os.ReadFile(filepath.Join(dir, "test-dpsgd-scaled", "config.json"))
	if err != nil || !strings.Contains(string(cfg), `"lr-scale": 0.5`) {
		t.Errorf("config.json does not record the method option: %v\n%s", err, cfg)
	}
}
