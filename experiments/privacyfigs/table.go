package privacyfigs

import (
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// table is the data of one figure: an x column and named y columns (NaN =
// not plotted: the bound is not defined or not valid there).
type table struct {
	name    string   // file stem, e.g. "fig1"
	title   string   // plot title
	comment string   // parameters, written as the CSV's first line ("# …")
	xLabel  string   // x axis
	yLabel  string   // y axis
	logY    bool     // logarithmic y axis
	logX    bool     // logarithmic x axis
	columns []string // column names; columns[0] is x
	rows    [][]float64
}

// col returns the values of the named column.
func (t *table) col(name string) []float64 {
	for j, c := range t.columns {
		if c == name {
			out := make([]float64, len(t.rows))
			for i, r := range t.rows {
				out[i] = r[j]
			}
			return out
		}
	}
	return nil
}

// writeCSV writes "# comment", the header and the rows (NaN as empty).
func (t *table) writeCSV(dir string) (string, error) {
	path := filepath.Join(dir, t.name+".csv")
	f, err := os.Create(path)
	if err != nil {
		return "", fmt.Errorf("privacy figures: %w", err)
	}
	defer f.Close()
	if _, err := fmt.Fprintf(f, "# %s\n", t.comment); err != nil {
		return "", fmt.Errorf("privacy figures: write %s: %w", path, err)
	}
	w := csv.NewWriter(f)
	if err := w.Write(t.columns); err != nil {
		return "", fmt.Errorf("privacy figures: write %s: %w", path, err)
	}
	for _, r := range t.rows {
		rec := make([]string, len(r))
		for j, v := range r {
			if !math.IsNaN(v) {
				rec[j] = strconv.FormatFloat(v, 'g', -1, 64)
			}
		}
		if err := w.Write(rec); err != nil {
			return "", fmt.Errorf("privacy figures: write %s: %w", path, err)
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return "", fmt.Errorf("privacy figures: write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("privacy figures: close %s: %w", path, err)
	}
	return path, nil
}

// writePNG plots every y column against x as a line (NaN points skipped).
func (t *table) writePNG(dir string) (string, error) {
	p := plot.New()
	p.Title.Text = t.title
	p.X.Label.Text = t.xLabel
	p.Y.Label.Text = t.yLabel
	if t.logY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	if t.logX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	p.Legend.Top = true
	p.Legend.Left = true
	x := t.col(t.columns[0])
	for j, name := range t.columns[1:] {
		y := t.col(name)
		var xy plotter.XYs
		for i := range x {
			if !math.IsNaN(y[i]) && !(t.logY && y[i] <= 0) {
				xy = append(xy, plotter.XY{X: x[i], Y: y[i]})
			}
		}
		if len(xy) == 0 {
			continue
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return "", fmt.Errorf("privacy figures: %s: %w", t.name, err)
		}
		l.Color = plotutil.Color(j)
		l.Dashes = plotutil.Dashes(j)
		l.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(name, l)
	}
	path := filepath.Join(dir, t.name+".png")
	if err := p.Save(7*vg.Inch, 4.5*vg.Inch, path); err != nil {
		return "", fmt.Errorf("privacy figures: save %s: %w", path, err)
	}
	return path, nil
}
