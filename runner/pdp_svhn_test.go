package runner

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestPDPSVHNPreset checks the pdp-svhn preset: the paper's settings
// (appendix C.2, the same as for MNIST) with the Table 4 CNN on SVHN, valid
// for every personalized method.
func TestPDPSVHNPreset(t *testing.T) {
	for _, method := range pdpMethods() {
		c := DefaultConfig()
		c.Method = method
		if err := ApplyPreset(&c, "pdp-svhn"); err != nil {
			t.Fatal(err)
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		if c.Dataset != "svhn" || c.Model != "pdp-cnn-svhn" || c.Method != method || c.LR != 0.05 || c.BatchSize != 64 ||
			c.Sigma != 1.3 || c.ClipNorm != 1 || c.PDP.BudgetMin != 0.5 || c.PDP.BudgetMax != 1 {
			t.Errorf("%s: got dataset %q model %q method %q lr %v batch %d σ %v clip %v budgets [%v, %v]", method,
				c.Dataset, c.Model, c.Method, c.LR, c.BatchSize, c.Sigma, c.ClipNorm, c.PDP.BudgetMin, c.PDP.BudgetMax)
		}
	}
	// The MNIST presets keep their CNN.
	c := DefaultConfig()
	if err := ApplyPreset(&c, "pdp-fashion-mnist"); err != nil || c.Model != "pdp-cnn-mnist" || c.Dataset != "fashion-mnist" {
		t.Errorf("pdp-fashion-mnist: model %q dataset %q, %v", c.Model, c.Dataset, err)
	}
}

// TestPDPSVHNMissingFiles is `trainer train --method pdp-sgd --preset
// pdp-svhn --data-dir <empty dir>`: it must fail before training, naming
// the missing file and where to download it.
func TestPDPSVHNMissingFiles(t *testing.T) {
	c := DefaultConfig()
	c.Method = "pdp-sgd"
	if err := ApplyPreset(&c, "pdp-svhn"); err != nil {
		t.Fatal(err)
	}
	c.DataDir = t.TempDir()
	c.Out = filepath.Join(t.TempDir(), "run")
	sum, err := Train(context.Background(), c, Options{})
	if err == nil {
		t.Fatalf("training ran without SVHN files: %+v", sum)
	}
	for _, want := range []string{filepath.Join(c.DataDir, "svhn", "train_32x32.mat"), "file not found",
		"http://ufldl.stanford.edu/housenumbers/train_32x32.mat"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}
