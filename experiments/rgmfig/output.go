package rgmfig

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/privtrain/privtrain/experiments/figstyle"
	"github.com/privtrain/privtrain/internal/fileutil"
)

// WriteCSV writes one row per (split, curve, iteration) with the gap of every
// run and their min / median / max: columns split, curve, iteration, min,
// median, max, run0, run1, …; failed runs are empty cells.
func (f *Figure) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	head := []string{"split", "curve", "iteration", "min", "median", "max"}
	for r := 0; r < f.Config.Runs; r++ {
		head = append(head, "run"+strconv.Itoa(r))
	}
	if err := cw.Write(head); err != nil {
		return err
	}
	ff := func(v float64) string { return strconv.FormatFloat(v, 'g', 10, 64) }
	for _, p := range f.Panels {
		for _, cr := range p.Curves {
			lo, mid, hi := cr.Band()
			if lo == nil {
				continue
			}
			for t := range lo {
				rec := []string{string(p.Split), cr.Curve.Name, strconv.Itoa(t), ff(lo[t]), ff(mid[t]), ff(hi[t])}
				for _, g := range cr.Gaps {
					if g == nil {
						rec = append(rec, "")
					} else {
						rec = append(rec, ff(g[t]))
					}
				}
				if err := cw.Write(rec); err != nil {
					return err
				}
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteSummary writes the figure's configuration and per-curve summaries
// (final gaps, errors, node reports) as indented JSON.
func (f *Figure) WriteSummary(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(f)
}

// Plot draws one log-scale panel per split: each curve's median gap over the
// runs as a line and its min–max band shaded. Gaps below floor are drawn at
// floor (the CSV keeps the exact values).
func (f *Figure) Plot(floor float64) ([]*plot.Plot, error) {
	var plots []*plot.Plot
	for _, p := range f.Panels {
		pl := plot.New()
		pl.Title.Text = fmt.Sprintf("%s split — %s", p.Split, f.Config.Title)
		pl.X.Label.Text = "iteration"
		pl.Y.Label.Text = "f(θ_t) − f*"
		pl.Y.Scale = plot.LogScale{}
		pl.Y.Tick.Marker = figstyle.LogTicks{}
		pl.X.Tick.Marker = figstyle.LinearTicks{N: 6}
		pl.Legend.Top = true
		pl.Legend.TextStyle.Font.Size = vg.Points(9)
		top := floor
		for c, cr := range p.Curves {
			lo, mid, hi := cr.Band()
			if lo == nil {
				pl.Legend.Add(cr.Curve.Label + " (failed)")
				continue
			}
			col := palette[c%len(palette)]
			band := make(plotter.XYs, 0, 2*len(lo))
			line := make(plotter.XYs, len(mid))
			clamp := func(v float64) float64 { return math.Max(v, floor) }
			for t := range lo {
				band = append(band, plotter.XY{X: float64(t), Y: clamp(hi[t])})
				line[t] = plotter.XY{X: float64(t), Y: clamp(mid[t])}
				top = math.Max(top, hi[t])
			}
			for t := len(lo) - 1; t >= 0; t-- {
				band = append(band, plotter.XY{X: float64(t), Y: clamp(lo[t])})
			}
			poly, err := plotter.NewPolygon(band)
			if err != nil {
				return nil, err
			}
			r, g, b, _ := col.RGBA()
			poly.Color = color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 60}
			poly.LineStyle.Width = 0
			ln, err := plotter.NewLine(line)
			if err != nil {
				return nil, err
			}
			ln.Color = col
			ln.Width = vg.Points(1.5)
			if cr.Curve.Constants == "paper" {
				ln.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
			}
			pl.Add(poly, ln)
			pl.Legend.Add(cr.Curve.Label, ln)
		}
		// Headroom above the curves for the legend.
		pl.Y.Min, pl.Y.Max = floor, top*1e4
		plots = append(plots, pl)
	}
	return plots, nil
}

// palette colours the curves in AuthorsCurves order: no noise, RGM, RGM
// (paper constants), clip c, clip 10c, clip c/10, RGM (authors' formula).
var palette = []color.Color{
	color.NRGBA{0, 0, 0, 255},
	color.NRGBA{31, 119, 180, 255},
	color.NRGBA{31, 119, 180, 255},
	color.NRGBA{255, 127, 14, 255},
	color.NRGBA{44, 160, 44, 255},
	color.NRGBA{214, 39, 40, 255},
	color.NRGBA{148, 103, 189, 255},
}

// SavePNG writes the panels side by side as a PNG.
func (f *Figure) SavePNG(path string, floor float64) error {
	_, err := f.Save(strings.TrimSuffix(path, ".png"), floor, "png")
	return err
}

// Save writes the panels side by side as <stem>.<format> for each format
// (default PNG, SVG and PDF) and returns the paths.
func (f *Figure) Save(stem string, floor float64, formats ...string) ([]string, error) {
	plots, err := f.Plot(floor)
	if err != nil {
		return nil, fmt.Errorf("rgmfig: plotting: %w", err)
	}
	paths, err := figstyle.SavePanels(plots, vg.Length(len(plots))*6*vg.Inch, 5*vg.Inch, stem, formats...)
	if err != nil {
		return paths, fmt.Errorf("rgmfig: %w", err)
	}
	return paths, nil
}

// PlotFloor returns a display floor a decade below the smallest gap of any
// private curve (so the noiseless curve's descent to ~1e-30 does not squash
// the others), or 1e-12 if there is none.
func (f *Figure) PlotFloor() float64 {
	m := math.Inf(1)
	for _, p := range f.Panels {
		for _, cr := range p.Curves {
			if cr.Curve.Method == "none" {
				continue
			}
			for _, g := range cr.Gaps {
				for _, v := range g {
					if v > 0 {
						m = math.Min(m, v)
					}
				}
			}
		}
	}
	if math.IsInf(m, 1) {
		return 1e-12
	}
	return m / 10
}

// WriteAll writes <prefix>.csv, <prefix>.json and the figure as
// <prefix>.png, .svg and .pdf into dir.
func (f *Figure) WriteAll(dir, prefix string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("rgmfig: %w", err)
	}
	for _, w := range []struct {
		ext   string
		write func(io.Writer) error
	}{{".csv", f.WriteCSV}, {".json", f.WriteSummary}} {
		path := filepath.Join(dir, prefix+w.ext)
		out, err := os.Create(path)
		if err != nil {
			return fmt.Errorf("rgmfig: %w", err)
		}
		if err := w.write(out); err != nil {
			out.Close()
			return fmt.Errorf("rgmfig: writing %s: %w", path, err)
		}
		if err := out.Close(); err != nil {
			return fmt.Errorf("rgmfig: %w", err)
		}
	}
	if _, err := f.Save(filepath.Join(dir, prefix), f.PlotFloor()); err != nil {
		return err
	}
	return WriteOperatorNotice(dir)
}

// OperatorNoticeFile names the notice written into every directory of RGM
// experiment output.
const OperatorNoticeFile = "OPERATOR-ONLY.txt"

// operatorNotice says why the RGM experiment's files are not releases.
const operatorNotice = `OPERATOR-ONLY: every file in this directory is operator-only.

These are the outputs of an experiment that evaluates private ridge regression,
not differentially private releases. They contain quantities computed from the
data without privacy: the optimum f* and the gaps f(θ_t) − f*, each node's
λ_max and clipping threshold, and the PTR test's exact Δ₊ (Proposition 2) with
its floating-point noisy value Δ̂. The gradient noise is floating-point noise
(summary "noise" field), which is not safe against floating-point attacks.
Publish figures and tables derived from them as research results about the
method, never these files as a private release of the data.
`

// WriteOperatorNotice writes OperatorNoticeFile into dir, atomically.
func WriteOperatorNotice(dir string) error {
	return fileutil.WriteAtomic(filepath.Join(dir, OperatorNoticeFile), []byte(operatorNotice))
}

// Table formats the plateau gaps (median [min, max] over runs) per split
// and curve.
func (f *Figure) Table(w io.Writer) error {
	for _, p := range f.Panels {
		if _, err := fmt.Fprintf(w, "%s split (%s):\n", p.Split, f.Config.Title); err != nil {
			return err
		}
		for _, cr := range p.Curves {
			if cr.Succeeded == 0 {
				msg := ""
				for _, e := range cr.Errors {
					if e != "" {
						msg = e
						break
					}
				}
				fmt.Fprintf(w, "  %-34s failed: %s\n", cr.Curve.Label, msg)
				continue
			}
			fmt.Fprintf(w, "  %-34s %.3g  [%.3g, %.3g]\n", cr.Curve.Label, cr.FinalMedian, cr.FinalMin, cr.FinalMax)
		}
		best, ratios := p.RGMRatios()
		if best != "" && len(ratios) > 0 {
			fmt.Fprintf(w, "  median plateau ÷ best clipping threshold (%s):", best)
			for _, r := range ratios {
				fmt.Fprintf(w, " %s %.3g×", r.Curve, r.Ratio)
			}
			fmt.Fprintln(w)
			if ratios[0].Excess > 0 {
				fmt.Fprint(w, "  the same, each minus the no-noise plateau (noise-induced excess):")
				for _, r := range ratios {
					fmt.Fprintf(w, " %s %.3g×", r.Curve, r.Excess)
				}
				fmt.Fprintln(w)
			}
		}
	}
	return nil
}

// Ratio is an RGM curve's median plateau divided by the best clipping
// curve's; Excess divides the same plateaus minus the no-noise curve's
// (what the noise and clipping add to the optimization error left after
// the iterations; 0 when there is no successful no-noise curve or the best
// clipping curve is not above it).
type Ratio struct {
	Curve  string
	Ratio  float64
	Excess float64
}

// RGMRatios returns the clipping curve with the lowest median plateau and
// each successful RGM curve's median plateau divided by it ("" and nil if
// no clipping curve succeeded): the "how far is the RGM from the best
// threshold" figure of issue 27.
func (p Panel) RGMRatios() (best string, ratios []Ratio) {
	bestGap := math.Inf(1)
	for _, cr := range p.Curves {
		if cr.Curve.Method == "clip" && cr.Succeeded > 0 && cr.FinalMedian < bestGap {
			best, bestGap = cr.Curve.Name, cr.FinalMedian
		}
	}
	if best == "" {
		return "", nil
	}
	none := math.NaN()
	for _, cr := range p.Curves {
		if cr.Curve.Method == "none" && cr.Succeeded > 0 {
			none = cr.FinalMedian
		}
	}
	for _, cr := range p.Curves {
		if cr.Curve.Method == "rgm" && cr.Succeeded > 0 {
			r := Ratio{Curve: cr.Curve.Name, Ratio: cr.FinalMedian / bestGap}
			if bestGap > none {
				r.Excess = (cr.FinalMedian - none) / (bestGap - none)
			}
			ratios = append(ratios, r)
		}
	}
	return best, ratios
}
