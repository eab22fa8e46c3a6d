package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/privtrain/privtrain/privacy"
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

// TestResumeTargetRecertified: a run that an earlier accountant version
// stopped at its target ε may be certified slightly above that target by
// this version (docs/pld-evidence.md §9). Simulated on a DP-SGD run of 4
// steps (PLD accountant) resumed with a target 5e-5 relative below its
// certified ε (the earlier version's ε, at or below the target): the run
// is finished at its target (no step more, stopped by the budget) and
// reports the certified (higher) ε with a statement that it was
// re-certified, in summary.json too; a resume with the target 2e-3 below
// (beyond privacy.RecertificationTolerance) is refused as before.
func TestResumeTargetRecertified(t *testing.T) {
	c := quickRun(filepath.Join(t.TempDir(), "run"))
	c.Steps = 4
	sum, err := Train(context.Background(), c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Accountant != privacy.KindPLD {
		t.Fatalf("accountant %s, want the PLD accountant (the one whose ε moved)", sum.Accountant)
	}
	model4, _ := os.ReadFile(filepath.Join(c.Out, finalModel))
	r := c
	r.Steps, r.TargetEpsilon = 8, sum.Epsilon*(1-2e-3)
	if _, err := Train(context.Background(), r, Options{Resume: true}); err == nil || !strings.Contains(err.Error(), "below the ε already spent") {
		t.Errorf("target %v after spending %v: %v", r.TargetEpsilon, sum.Epsilon, err)
	}
	r.TargetEpsilon = sum.Epsilon * (1 - 5e-5)
	s, err := Train(context.Background(), r, Options{Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("re-certifies its 4 steps at ε = %v", sum.Epsilon)
	if s.Steps != 4 || s.StoppedBy != "budget" || s.Epsilon != sum.Epsilon || !strings.Contains(s.Recertified, want) {
		t.Errorf("resumed: %d steps, stopped by %s, ε %v (certified %v), recertified %q (want %q)", s.Steps, s.StoppedBy, s.Epsilon, sum.Epsilon, s.Recertified, want)
	}
	if after, _ := os.ReadFile(filepath.Join(c.Out, finalModel)); len(after) == 0 || !bytes.Equal(after, model4) {
		t.Error("the finished run's model changed")
	}
	var pub Summary
	if err := readJSON(filepath.Join(c.Out, summaryFile), &pub); err != nil {
		t.Fatal(err)
	}
	if pub.Recertified != s.Recertified || pub.Epsilon != sum.Epsilon {
		t.Errorf("summary.json: ε %v, recertified %q", pub.Epsilon, pub.Recertified)
	}
}

// TestRunDirSafety: a new run refuses an existing directory holding other
// files and no run (`--out $HOME`), and a private/ that is not a directory
// (a symlink would receive the noise key and a chmod); a run refused after
// taking the lock leaves no .lock or private/ behind in a directory it did
// not create; a grid cell's own files are allowed.
func TestRunDirSafety(t *testing.T) {
	root := t.TempDir()
	mk := func(name string, files ...string) string {
		d := filepath.Join(root, name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if err := os.WriteFile(filepath.Join(d, f), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return d
	}
	listing := func(d string) string {
		es, _ := os.ReadDir(d)
		var names []string
		for _, e := range es {
			names = append(names, e.Name())
		}
		return strings.Join(names, ",")
	}
	var setup *SetupError

	home := mk("home", "notes.txt", ".bashrc")
	c := quickRun(home)
	if _, err := Train(context.Background(), c, Options{}); !errors.As(err, &setup) || !strings.Contains(err.Error(), "is not empty and holds no run") {
		t.Errorf("non-empty directory: %v", err)
	}
	if got := listing(home); got != ".bashrc,notes.txt" {
		t.Errorf("refused run changed the directory: %s", got)
	}

	target := mk("elsewhere")
	if err := os.Chmod(target, 0o755); err != nil {
		t.Fatal(err)
	}
	sym := mk("sym")
	if err := os.Symlink(target, filepath.Join(sym, privateDir)); err != nil {
		t.Fatal(err)
	}
	c = quickRun(sym)
	if _, err := Train(context.Background(), c, Options{}); err == nil || !strings.Contains(err.Error(), "refusing to follow it") {
		t.Errorf("private/ symlink: %v", err)
	}
	if got := listing(target); got != "" {
		t.Errorf("the symlink's target received %s", got)
	}
	if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o755 {
		t.Errorf("the symlink's target was chmod'ed to %v", fi.Mode().Perm())
	}

	// Refused after the lock (the dataset cannot load): nothing is left.
	empty := mk("empty")
	c = quickRun(empty)
	c.Dataset, c.DataDir, c.Model = "cifar10", filepath.Join(root, "no-data"), "logreg"
	if _, err := Train(context.Background(), c, Options{}); !errors.As(err, &setup) {
		t.Fatalf("missing data: %v", err)
	}
	if got := listing(empty); got != "" {
		t.Errorf("a refused run left %s", got)
	}

	// A grid cell's files are the caller's: the run proceeds.
	cell := mk("cell", "cell.json", ".cell.lock")
	c = quickRun(cell)
	c.Steps = 1
	if _, err := Train(context.Background(), c, Options{Foreign: []string{"cell.json", ".cell.lock"}}); err != nil {
		t.Errorf("grid cell directory: %v", err)
	}
}
