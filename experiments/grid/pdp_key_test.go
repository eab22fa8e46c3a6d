package grid

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/privtrain/privtrain/runner"
)

// TestPDPTableKeysStable pins the cell keys (run directories) of the rdp and
// paper cells of the PDP table that the noise guard does not touch: they
// were computed by the code before the pld accounting existed (commit
// 10ea005), so grids started then resume into the same directories. A pld
// cell gets a key of its own. The pdp-sgd cells (noise guard, pdp.noise_guard
// in their configuration) must NOT keep their old keys: a result computed
// without the guard must never be reused for the guarded method; nor the
// pdp-adapdp cells (pdp.adapdp_rounds "threshold": rounds run to τ_T).
//
// All those cells were float-noise runs: the float grid (--float-noise)
// keeps their keys, and the secure grid (the default) shares no key with
// it, so no float result is ever reused as a secure one.
func TestPDPTableKeysStable(t *testing.T) {
	want := map[[3]string]string{
		{"mnist", "rdp", "pdp-dpsgd"}:         "41778268b48701bc",
		{"mnist", "rdp", "pdp-sampling"}:      "a132a4b6f3c7684c",
		{"fashion-mnist", "rdp", "pdp-dpsgd"}: "a7dbdecc2e2dd13c",
	}
	// Keys of pdp-sgd cells before the noise guard (rdp and paper since
	// 10ea005, pld since 3f2da38).
	old := map[[3]string]string{
		{"mnist", "rdp", "pdp-sgd-fixed"}:            "a1aa040bd90399a7",
		{"mnist", "rdp", "pdp-sgd-adaptive"}:         "5b8378afa15dc98f",
		{"mnist", "pld", "pdp-sgd-adaptive"}:         "1d56aa0e7a27a3a3",
		{"mnist", "paper", "pdp-sgd-fixed"}:          "60dc94568198f2b0",
		{"fashion-mnist", "rdp", "pdp-sgd-adaptive"}: "9818278683fe990d",
		// AdaPDP cells before its rounds ran to τ_T (issue 27): the
		// truncated results must not be reused.
		{"mnist", "rdp", "pdp-adapdp"}:           "4dbf54be8e712c62",
		{"fashion-mnist", "paper", "pdp-adapdp"}: "0c3f3ae81d0ed755",
	}
	tab := PDPTable{Presets: []string{"pdp-mnist", "pdp-fashion-mnist"}, Methods: PDPMethods(),
		Accountings: []string{"pld", "rdp", "paper"}, Seeds: []uint64{1}, Epochs: 25, Rounds: 2, FloatNoise: true}
	g, err := tab.Grid()
	if err != nil {
		t.Fatal(err)
	}
	tab.FloatNoise = false
	secure, err := tab.Grid()
	if err != nil {
		t.Fatal(err)
	}
	floatKeys := map[string]bool{}
	for _, c := range g.Cells {
		k, _ := Key(c.Config)
		floatKeys[k] = true
		if !strings.HasSuffix(c.Row[2], " [float noise]") {
			t.Errorf("float cell %v is not labelled", c.Row)
		}
	}
	for _, c := range secure.Cells {
		k, _ := Key(c.Config)
		if floatKeys[k] {
			t.Errorf("secure cell %v has the key %s of a float cell", c.Row, k)
		}
		if !c.Config.SecureRelease() {
			t.Errorf("secure grid cell %v is not secure", c.Row)
		}
	}
	seen := map[string]bool{}
	found := 0
	for _, c := range g.Cells {
		k, err := Key(c.Config)
		if err != nil {
			t.Fatal(err)
		}
		if seen[k] {
			t.Errorf("%v: duplicate key %s", c.Row, k)
		}
		seen[k] = true
		row := [3]string{c.Row[0], c.Row[1], strings.TrimSuffix(c.Row[2], " [float noise]")}
		if o, ok := old[row]; ok && k == o {
			t.Errorf("%v: key %s is the one it had before the noise guard", c.Row, k)
		}
		if guarded := c.Config.Method == "pdp-sgd"; guarded != (c.Config.PDP.NoiseGuard == 4) {
			t.Errorf("%v: noise guard %v", c.Row, c.Config.PDP.NoiseGuard)
		}
		if w, ok := want[row]; ok {
			found++
			if k != w {
				t.Errorf("%v: key %s, before pld existed %s", c.Row, k, w)
			}
		}
		if c.Row[1] == "pld" && c.Config.PDP.Accounting != "pld" {
			t.Errorf("%v: accounting %q", c.Row, c.Config.PDP.Accounting)
		}
	}
	if found != len(want) || len(g.Cells) != 30 {
		t.Errorf("found %d of %d pinned cells among %d cells (want 30)", found, len(want), len(g.Cells))
	}
}

// TestPDPCeilingAndMironovCells checks the reference and conversion cells:
// pdp-ceiling is pdp-dpsgd with one budget group at the preset's largest ε_i
// and otherwise the same configuration (model, length, σ search, seed);
// "<acc>-mironov" cells use the paper's conversion; every key is distinct.
func TestPDPCeilingAndMironovCells(t *testing.T) {
	g, err := PDPTable{Presets: []string{"pdp-mnist"}, Methods: append(PDPMethods(), PDPReferenceMethods()...),
		Accountings: []string{"pld", "rdp-mironov", "paper-mironov"}, Seeds: []uint64{1, 2}, Epochs: 25, Rounds: 2}.Grid()
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Cells) != 3*6*2 {
		t.Fatalf("%d cells", len(g.Cells))
	}
	dpsgd := map[[2]string]runner.TrainConfig{}
	for _, c := range g.Cells {
		if c.Row[2] == "pdp-dpsgd" {
			dpsgd[[2]string{c.Row[1], fmt.Sprint(c.Seed)}] = c.Config
		}
	}
	keys := map[string]bool{}
	for _, c := range g.Cells {
		k, err := Key(c.Config)
		if err != nil || keys[k] {
			t.Fatalf("%v: key %s (%v)", c.Row, k, err)
		}
		keys[k] = true
		wantConv := "bbg"
		if strings.HasSuffix(c.Row[1], "-mironov") {
			wantConv = "mironov"
		}
		if c.Config.Conversion != wantConv || c.Config.PDP.Accounting != strings.TrimSuffix(c.Row[1], "-mironov") {
			t.Errorf("%v: conversion %q accounting %q", c.Row, c.Config.Conversion, c.Config.PDP.Accounting)
		}
		if c.Row[2] != "pdp-ceiling" {
			continue
		}
		want := dpsgd[[2]string{c.Row[1], fmt.Sprint(c.Seed)}]
		want.PDP.BudgetGroups, want.PDP.BudgetMin = 1, want.PDP.BudgetMax
		if !reflect.DeepEqual(c.Config, want) || c.Config.PDP.BudgetMax != 1 || !math.IsNaN(c.Paper) {
			t.Errorf("%v: ceiling config %+v, want pdp-dpsgd's with budgets at max %+v", c.Row, c.Config.PDP, want.PDP)
		}
	}
	if testing.Short() {
		return
	}
	// The ceiling trains: every example at ε_i = 1 spends just under 1.
	for _, c := range g.Cells {
		if c.Row[2] != "pdp-ceiling" || c.Row[1] != "rdp-mironov" || c.Seed != 1 {
			continue
		}
		cfg := c.Config
		cfg.Steps, cfg.PDP.RoundEpochs, cfg.Out = 4, 0, t.TempDir()
		s, err := runner.Train(context.Background(), cfg, runner.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !(s.Epsilon <= 1 && s.Epsilon > 0.99) || s.Conversion != "mironov" {
			t.Errorf("ceiling: spent ε %v (%s)", s.Epsilon, s.Conversion)
		}
	}
}

// TestPDPSamplingOnceCells: the one-time draw is a named row under paper
// accounting and refused (a clear error) under per-step accountings.
func TestPDPSamplingOnceCells(t *testing.T) {
	g, err := PDPTable{Presets: []string{"pdp-mnist"}, Methods: []string{"pdp-sampling", "pdp-sampling-once"},
		Accountings: []string{"paper-mironov"}, Seeds: []uint64{1}, Epochs: 25, Rounds: 2}.Grid()
	if err != nil {
		t.Fatal(err)
	}
	if c := g.Cells[1].Config; c.Method != "pdp-sampling" || c.PDP.SamplingDraw != "once" || g.Cells[0].Config.PDP.SamplingDraw != "" {
		t.Errorf("cells %+v / %+v", g.Cells[0].Config.PDP, c.PDP)
	}
	if _, err := (PDPTable{Presets: []string{"pdp-mnist"}, Methods: []string{"pdp-sampling-once"},
		Accountings: []string{"pld"}, Seeds: []uint64{1}, Epochs: 25, Rounds: 2}).Grid(); err == nil || !strings.Contains(err.Error(), "paper") {
		t.Errorf("pld one-time draw: %v", err)
	}
}
