package grid

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// RowStats summarises the finished cells of one table row.
type RowStats struct {
	Row []string
	// N is the number of finished seeds, Of the number of seeds in the grid.
	N, Of int
	// MeanAcc and SDAcc are the mean and sample standard deviation (n − 1)
	// of the test accuracy in %; SDAcc is NaN when N < 2.
	MeanAcc, SDAcc float64
	// Paper is the paper's number (NaN: none).
	Paper float64
	// Means over the finished seeds.
	Epsilon, Steps, WallSeconds, PTRPassRate float64
	// PTRTests counts the PTR tests of the finished seeds: the PTR pass
	// column is filled when it is > 0, a 0% pass rate included.
	PTRTests int
	Seeds    []uint64
	Accs     []float64
	// Accountant names the accountant of Epsilon ("pld", "rdp"; "mixed"
	// when the seeds differ, "" for runs without one).
	Accountant string
}

// Table is a collected grid.
type Table struct {
	Grid    string
	Columns []string
	Rows    []RowStats
	// Missing lists the cells without a summary.
	Missing []int
	// Cells are the per-cell results (finished cells only).
	Cells []CellResult
}

// CellResult is one finished cell.
type CellResult struct {
	Index        int
	Key          string
	Row          []string
	Seed         uint64
	TestAccuracy float64 // in [0, 1]
	Epsilon      float64
	Steps        int
	WallSeconds  float64
	ExamplesPerS float64
	PTRPassRate  float64
	Accountant   string
}

// Collect reads the summaries of the finished cells under out and groups
// them by row, in the grid's order.
func (g *Grid) Collect(out string) (*Table, error) {
	t := &Table{Grid: g.Name, Columns: g.Columns}
	index := map[string]int{}
	for i, c := range g.Cells {
		dir, err := g.Dir(out, i)
		if err != nil {
			return nil, err
		}
		rk := strings.Join(c.Row, "\x00")
		ri, ok := index[rk]
		if !ok {
			ri = len(t.Rows)
			index[rk] = ri
			t.Rows = append(t.Rows, RowStats{Row: c.Row, Paper: c.Paper})
		}
		r := &t.Rows[ri]
		r.Of++
		s, err := readSummary(dir)
		if errors.Is(err, os.ErrNotExist) {
			t.Missing = append(t.Missing, i)
			continue
		}
		if err != nil {
			return nil, err
		}
		t.Cells = append(t.Cells, CellResult{
			Index: i, Key: filepath.Base(dir), Row: c.Row, Seed: c.Seed, TestAccuracy: s.TestAccuracy,
			Epsilon: s.Epsilon, Steps: s.Steps, WallSeconds: s.WallSeconds, ExamplesPerS: s.ExamplesPerSecond,
			PTRPassRate: s.PTRPassRate, Accountant: s.Accountant,
		})
		switch {
		case r.N == 0:
			r.Accountant = s.Accountant
		case r.Accountant != s.Accountant:
			r.Accountant = "mixed"
		}
		r.N++
		r.Seeds = append(r.Seeds, c.Seed)
		r.Accs = append(r.Accs, 100*s.TestAccuracy)
		r.Epsilon += s.Epsilon
		r.Steps += float64(s.Steps)
		r.WallSeconds += s.WallSeconds
		r.PTRPassRate += s.PTRPassRate
		r.PTRTests += s.PTRTests
	}
	for i := range t.Rows {
		r := &t.Rows[i]
		r.MeanAcc, r.SDAcc = meanSD(r.Accs)
		if r.N > 0 {
			n := float64(r.N)
			r.Epsilon, r.Steps, r.WallSeconds, r.PTRPassRate = r.Epsilon/n, r.Steps/n, r.WallSeconds/n, r.PTRPassRate/n
		}
	}
	return t, nil
}

// meanSD returns the mean and the sample standard deviation (n − 1
// denominator, two-pass); NaN where undefined.
func meanSD(x []float64) (mean, sd float64) {
	if len(x) == 0 {
		return math.NaN(), math.NaN()
	}
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	if len(x) < 2 {
		return mean, math.NaN()
	}
	var ss float64
	for _, v := range x {
		ss += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(ss / float64(len(x)-1))
}

// Markdown renders the table: one line per row with mean ± sd (n of m
// seeds) beside the paper's number, then the missing cells.
func (t *Table) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "| %s | test accuracy %% (mean ± sd) | n | paper | ε spent | steps | PTR pass | wall s/run |\n", strings.Join(t.Columns, " | "))
	b.WriteString(strings.Repeat("| --- ", len(t.Columns)+7) + "|\n")
	for _, r := range t.Rows {
		acc, eps, steps, pass, wall := "–", "–", "–", "–", "–"
		if r.N > 0 {
			acc = fmt.Sprintf("%.2f", r.MeanAcc)
			if r.N > 1 {
				acc += fmt.Sprintf(" ± %.2f", r.SDAcc)
			}
			eps = fmt.Sprintf("%.3f", r.Epsilon)
			if r.Accountant != "" {
				eps += " (" + r.Accountant + ")"
			}
			steps = fmt.Sprintf("%.0f", r.Steps)
			wall = fmt.Sprintf("%.0f", r.WallSeconds)
			if r.PTRTests > 0 {
				pass = fmt.Sprintf("%.1f%%", 100*r.PTRPassRate)
			}
		}
		paper := "–"
		if !math.IsNaN(r.Paper) {
			paper = fmt.Sprintf("%.2f", r.Paper)
		}
		fmt.Fprintf(&b, "| %s | %s | %d/%d | %s | %s | %s | %s | %s |\n", strings.Join(r.Row, " | "), acc, r.N, r.Of, paper, eps, steps, pass, wall)
	}
	if len(t.Missing) > 0 {
		fmt.Fprintf(&b, "\nMissing %d of %d cells: %s\n", len(t.Missing), len(t.Missing)+len(t.Cells), rangeList(t.Missing))
	}
	return b.String()
}

// CSV renders one line per finished cell.
func (t *Table) CSV() string {
	var b strings.Builder
	w := csv.NewWriter(&b) // quotes a value holding a comma or quote
	w.Write(append(append([]string{"cell", "key"}, t.Columns...), "seed", "test_accuracy", "epsilon", "steps", "ptr_pass_rate", "wall_seconds", "examples_per_second", "accountant"))
	for _, c := range t.Cells {
		rec := append([]string{strconv.Itoa(c.Index), c.Key}, c.Row...)
		rec = append(rec, strconv.FormatUint(c.Seed, 10), fmt.Sprintf("%.4f", c.TestAccuracy), fmt.Sprintf("%.4f", c.Epsilon),
			strconv.Itoa(c.Steps), fmt.Sprintf("%.4f", c.PTRPassRate), fmt.Sprintf("%.1f", c.WallSeconds), fmt.Sprintf("%.0f", c.ExamplesPerS), c.Accountant)
		w.Write(rec)
	}
	w.Flush()
	return b.String()
}

// Write writes table.md and cells.csv to out and the Markdown to w.
func (t *Table) Write(out string, w io.Writer) error {
	md := t.Markdown()
	if err := writeFile(filepath.Join(out, "table.md"), []byte(md), 0o644); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(out, "cells.csv"), []byte(t.CSV()), 0o644); err != nil {
		return err
	}
	_, err := io.WriteString(w, md)
	return err
}

// rangeList renders sorted indices compactly: 0-3,7,9-10.
func rangeList(idx []int) string {
	var parts []string
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && idx[j+1] == idx[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, fmt.Sprint(idx[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", idx[i], idx[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}
