package runner

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestDefaultAndPresetsValidate(t *testing.T) {
	c := DefaultConfig()
	if err := c.Validate(); err != nil {
		t.Fatalf("default config: %v", err)
	}
	for name := range Presets() {
		for _, method := range []string{"", "tsgd-ptr", "tsgd-gaussian", "dpsgd"} {
			c := DefaultConfig()
			c.Method = method
			if err := ApplyPreset(&c, name); err != nil {
				t.Fatal(err)
			}
			if err := c.Validate(); err != nil {
				t.Errorf("preset %s method %q: %v", name, method, err)
			}
		}
	}
}

func TestPresetSigmaByMethod(t *testing.T) {
	// Appendix B.1.3: MNIST σ = 1.1 for PTR, 0.7 for the Gaussian baseline;
	// CIFAR-10 σ = 1.1 / 0.9, R = 3, τ = 2, lr 0.1, batch 1024.
	tests := []struct {
		preset, method string
		sigma, r, tau  float64
		batch          int
	}{
		{"ptr-mnist", "tsgd-ptr", 1.1, 1, 0.5, 256},
		{"ptr-mnist", "tsgd-gaussian", 0.7, 1, 0.5, 256},
		{"ptr-cifar10", "tsgd-ptr", 1.1, 3, 2, 1024},
		{"ptr-cifar10", "tsgd-gaussian", 0.9, 3, 2, 1024},
	}
	for _, tc := range tests {
		c := DefaultConfig()
		c.Method = tc.method
		if err := ApplyPreset(&c, tc.preset); err != nil {
			t.Fatal(err)
		}
		if c.Sigma != tc.sigma || c.ClipNorm != tc.r || c.Tau != tc.tau || c.BatchSize != tc.batch || c.Delta0 != 1e-8 || c.LaplaceB != 1 {
			t.Errorf("%s/%s: got σ=%v R=%v τ=%v batch=%d δ0=%v b=%v", tc.preset, tc.method, c.Sigma, c.ClipNorm, c.Tau, c.BatchSize, c.Delta0, c.LaplaceB)
		}
	}
	if err := ApplyPreset(&TrainConfig{}, "nope"); err == nil {
		t.Error("unknown preset accepted")
	}
}

func TestValidateRejectsBadHyperParameters(t *testing.T) {
	ptr := DefaultConfig()
	ptr.Method = "tsgd-ptr"
	if err := ApplyPreset(&ptr, "ptr-mnist"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		mutate func(*TrainConfig)
		want   string
	}{
		{"sigma zero", func(c *TrainConfig) { c.Sigma = 0 }, "σ"},
		{"sigma negative", func(c *TrainConfig) { c.Sigma = -1 }, "σ"},
		{"delta one", func(c *TrainConfig) { c.Delta = 1 }, "δ"},
		{"delta zero", func(c *TrainConfig) { c.Delta = 0 }, "δ"},
		{"q above one", func(c *TrainConfig) { c.SamplingRate = 1.5 }, "sampling rate"},
		{"lr zero", func(c *TrainConfig) { c.LR = 0 }, "learning rate"},
		{"tau above R", func(c *TrainConfig) { c.Tau = 2 }, "τ"},
		{"b zero", func(c *TrainConfig) { c.LaplaceB = 0 }, "Laplace"},
		{"delta0 one", func(c *TrainConfig) { c.Delta0 = 1 }, "δ₀"},
		{"delta0 above half", func(c *TrainConfig) { c.Delta0 = 0.6 }, "δ₀"},
		{"trim half", func(c *TrainConfig) { c.TrimFraction = 0.5 }, "trim"},
		{"unknown method", func(c *TrainConfig) { c.Method = "sgd++" }, "unknown method"},
		{"no length", func(c *TrainConfig) { c.Epochs, c.Steps, c.TargetEpsilon = 0, 0, 0 }, "run length"},
		{"corruption ratio", func(c *TrainConfig) { c.CorruptionRatio = 1.2 }, "corruption ratio"},
		{"conversion", func(c *TrainConfig) { c.Conversion = "rdp" }, "conversion"},
	}
	for _, tc := range tests {
		c := ptr
		tc.mutate(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error mentioning %q", tc.name, err, tc.want)
		}
	}
}

func TestLoadConfigFile(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"run.json": `{"method": "tsgd-ptr", "sigma": 2.5, "tau": 0.25}`,
		"run.yaml": "method: tsgd-ptr\nsigma: 2.5\ntau: 0.25\n",
	}
	for name, body := range files {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		c := DefaultConfig()
		if err := LoadConfigFile(path, &c); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if c.Method != "tsgd-ptr" || c.Sigma != 2.5 || c.Tau != 0.25 || c.BatchSize != 256 {
			t.Errorf("%s: merged config %+v", name, c)
		}
	}
	bad := map[string]string{"typo.json": `{"sigmaa": 1}`, "typo.yaml": "sigmaa: 1\n", "x.toml": "sigma = 1"}
	for name, body := range bad {
		path := filepath.Join(dir, name)
		os.WriteFile(path, []byte(body), 0o644)
		c := DefaultConfig()
		if err := LoadConfigFile(path, &c); err == nil {
			t.Errorf("%s: want an error", name)
		}
	}
}

func TestCountCorrect(t *testing.T) {
	scores := []float32{0.1, 0.7, 0.2, 0.5, 0.5, 0, 0, 0, 1}
	// Row argmaxes: 1, 0 (first on ties), 2.
	tests := []struct {
		labels []int
		want   int
	}{{[]int{1, 0, 2}, 3}, {[]int{1, 1, 2}, 2}, {[]int{0, 1, 0}, 0}}
	for _, tc := range tests {
		if got := countCorrect(scores, 3, tc.labels); got != tc.want {
			t.Errorf("labels %v: %d correct, want %d", tc.labels, got, tc.want)
		}
	}
}

// TestLoadConfigFileStrict: JSON keys match exactly (case-sensitive, also
// nested), trailing documents are refused in JSON and YAML, and a FIFO is
// refused instead of blocking.
func TestLoadConfigFileStrict(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, content string
		want          string // "" = accepted
	}{
		{"ok.json", `{"steps": 7, "pdp": {"rounds": 2}}`, ""},
		{"case.json", `{"steps": 7, "Steps": 9}`, `key "Steps": keys are case-sensitive, did you mean "steps"?`},
		{"nested.json", `{"pdp": {"Rounds": 2}}`, `key "pdp.Rounds": keys are case-sensitive, did you mean "pdp.rounds"?`},
		{"unknown.json", `{"stepz": 7}`, `unknown key "stepz"`},
		{"two.json", `{"steps": 7} {"steps": 9}`, "more than one JSON document"},
		{"ok.yaml", "steps: 7\n", ""},
		{"two.yaml", "steps: 7\n---\nsteps: 9\n", "more than one YAML document"},
		{"case.yaml", "Steps: 9\n", "not found"},
	}
	for _, tc := range tests {
		p := filepath.Join(dir, tc.name)
		os.WriteFile(p, []byte(tc.content), 0o644)
		c := TrainDefaults()
		err := LoadConfigFile(p, &c)
		if tc.want == "" {
			if err != nil || c.Steps != 7 {
				t.Errorf("%s: steps %d, %v", tc.name, c.Steps, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip(err)
	}
	c := TrainDefaults()
	if err := LoadConfigFile(fifo, &c); err == nil || !strings.Contains(err.Error(), "not a regular file (a named pipe)") {
		t.Errorf("FIFO config: %v", err)
	}
}
