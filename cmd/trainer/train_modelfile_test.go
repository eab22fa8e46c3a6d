package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/privtrain/privtrain/model"
	"github.com/privtrain/privtrain/runner"
)

// TestTrainModelFileBadInput: a bad --model-file is one line on stderr,
// exit 2 and no run directory.
func TestTrainModelFileBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("net.json", `{"layers": [{"kind": "flatten"}, {"kind": "dense", "out": 10}]}`)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--model-file", filepath.Join(dir, "missing.json")}, "missing.json"},
		{[]string{"--model-file", write("lstm.json", `{"layers": [{"kind": "lstm"}]}`)}, `unknown layer kind "lstm" (known: avg-pool, conv, dense`},
		{[]string{"--model-file", write("typo.yaml", "layers:\n  - {kind: dense, outs: 10}\n")}, "outs"},
		{[]string{"--model-file", good, "--model", "tfp-cnn"}, "registered architecture"},
		{[]string{"--model", "resnet"}, "unknown model \"resnet\" (known: " + strings.Join(model.Names(), ", ")},
	} {
		var stdout, stderr bytes.Buffer
		code := dispatch(append([]string{"train", "--out", filepath.Join(dir, "r")}, tc.args...), &stdout, &stderr)
		msg := strings.TrimSpace(stderr.String())
		if code != 2 || !strings.Contains(msg, tc.want) || strings.Count(msg, "\n") > 0 {
			t.Errorf("train %v: exit %d, stderr %q; want exit 2 and one line mentioning %q", tc.args, code, msg, tc.want)
		}
		if _, err := os.Stat(filepath.Join(dir, "r")); err == nil {
			t.Errorf("train %v: created a run directory despite the error", tc.args)
		}
	}
}

// TestTrainModelFile trains a network from a JSON file for a few DP-SGD
// steps: the run stores the network in config.json and the model file,
// and resumes.
func TestTrainModelFile(t *testing.T) {
	if testing.Short() {
		t.Skip("trains on MNIST")
	}
	out := filepath.Join(t.TempDir(), "run")
	var stdout, stderr bytes.Buffer
	file := filepath.Join("..", "..", "model", "testdata", "mnist-gn.json")
	args := []string{"train", "--method", "dpsgd", "--model-file", file, "--steps", "4", "--target-epsilon", "0",
		"--corruption", "none", "--corruption-ratio", "0", "--out", out}
	if code := dispatch(args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	want, err := model.ReadNetworkFile(file)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := runner.ReadRunConfig(out)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Model != "mnist-gn" || !cfg.Network.Equal(&want) {
		t.Errorf("config.json: model %q, network %+v; want mnist-gn and %+v", cfg.Model, cfg.Network, want)
	}
	m, err := model.Load(filepath.Join(out, "model.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if s := m.Spec(); s.Arch != "mnist-gn" || !s.Network.Equal(&want) {
		t.Errorf("model.bin spec %+v", s)
	}
	var raw map[string]json.RawMessage
	data, _ := os.ReadFile(filepath.Join(out, "config.json"))
	if json.Unmarshal(data, &raw) != nil || raw["network"] == nil {
		t.Errorf("config.json has no network:\n%s", data)
	}
	resume := []string{"train", "--resume", "--out", out, "--steps", "6"}
	if code := dispatch(resume, &stdout, &stderr); code != 0 {
		t.Errorf("resume: exit %d: %s", code, stderr.String())
	}
}
