package main

import (
	"io"
	"strings"
	"testing"

	"github.com/privtrain/privtrain/runner"
)

// TestOptimizerFlags: every optimizer flag sets its configuration field,
// and the flags are refused for a method that does not use them.
func TestOptimizerFlags(t *testing.T) {
	cfg := runner.TrainDefaults()
	fs, _ := trainFlagSet(&cfg, "", "", io.Discard)
	args := []string{"--method", "dpsgd", "--optimizer", "adamw", "--beta1", "0.8", "--beta2", "0.99", "--adam-eps", "1e-6",
		"--weight-decay", "0.01", "--lr-schedule", "cosine", "--warmup-steps", "10", "--lr-decay-steps", "500", "--accumulate", "4"}
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	want := runner.OptimizerSettings{Optimizer: "adamw", Beta1: 0.8, Beta2: 0.99, AdamEps: 1e-6, WeightDecay: 0.01,
		LRSchedule: "cosine", WarmupSteps: 10, LRDecaySteps: 500, Accumulate: 4}
	if cfg.OptimizerSettings != want {
		t.Fatalf("flags gave %+v, want %+v", cfg.OptimizerSettings, want)
	}
	if err := checkMethodFlags(fs, "dpsgd"); err != nil {
		t.Fatal(err)
	}
	if err := checkMethodFlags(fs, "pdp-sgd"); err == nil || !strings.Contains(err.Error(), "--optimizer") {
		t.Fatalf("pdp-sgd with --optimizer: %v", err)
	}
	cfg = runner.TrainDefaults()
	fs, _ = trainFlagSet(&cfg, "", "", io.Discard)
	if err := fs.Parse([]string{"--optimizer", "momentum", "--momentum", "0.9", "--lr-schedule", "step", "--lr-step-size", "100", "--lr-gamma", "0.5"}); err != nil {
		t.Fatal(err)
	}
	if o := cfg.OptimizerSettings; o.Momentum != 0.9 || o.LRStepSize != 100 || o.LRGamma != 0.5 || o.LRSchedule != "step" {
		t.Fatalf("flags gave %+v", o)
	}
}

// TestOptimizerFlagsOnResume: a resumed run keeps its stored optimizer;
// giving another one is refused.
func TestOptimizerFlagsOnResume(t *testing.T) {
	stored := runner.TrainDefaults()
	stored.Method, stored.Out, stored.Optimizer = "dpsgd", t.TempDir(), "adam"
	_, err := parseResumeFlags([]string{"--resume", "--out", stored.Out, "--optimizer", "sgd"}, stored, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--optimizer sgd conflicts with the stored value adam") {
		t.Fatalf("changing the optimizer on resume: %v", err)
	}
	got, err := parseResumeFlags([]string{"--resume", "--out", stored.Out, "--steps", "9"}, stored, io.Discard)
	if err != nil || got.Optimizer != "adam" || got.Steps != 9 {
		t.Fatalf("resume: %+v, %v", got.OptimizerSettings, err)
	}
}
