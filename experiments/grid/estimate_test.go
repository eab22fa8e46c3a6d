package grid

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/privtrain/privtrain/runner"
)

// TestEstimate: a budget-stopped cell takes the steps and wall of the
// measured cell with its settings (TSGD+PTR on PLD: 8,126 steps, 437.4 s);
// DP-SGD at the Gaussian's σ takes the
// TSGD+Gaussian steps (same mechanism) at DP-SGD's measured rate; a
// --steps cap scales the rate; a finished cell costs nothing and its rate
// replaces the table's for its class.
func TestEstimate(t *testing.T) {
	g, err := PTRTable{Preset: "ptr-mnist", Epsilons: []float64{3, 4}, Methods: []string{"tsgd-ptr", "dpsgd"},
		Corruptions: []runner.Corruption{{Kind: "label-flip", Ratio: 0.1}}, Seeds: []uint64{1, 2}}.Grid()
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	// DP-SGD's measured rate: (6.2 + 16.9) min over 21,353 + 52,665 steps.
	dpsgdRate := (6.2*60 + 16.9*60) / (21353 + 52665)
	for i, want := range []CellEstimate{
		{Seconds: 437.4, Steps: 8126, Source: "measured cell"},
		{Seconds: 437.4, Steps: 8126, Source: "measured cell"},
		{Seconds: 2545 * dpsgdRate, Steps: 2545, Source: "measured dpsgd rate"},
		{Seconds: 2545 * dpsgdRate, Steps: 2545, Source: "measured dpsgd rate"},
		{Seconds: math.NaN(), Source: "no measured cell with these settings"}, // ε = 4: never measured
	} {
		got, err := g.Estimate(out, i)
		if err != nil {
			t.Fatal(err)
		}
		if got.Steps != want.Steps || got.Source != want.Source || !(math.Abs(got.Seconds-want.Seconds) < 1e-9 || math.IsNaN(got.Seconds) && math.IsNaN(want.Seconds)) {
			t.Errorf("cell %d (%v): %+v, want %+v", i, g.Cells[i].Row, got, want)
		}
	}
	// Cell 0 finished here at 0.1 s/step: it costs 0, cell 1 takes its rate.
	dir, _ := g.Dir(out, 0)
	os.MkdirAll(dir, 0o755)
	data, _ := json.Marshal(runner.Summary{TestAccuracy: 0.9, Steps: 8126, WallSeconds: 812.6})
	if err := os.WriteFile(filepath.Join(dir, "summary.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if e, _ := g.Estimate(out, 0); e.Seconds != 0 || e.Source != "finished" {
		t.Errorf("finished cell: %+v", e)
	}
	if e, _ := g.Estimate(out, 1); math.Abs(e.Seconds-812.6) > 1e-9 || e.Source != "rate of this grid's finished cells" {
		t.Errorf("cell 1 after cell 0 finished: %+v, want 812.6 s from this grid", e)
	}
	var plan bytes.Buffer
	if err := g.Plan(&plan, out, 2); err != nil {
		t.Fatal(err)
	}
	// Unfinished and estimated: cells 1, 2, 3 (and the ε = 4 cells without a measurement).
	total := 812.6 + 2*2545*dpsgdRate
	for _, want := range []string{"# 8 cells, 7 to run: estimated wall time " + formatDuration(total) + " one cell at a time",
		"about " + formatDuration(total/float64(min(2, runtime.NumCPU()))) + " at --jobs 2 with a core per cell", "plus 4 cells with no measurement", "docs/grid.md", "# data: every unfinished cell's dataset is present"} {
		if !strings.Contains(plan.String(), want) {
			t.Errorf("plan lacks %q:\n%s", want, plan.String())
		}
	}

	rdp, err := PTRTable{Preset: "ptr-mnist", Epsilons: []float64{5}, Methods: []string{"tsgd-ptr"}, Accountant: "rdp",
		Corruptions: []runner.Corruption{{Kind: "none"}}, Seeds: []uint64{1}}.Grid()
	if err != nil {
		t.Fatal(err)
	}
	if e, _ := rdp.Estimate(t.TempDir(), 0); e.Steps != 15208 || e.Seconds != 13.3*60 || e.Source != "measured cell" {
		t.Errorf("TSGD+PTR on RDP at ε = 5: %+v, want the measured cell (15208 steps, 798 s)", e)
	}

	capped, err := PTRTable{Preset: "ptr-mnist", Epsilons: []float64{3}, Methods: []string{"tsgd-gaussian"},
		Corruptions: []runner.Corruption{{Kind: "none"}}, Seeds: []uint64{1}, Steps: 100}.Grid()
	if err != nil {
		t.Fatal(err)
	}
	gaussRate := (2.6*60 + 8.2*60 + 2.1*60) / (2545 + 8269 + 1114)
	if e, _ := capped.Estimate(t.TempDir(), 0); e.Steps != 100 || math.Abs(e.Seconds-100*gaussRate) > 1e-9 {
		t.Errorf("--steps 100 cell: %+v, want 100 steps, %v s", e, 100*gaussRate)
	}
}

func TestFormatDuration(t *testing.T) {
	for s, want := range map[float64]string{40: "40 s", 59.4: "59 s", 150: "3 min", 3600: "1 h 00 min", 4.6 * 3600: "4 h 36 min"} {
		if got := formatDuration(s); got != want {
			t.Errorf("formatDuration(%v) = %q, want %q", s, got, want)
		}
	}
}

// TestCheckDataUpFront: a grid whose Fashion-MNIST cells have no data
// fails before any cell starts, naming the cells, and creates no run
// directory; finished cells need no data.
func TestCheckDataUpFront(t *testing.T) {
	empty := t.TempDir()
	g, err := PDPTable{Presets: []string{"pdp-fashion-mnist"}, Methods: []string{"pdp-dpsgd"}, Accountings: []string{"rdp"},
		Seeds: []uint64{1, 2}, Epochs: 1, Rounds: 2, Steps: 2, DataDir: empty}.Grid()
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	err = g.RunAll(context.Background(), out, nil, 1, nil)
	if !errors.Is(err, ErrData) || !strings.Contains(err.Error(), "fashion-mnist in "+empty+", needed by 2 cells (0-1)") {
		t.Fatalf("RunAll without data: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "cells")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a cell directory was created before the data check: %v", err)
	}
	for i := range g.Cells {
		dir, _ := g.Dir(out, i)
		os.MkdirAll(dir, 0o755)
		data, _ := json.Marshal(runner.Summary{TestAccuracy: 0.5, Steps: 2})
		os.WriteFile(filepath.Join(dir, "summary.json"), data, 0o644)
	}
	if err := g.CheckData(out, nil); err != nil {
		t.Errorf("finished cells need no data: %v", err)
	}
}

// TestEstimateAdaPDPThreshold: pdp-adapdp with its rounds run to τ_T takes
// the steps its accountant plans (by accounting and conversion), not the
// epochs of the truncated variant; a --steps smoke cell takes its cap.
func TestEstimateAdaPDPThreshold(t *testing.T) {
	g, err := PDPTable{Presets: []string{"pdp-mnist", "pdp-fashion-mnist"}, Methods: []string{"pdp-adapdp"},
		Accountings: []string{"pld", "rdp", "rdp-mironov", "paper-mironov"}, Seeds: []uint64{1}, Epochs: 25, Rounds: 2}.Grid()
	if err != nil {
		t.Fatal(err)
	}
	want := map[[2]string]CellEstimate{
		{"mnist", "pld"}:                   {Seconds: 847, Steps: 76771, Source: "measured cell"},
		{"mnist", "rdp-mironov"}:           {Seconds: 177, Steps: 43526, Source: "measured cell"},
		{"mnist", "rdp"}:                   {Steps: 65368, Source: "measured pdp-adapdp rate"},
		{"fashion-mnist", "paper-mironov"}: {Steps: 32739, Source: "measured pdp-adapdp rate"},
	}
	out := t.TempDir()
	seen := 0
	for i, c := range g.Cells {
		w, ok := want[[2]string{c.Row[0], c.Row[1]}]
		if !ok {
			continue
		}
		seen++
		got, err := g.Estimate(out, i)
		if err != nil {
			t.Fatal(err)
		}
		if got.Steps != w.Steps || got.Source != w.Source || (w.Seconds > 0 && got.Seconds != w.Seconds) || !(got.Seconds > 0) {
			t.Errorf("%v: %+v, want %+v", c.Row, got, w)
		}
	}
	if seen != len(want) {
		t.Fatalf("checked %d cells, want %d", seen, len(want))
	}
	smoke, err := PDPTable{Presets: []string{"pdp-mnist"}, Methods: []string{"pdp-adapdp"}, Accountings: []string{"pld"},
		Seeds: []uint64{1}, Epochs: 25, Rounds: 2, Steps: 40}.Grid()
	if err != nil {
		t.Fatal(err)
	}
	if e, _ := smoke.Estimate(out, 0); e.Steps != 40 {
		t.Errorf("--steps 40 smoke cell: %+v, want 40 steps", e)
	}
}
