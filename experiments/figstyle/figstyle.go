// Package figstyle holds what the paper figures share: axis tickers with
// enough labelled ticks to read values off a printed figure, and saving a
// plot (or a row of panels) as PNG, SVG and PDF at once.
package figstyle

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Formats are the file formats every figure is written in: PNG for
// screens, SVG and PDF (vector) for papers.
var Formats = []string{"png", "svg", "pdf"}

// LinearTicks labels about N major ticks (default 8) at a step of 1, 2,
// 2.5 or 5 × 10^k, with unlabelled minor ticks between them.
type LinearTicks struct{ N int }

// Ticks implements plot.Ticker.
func (t LinearTicks) Ticks(min, max float64) []plot.Tick {
	n := t.N
	if n <= 0 {
		n = 8
	}
	if !(max > min) || math.IsInf(min, 0) || math.IsInf(max, 0) || math.IsNaN(min) || math.IsNaN(max) {
		return []plot.Tick{{Value: min, Label: formatTick(min, 0)}}
	}
	step, minors := niceStep((max - min) / float64(n))
	var ticks []plot.Tick
	minor := step / float64(minors)
	first := math.Ceil(min/minor-1e-9) * minor
	for i := 0; ; i++ {
		v := first + float64(i)*minor
		if v > max+minor*1e-9 {
			break
		}
		if r := math.Round(v / step); math.Abs(v/step-r) < 1e-6 {
			v = r * step
			ticks = append(ticks, plot.Tick{Value: v, Label: formatTick(v, step)})
		} else {
			ticks = append(ticks, plot.Tick{Value: v})
		}
	}
	return ticks
}

// niceStep rounds raw up to 1, 2, 2.5 or 5 × 10^k and returns it with the
// number of minor intervals per step.
func niceStep(raw float64) (step float64, minors int) {
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []struct {
		f float64
		n int
	}{{1, 5}, {2, 4}, {2.5, 5}, {5, 5}, {10, 5}} {
		if raw <= m.f*p*(1+1e-9) {
			return m.f * p, m.n
		}
	}
	return 10 * p, 5
}

// formatTick prints v with as many decimals as the step needs.
func formatTick(v, step float64) string {
	if v == 0 {
		return "0"
	}
	if a := math.Abs(v); a >= 1e5 || a < 1e-3 {
		return formatExp(v)
	}
	dec := 0
	if step > 0 {
		for s := step; dec < 10 && math.Abs(s-math.Round(s)) > 1e-9*math.Max(1, step); s *= 10 {
			dec++
		}
	}
	return strconv.FormatFloat(v, 'f', dec, 64)
}

// formatExp prints v as 2e-5, 1.5e3 (no exponent padding).
func formatExp(v float64) string {
	s := strconv.FormatFloat(v, 'e', -1, 64)
	mant, exp, _ := strings.Cut(s, "e")
	e, _ := strconv.Atoi(exp)
	return fmt.Sprintf("%se%d", mant, e)
}

// LogTicks are the ticks of a logarithmic axis: powers of ten labelled,
// 2…9 × 10^k as minor ticks; when the axis spans fewer than three decades,
// 2 and 5 × 10^k are labelled too.
type LogTicks struct{}

// Ticks implements plot.Ticker.
func (LogTicks) Ticks(min, max float64) []plot.Tick {
	if !(min > 0) || !(max > min) {
		return LinearTicks{}.Ticks(min, max)
	}
	lo, hi := int(math.Floor(math.Log10(min))), int(math.Ceil(math.Log10(max)))
	few := hi-lo < 3
	var ticks []plot.Tick
	for e := lo; e <= hi; e++ {
		p := math.Pow(10, float64(e))
		for m := 1; m <= 9; m++ {
			v := float64(m) * p
			if v < min*(1-1e-9) || v > max*(1+1e-9) {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || few && (m == 2 || m == 5) {
				t.Label = formatLog(v)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

func formatLog(v float64) string {
	if a := math.Abs(v); a >= 1e-3 && a < 1e5 {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	return formatExp(v)
}

// TopMargin is the blank band above a figure's titles.
const TopMargin = 3 * vg.Millimeter

// SavePlot writes p as <stem>.<format> for each format (png, svg, pdf) and
// returns the paths.
func SavePlot(p *plot.Plot, w, h vg.Length, stem string, formats ...string) ([]string, error) {
	return SavePanels([]*plot.Plot{p}, w, h, stem, formats...)
}

// SavePanels draws the plots side by side, aligned, in a w × h canvas, and
// writes <stem>.<format> for each format.
func SavePanels(plots []*plot.Plot, w, h vg.Length, stem string, formats ...string) ([]string, error) {
	if len(formats) == 0 {
		formats = Formats
	}
	var paths []string
	for _, f := range formats {
		c, err := draw.NewFormattedCanvas(w, h, f)
		if err != nil {
			return paths, fmt.Errorf("figure %s: %w", stem, err)
		}
		dc := draw.New(c)
		if len(plots) == 1 {
			// gonum draws the title against the canvas's top edge: keep
			// it clear by TopMargin.
			plots[0].Draw(draw.Crop(dc, 0, 0, 0, -TopMargin))
		} else {
			tiles := draw.Tiles{Rows: 1, Cols: len(plots), PadX: vg.Millimeter * 4, PadTop: TopMargin,
				PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
			canvases := plot.Align([][]*plot.Plot{plots}, tiles, dc)
			for i, p := range plots {
				p.Draw(canvases[0][i])
			}
		}
		path := stem + "." + f
		out, err := os.Create(path)
		if err != nil {
			return paths, fmt.Errorf("figure: %w", err)
		}
		if _, err := c.WriteTo(out); err != nil {
			out.Close()
			return paths, fmt.Errorf("figure: write %s: %w", path, err)
		}
		if err := out.Close(); err != nil {
			return paths, fmt.Errorf("figure: %w", err)
		}
		paths = append(paths, path)
	}
	return paths, nil
}
