package privacyfigs

import (
	"encoding/csv"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/privtrain/privtrain/experiments/figstyle"
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

	// csvOnly names columns written to the CSV but not plotted (e.g. the
	// optimal order behind a plotted ε).
	csvOnly map[string]bool
	// styles, if set, gives each column its line style (columns[0] and
	// csvOnly columns are ignored); otherwise column j gets color and dashes j.
	styles map[string]lineStyle
	// legendRight puts the legend in the top right corner instead of the
	// top left (for curves that decrease).
	legendRight bool
	// height of the figure in inches (0: 4.5).
	height float64
	// labels gives a column's legend text (default: the column name).
	labels map[string]string
	// key, if set, replaces the per-curve legend: entries explain the
	// colours and dash patterns separately (Figures 1 and 4: four δ₀
	// colours and three bound styles instead of twelve combinations).
	key []keyEntry
}

// keyEntry is one legend line: a text and the line sample drawn beside it.
type keyEntry struct {
	text  string
	style lineStyle
	// black draws the sample in black (a dash-pattern entry).
	black bool
}

// lineStyle is a curve's color and dash pattern, as plotutil indices.
type lineStyle struct{ color, dashes int }

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

// writePlots plots every y column against x as a line (NaN points
// skipped) and saves the figure as PNG, SVG and PDF.
func (t *table) writePlots(dir string) ([]string, error) {
	p := plot.New()
	p.Title.Text = t.title
	p.X.Label.Text = t.xLabel
	p.Y.Label.Text = t.yLabel
	p.X.Tick.Marker, p.Y.Tick.Marker = figstyle.LinearTicks{}, figstyle.LinearTicks{}
	if t.logY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = figstyle.LogTicks{}
	}
	if t.logX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = figstyle.LogTicks{}
	}
	p.Legend.Top = true
	p.Legend.Left = !t.legendRight
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	p.Add(plotter.NewGrid())
	x := t.col(t.columns[0])
	for j, name := range t.columns[1:] {
		if t.csvOnly[name] {
			continue
		}
		st, ok := t.styles[name]
		if !ok {
			st = lineStyle{color: j, dashes: j}
		}
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
			return nil, fmt.Errorf("privacy figures: %s: %w", t.name, err)
		}
		l.Color = plotutil.Color(st.color)
		l.Dashes = plotutil.Dashes(st.dashes)
		l.Width = vg.Points(1.5)
		p.Add(l)
		if t.key == nil {
			label := name
			if v, ok := t.labels[name]; ok {
				label = v
			}
			p.Legend.Add(label, l)
		}
	}
	for _, e := range t.key {
		ls := draw.LineStyle{Color: plotutil.Color(e.style.color), Dashes: plotutil.Dashes(e.style.dashes), Width: vg.Points(1.5)}
		if e.black {
			ls.Color = color.Black
		}
		p.Legend.Add(e.text, &plotter.Line{LineStyle: ls})
	}
	h := t.height
	if h == 0 {
		h = 4.5
	}
	paths, err := figstyle.SavePlot(p, 7*vg.Inch, vg.Length(h)*vg.Inch, filepath.Join(dir, t.name))
	if err != nil {
		return nil, fmt.Errorf("privacy figures: %w", err)
	}
	return paths, nil
}

// writeReadme writes README.md into dir: one section per figure with its
// title, its files and its parameters (the CSV comment).
func writeReadme(dir string, tables []*table) (string, error) {
	var b strings.Builder
	b.WriteString("# PTR paper privacy figures\n\n" +
		"Regenerated by `trainer experiment privacy-figures` (package privtrain/experiments/privacyfigs); " +
		"every number comes from package privtrain/privacy. Each CSV holds the plotted numbers " +
		"(empty cell = not plotted: outside a theorem's conditions) and, on its first line, the parameters; " +
		"Figures 3 and 5's CSVs also hold columns that are not drawn (optimal orders, the direct curve's δ split).\n")
	for _, t := range tables {
		fmt.Fprintf(&b, "\n## %s\n\nFiles: `%s.png`, `%s.svg`, `%s.pdf`, `%s.csv`.\n\n%s\n", t.title, t.name, t.name, t.name, t.name, t.comment)
	}
	path := filepath.Join(dir, "README.md")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return "", fmt.Errorf("privacy figures: %w", err)
	}
	return path, nil
}
