package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestResumeRefusesTargetBelowSpent: a resume may lengthen a run but not
// claim a budget below what it already spent (it used to exit 0, record
// the change in changes.jsonl and report "stopped by steps"). A target at
// or above the spent ε is accepted.
func TestResumeRefusesTargetBelowSpent(t *testing.T) {
	c := quickRun(filepath.Join(t.TempDir(), "run"))
	c.Steps = 4
	sum, err := Train(context.Background(), c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfgBefore, _ := os.ReadFile(filepath.Join(c.Out, configFile))
	for _, target := range []float64{0.01, sum.Epsilon * 0.999} {
		r := c
		r.Steps, r.TargetEpsilon = 8, target
		_, err := Train(context.Background(), r, Options{Resume: true})
		var setup *SetupError
		if !errors.As(err, &setup) || !strings.Contains(err.Error(), "below the ε already spent") {
			t.Errorf("target %v after spending %v: %v", target, sum.Epsilon, err)
		}
	}
	if _, err := os.Stat(filepath.Join(c.Out, changesFile)); !os.IsNotExist(err) {
		t.Errorf("a refused resume recorded changes (%v)", err)
	}
	if after, _ := os.ReadFile(filepath.Join(c.Out, configFile)); string(after) != string(cfgBefore) {
		t.Error("a refused resume rewrote config.json")
	}
	r := c
	r.Steps, r.TargetEpsilon = 8, sum.Epsilon*1.5
	s2, err := Train(context.Background(), r, Options{Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	if s2.Steps <= 4 || s2.Epsilon > r.TargetEpsilon {
		t.Errorf("resume with target %v: %d steps, ε %v", r.TargetEpsilon, s2.Steps, s2.Epsilon)
	}
}
