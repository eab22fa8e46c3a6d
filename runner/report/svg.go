package report

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
)

// palette holds the runs' colours (Okabe–Ito, readable by colour-blind
// readers; its yellow is left out for white paper).
var palette = []string{"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#7F7F7F"}

// series is one line of a chart.
type series struct {
	name  string
	color string
	dash  bool // dashed line
	step  bool // a step function (holds its value until the next point)
	x, y  []float64
}

// chart is a line chart drawn as inline SVG.
type chart struct {
	id, title, xlabel, ylabel string
	series                    []series
	// ymin, ymax fix the y range when ymax > ymin (else from the data).
	ymin, ymax float64
	// zero includes y = 0 in the automatic range.
	zero bool
}

// Layout of a chart, in SVG user units (CSS px at 100%).
const (
	chartW, chartH  = 900, 360
	padL, padR      = 78, 250 // the legend is right of the plot
	padT, padB      = 44, 56
	legendRowHeight = 18
	legendMaxRunes  = 30
)

// svg renders the chart. Every text is escaped.
func (c *chart) svg() string {
	var b strings.Builder
	pw, ph := float64(chartW-padL-padR), float64(chartH-padT-padB)
	x0, x1, y0, y1 := c.bounds()
	sx := func(v float64) float64 { return padL + (v-x0)/(x1-x0)*pw }
	sy := func(v float64) float64 { return padT + ph - (v-y0)/(y1-y0)*ph }
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" class="chart" id="%s" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="%s">`+"\n",
		esc(c.id), chartW, chartH, chartW, chartH, esc(c.title))
	fmt.Fprintf(&b, `<rect x="0" y="0" width="%d" height="%d" fill="#fff"/>`+"\n", chartW, chartH)
	fmt.Fprintf(&b, `<text class="title" x="%d" y="24" font-size="16" font-weight="bold">%s</text>`+"\n", padL, esc(c.title))
	// Grid and ticks.
	yt, ystep := niceTicks(y0, y1, 6)
	for _, t := range yt {
		y := sy(t)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e3e3e3"/>`, float64(padL), y, padL+pw, y)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="12" text-anchor="end">%s</text>`+"\n", float64(padL)-6, y+4, tickLabel(t, ystep))
	}
	xt, xstep := niceTicks(x0, x1, 8)
	for _, t := range xt {
		x := sx(t)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e3e3e3"/>`, x, float64(padT), x, padT+ph)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="12" text-anchor="middle">%s</text>`+"\n", x, padT+ph+18, tickLabel(t, xstep))
	}
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.0f" height="%.0f" fill="none" stroke="#444"/>`+"\n", padL, padT, pw, ph)
	fmt.Fprintf(&b, `<text class="xlabel" x="%.1f" y="%d" font-size="13" text-anchor="middle">%s</text>`+"\n", padL+pw/2, chartH-12, esc(c.xlabel))
	fmt.Fprintf(&b, `<text class="ylabel" x="18" y="%.1f" font-size="13" text-anchor="middle" transform="rotate(-90 18 %.1f)">%s</text>`+"\n", padT+ph/2, padT+ph/2, esc(c.ylabel))
	// Lines, clipped to the plot.
	fmt.Fprintf(&b, `<clipPath id="%s-clip"><rect x="%d" y="%d" width="%.0f" height="%.0f"/></clipPath>`+"\n", esc(c.id), padL-3, padT-3, pw+6, ph+6)
	for i, s := range c.series {
		if len(s.x) == 0 {
			continue
		}
		var pts []string
		for k := range s.x {
			if s.step && k > 0 {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", sx(s.x[k]), sy(s.y[k-1])))
			}
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", sx(s.x[k]), sy(s.y[k])))
		}
		dash := ""
		if s.dash {
			dash = ` stroke-dasharray="6 4"`
		}
		fmt.Fprintf(&b, `<g class="series" data-series="%s" clip-path="url(#%s-clip)"><title>%s</title>`, esc(s.name), esc(c.id), esc(s.name))
		if len(s.x) > 1 {
			fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2"%s points="%s"/>`, s.color, dash, strings.Join(pts, " "))
		}
		if len(s.x) <= 20 {
			for k := range s.x {
				fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`, sx(s.x[k]), sy(s.y[k]), s.color)
			}
		}
		b.WriteString("</g>\n")
		// Legend entry.
		ly := float64(padT + 8 + i*legendRowHeight)
		lx := float64(chartW - padR + 16)
		fmt.Fprintf(&b, `<g class="legend"><line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="3"%s/><text x="%.1f" y="%.1f" font-size="12"><title>%s</title>%s</text></g>`+"\n",
			lx, ly, lx+22, ly, s.color, dash, lx+28, ly+4, esc(s.name), esc(shorten(s.name, legendMaxRunes)))
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// bounds is the chart's data range, padded, with the fixed y range if set.
func (c *chart) bounds() (x0, x1, y0, y1 float64) {
	x0, x1, y0, y1 = math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, s := range c.series {
		for k := range s.x {
			x0, x1 = math.Min(x0, s.x[k]), math.Max(x1, s.x[k])
			y0, y1 = math.Min(y0, s.y[k]), math.Max(y1, s.y[k])
		}
	}
	if math.IsInf(x0, 1) {
		x0, x1, y0, y1 = 0, 1, 0, 1
	}
	if c.zero {
		y0, y1 = math.Min(y0, 0), math.Max(y1, 0)
	}
	if x1 <= x0 {
		x0, x1 = x0-1, x1+1
	}
	if c.ymax > c.ymin {
		return x0, x1, c.ymin, c.ymax
	}
	if y1 <= y0 {
		d := math.Max(math.Abs(y0)*0.1, 1e-9)
		y0, y1 = y0-d, y1+d
	}
	pad := (y1 - y0) * 0.05
	if !(c.zero && y0 == 0) {
		y0 -= pad
	}
	return x0, x1, y0, y1 + pad
}

// niceTicks returns about 0.6n to 1.4n tick values in [lo, hi] at a step of 1, 2 or
// 5 × 10^k, and the step.
func niceTicks(lo, hi float64, n int) (ticks []float64, step float64) {
	if !(hi > lo) {
		return []float64{lo}, 1
	}
	raw := 0.7 * (hi - lo) / float64(n) // at least about n ticks
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	step = 10 * p
	for _, m := range []float64{1, 2, 5} {
		if m*p >= raw {
			step = m * p
			break
		}
	}
	for i := math.Ceil(lo/step - 1e-9); i*step <= hi+step*1e-9; i++ {
		ticks = append(ticks, i*step)
	}
	return ticks, step
}

// tickLabel formats a tick with as many decimals as the tick step needs.
func tickLabel(v, step float64) string {
	if v == 0 {
		return "0"
	}
	if math.Abs(v) >= 1e5 || math.Abs(v) < 1e-4 {
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	dec := max(0, int(math.Ceil(-math.Log10(step)-1e-9)))
	return strconv.FormatFloat(v, 'f', dec, 64)
}

func esc(s string) string { return html.EscapeString(s) }

// shorten cuts s to n runes, keeping its end (the distinctive part of a path).
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return "…" + string(r[len(r)-n+1:])
}
