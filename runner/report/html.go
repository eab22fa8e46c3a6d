package report

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// Options controls a report.
type Options struct {
	// Operator adds the operator-only values under private/ (training
	// loss, exact batch sizes, PTR's Δ and Δ̂, the full summary), labelled.
	Operator bool
}

// Report is the report of some runs (in the order given).
type Report struct {
	Runs []*Run
	Opt  Options
}

// New loads the run directories dirs.
func New(dirs []string, opt Options) (*Report, error) {
	if len(dirs) == 0 {
		return nil, fmt.Errorf("no run directory given")
	}
	rep := &Report{Opt: opt}
	for _, d := range dirs {
		r, err := Load(d, nil, opt.Operator)
		if err != nil {
			return nil, err
		}
		rep.Runs = append(rep.Runs, r)
	}
	labels(rep.Runs)
	return rep, nil
}

// color is run i's colour.
func color(i int) string { return palette[i%len(palette)] }

// charts are the report's charts, in page order.
func (rep *Report) charts() []chart {
	var out []chart
	perRun := func(id, title, ylabel string, get func(*Run) *Curve, step bool) chart {
		c := chart{id: id, title: title, xlabel: "step", ylabel: ylabel}
		for i, r := range rep.Runs {
			if cv := get(r); cv.Len() > 0 {
				c.series = append(c.series, series{name: r.Label, color: color(i), step: step, x: cv.X, y: cv.Y})
			}
		}
		return c
	}
	acc := perRun("accuracy", "Test accuracy", "test accuracy", func(r *Run) *Curve { return &r.Accuracy }, false)
	out = append(out, acc)
	eps := perRun("epsilon", "Privacy spent: ε at the run's δ (pdp-*: largest per-example spend)", "ε", func(r *Run) *Curve { return &r.Epsilon }, false)
	eps.zero = true
	out = append(out, eps)

	ptr := chart{id: "ptr-pass-rate", title: fmt.Sprintf("PTR pass rate (solid: so far; dashed: last %d tests)", passWindow), xlabel: "step", ylabel: "fraction of PTR tests passed", ymin: 0, ymax: 1}
	for i, r := range rep.Runs {
		if r.PassRate.Len() > 0 {
			ptr.series = append(ptr.series,
				series{name: r.Label, color: color(i), x: r.PassRate.X, y: r.PassRate.Y},
				series{name: r.Label + fmt.Sprintf(" (last %d)", passWindow), color: color(i), dash: true, x: r.PassWindow.X, y: r.PassWindow.Y})
		}
	}
	if len(ptr.series) > 0 {
		out = append(out, ptr)
	}
	if f := perRun("trim-level", "Trim level F", "F (examples trimmed per side)", func(r *Run) *Curve { return &r.F }, true); len(f.series) > 0 {
		f.zero = true
		out = append(out, f)
	}
	for i, r := range rep.Runs {
		if len(r.Groups) == 0 {
			continue
		}
		c := chart{id: fmt.Sprintf("pdp-spend-%d", i+1), title: "Per-group spend: " + r.Label, xlabel: "group budget ε_i", ylabel: "ε spent by the group", zero: true}
		bx, by := make([]float64, len(r.Groups)), make([]float64, len(r.Groups))
		for k, g := range r.Groups {
			bx[k], by[k] = g.Epsilon, g.Epsilon
		}
		c.series = append(c.series, series{name: "budget ε_i", color: "#7F7F7F", dash: true, x: bx, y: by})
		cum := make([]float64, len(r.Groups))
		for rd := range r.Groups[0].Rounds {
			y := make([]float64, len(r.Groups))
			for k, g := range r.Groups {
				cum[k] += g.Rounds[rd]
				y[k] = cum[k]
			}
			c.series = append(c.series, series{name: fmt.Sprintf("spent after round %d", rd+1), color: color(rd), x: bx, y: y})
		}
		out = append(out, c)
	}
	if rep.Opt.Operator {
		loss := perRun("operator-loss", "OPERATOR-ONLY: training loss (not privatized)", "mean training loss of the batch", func(r *Run) *Curve { return &r.Loss }, false)
		out = append(out, loss)
		out = append(out, perRun("operator-batch", "OPERATOR-ONLY: exact batch size (not privatized)", "examples in the batch", func(r *Run) *Curve { return &r.Batch }, false))
		m := chart{id: "operator-ptr-margin", title: "OPERATOR-ONLY: PTR safety margin Δ (solid) and noisy Δ̂ (dashed)", xlabel: "step", ylabel: "Δ, Δ̂"}
		for i, r := range rep.Runs {
			if r.Margin.Len() > 0 {
				m.series = append(m.series,
					series{name: r.Label + " Δ", color: color(i), x: r.Margin.X, y: r.Margin.Y},
					series{name: r.Label + " Δ̂", color: color(i), dash: true, x: r.Noisy.X, y: r.Noisy.Y})
			}
		}
		if len(m.series) > 0 {
			out = append(out, m)
		}
	}
	return out
}

const css = `body{font-family:-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;margin:24px auto;max-width:960px;color:#222;line-height:1.4}
h1{font-size:24px;margin:0 0 8px}h2{font-size:19px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}h3{font-size:15px;margin:16px 0 6px}
.release{background:#eef6ee;border:1px solid #9c9;padding:8px 12px}
.operator{background:#fde8e8;border:2px solid #c00;padding:10px 14px;font-weight:bold;color:#900}
table{border-collapse:collapse;font-size:13px;margin:6px 0}td,th{border:1px solid #ccc;padding:3px 7px;text-align:left;vertical-align:top}th{background:#f4f4f4}
td.num{text-align:right;font-variant-numeric:tabular-nums}.swatch{display:inline-block;width:14px;height:14px;border-radius:2px;vertical-align:middle}
.chart{display:block;margin:10px 0 4px;max-width:100%;height:auto;border:1px solid #eee}.note{font-size:13px;color:#555;margin:0 0 14px}
.guarantee{font-size:14px}code{font-size:12px}`

// HTML writes the report as one self-contained page.
func (rep *Report) HTML(w io.Writer) error {
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	fmt.Fprintf(&b, "<title>privtrain report: %s</title>\n<style>%s</style>\n</head>\n<body>\n", esc(rep.labelList()), css)
	if rep.Opt.Operator {
		b.WriteString(`<div class="operator" id="operator-only">OPERATOR-ONLY REPORT: DO NOT PUBLISH. This page shows values read from the runs' private/ directories (training loss, exact batch sizes, PTR's Δ and Δ̂, timings), which are not privatized. Their sections are marked OPERATOR-ONLY.</div>` + "\n")
	}
	fmt.Fprintf(&b, "<h1>privtrain run report</h1>\n")
	if !rep.Opt.Operator {
		fmt.Fprintf(&b, `<p class="release" id="release-safe">Built only from the runs' release-safe files (%s); nothing under private/ was read.</p>`+"\n", strings.Join(ReleaseSafeFiles, ", "))
	}
	rep.overview(&b)
	b.WriteString("<h2>Curves</h2>\n")
	for _, c := range rep.charts() {
		b.WriteString(c.svg())
		if missing := rep.missing(c); missing != "" {
			fmt.Fprintf(&b, "<p class=\"note\">%s</p>\n", esc(missing))
		}
	}
	for i, r := range rep.Runs {
		rep.runSection(&b, i, r)
	}
	b.WriteString("</body>\n</html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func (rep *Report) labelList() string {
	var l []string
	for _, r := range rep.Runs {
		l = append(l, r.Label)
	}
	return strings.Join(l, ", ")
}

// missing names the runs a per-run chart has no data for.
func (rep *Report) missing(c chart) string {
	var why string
	switch c.id {
	case "accuracy":
		why = "no test accuracy recorded (no evaluation yet: the run has not finished and eval_every is unset or −1)"
	case "epsilon":
		why = "no ε recorded (a non-private method)"
	case "operator-loss", "operator-batch":
		why = "no private/diagnostics.jsonl"
	default:
		return ""
	}
	have := map[string]bool{}
	for _, s := range c.series {
		have[s.name] = true
	}
	var none []string
	for _, r := range rep.Runs {
		if !have[r.Label] {
			none = append(none, r.Label)
		}
	}
	if len(none) == 0 {
		return ""
	}
	return strings.Join(none, ", ") + ": " + why + "."
}

func (rep *Report) overview(b *strings.Builder) {
	b.WriteString("<h2>Runs</h2>\n<table id=\"runs\">\n<tr><th></th><th>run</th><th>method</th><th>dataset / model</th><th>steps</th><th>stopped by</th><th>test accuracy</th><th>ε</th><th>δ</th><th>accountant</th><th>noise</th></tr>\n")
	for i, r := range rep.Runs {
		s := r.Summary
		fmt.Fprintf(b, `<tr class="run-row"><td><span class="swatch" style="background:%s"></span></td><td title="%s"><a href="#run-%d">%s</a></td><td>%s</td><td>%s / %s</td><td class="num">%s</td><td>%s</td><td class="num">%s</td><td class="num">%s</td><td class="num">%s</td><td>%s</td><td>%s</td></tr>`+"\n",
			color(i), esc(r.Dir), i+1, esc(r.Label), esc(r.Method()), esc(str(r.Config["dataset"])), esc(str(r.Config["model"])),
			esc(str(get(s, "steps"))), esc(orDash(str(get(s, "stopped_by")), "running")), esc(fmtNum(get(s, "test_accuracy"))),
			esc(fmtNum(get(s, "epsilon"))), esc(fmtNum(get(s, "delta"))), esc(accountant(s)), esc(noiseMode(r)))
	}
	b.WriteString("</table>\n")
}

// accountant names the accountant of the summary's ε (a personalized run
// records it in its guarantee).
func accountant(s map[string]any) string {
	if a := str(get(s, "accountant")); a != "" {
		return a
	}
	pdp, _ := get(s, "pdp").(map[string]any)
	g, _ := get(pdp, "guarantee").(map[string]any)
	if a := str(get(g, "accounting")); a != "" {
		return a + " (per example)"
	}
	return ""
}

// noiseMode is how the run's privacy noise was drawn, as recorded.
func noiseMode(r *Run) string {
	m := r.Method()
	if m == "nonprivate" || m == "nonprivate-robust" {
		return "none (not private)"
	}
	if r.Summary == nil {
		if sec, _ := r.Config["secure_noise"].(bool); sec {
			return "secure (configured)"
		}
		return "floating point (configured)"
	}
	if sec, _ := r.Summary["secure_noise"].(bool); sec {
		return "secure: exact integer sums, discrete noise"
	}
	return "floating point"
}

// guaranteeKeys are the summary fields of the guarantee, in order.
var guaranteeKeys = []string{"epsilon", "delta", "accountant", "conversion", "order", "epsilon_optimistic", "epsilon_optimistic_omitted", "pld_interval",
	"bounds", "bound_at_order", "unproven", "secure_noise", "privacy_randomness", "guarantee", "recertified"}

// runSection writes run i's guarantee, summary, budget groups and
// configuration (and, with Operator, the fields of private/summary.json
// that the public summary leaves out).
func (rep *Report) runSection(b *strings.Builder, i int, r *Run) {
	fmt.Fprintf(b, "<section class=\"run\" id=\"run-%d\">\n<h2><span class=\"swatch\" style=\"background:%s\"></span> %s</h2>\n<p class=\"note\">directory <code>%s</code></p>\n",
		i+1, color(i), esc(r.Label), esc(r.Dir))
	b.WriteString("<h3>Guarantee</h3>\n")
	if r.Summary == nil {
		b.WriteString("<p class=\"guarantee\">No summary.json: the run has not finished (its configuration and curves so far are shown).</p>\n")
	} else {
		b.WriteString("<table class=\"guarantee\">\n")
		fmt.Fprintf(b, "<tr><th>noise</th><td>%s</td></tr>\n", esc(noiseMode(r)))
		shown := map[string]bool{}
		for _, k := range guaranteeKeys {
			if v, ok := r.Summary[k]; ok {
				shown[k] = true
				fmt.Fprintf(b, "<tr><th>%s</th><td>%s</td></tr>\n", esc(k), esc(value(v)))
			}
		}
		for _, k := range sortedKeys(r.Summary) { // fields of newer versions (e.g. a noise mode)
			if !shown[k] && strings.Contains(k, "noise") {
				shown[k] = true
				fmt.Fprintf(b, "<tr><th>%s</th><td>%s</td></tr>\n", esc(k), esc(value(r.Summary[k])))
			}
		}
		b.WriteString("</table>\n<h3>Summary</h3>\n<table class=\"summary\">\n")
		for _, k := range sortedKeys(r.Summary) {
			if !shown[k] && k != "pdp" {
				fmt.Fprintf(b, "<tr><th>%s</th><td>%s</td></tr>\n", esc(k), esc(value(r.Summary[k])))
			}
		}
		b.WriteString("</table>\n")
		if pdp, ok := r.Summary["pdp"].(map[string]any); ok {
			pdpRounds(b, pdp)
		}
	}
	if len(r.Groups) > 0 {
		b.WriteString("<h3>Budget groups (ledger.csv)</h3>\n<table class=\"groups\"><tr><th>budget ε_i</th><th>δ_i</th><th>examples</th>")
		for k := range r.Groups[0].Rounds {
			fmt.Fprintf(b, "<th>round %d</th>", k+1)
		}
		b.WriteString("<th>spent</th></tr>\n")
		for _, g := range r.Groups {
			fmt.Fprintf(b, "<tr><td class=\"num\">%s</td><td class=\"num\">%s</td><td class=\"num\">%d</td>", fmtF(g.Epsilon), fmtF(g.Delta), g.Examples)
			for _, v := range g.Rounds {
				fmt.Fprintf(b, "<td class=\"num\">%s</td>", fmtF(v))
			}
			fmt.Fprintf(b, "<td class=\"num\">%s</td></tr>\n", fmtF(g.Spent))
		}
		b.WriteString("</table>\n")
	}
	b.WriteString("<h3>Configuration (config.json)</h3>\n<table class=\"config\">\n")
	flat := map[string]any{}
	flatten("", r.Config, flat)
	for _, k := range sortedKeys(flat) {
		fmt.Fprintf(b, "<tr><th>%s</th><td>%s</td></tr>\n", esc(k), esc(value(flat[k])))
	}
	b.WriteString("</table>\n")
	if rep.Opt.Operator {
		b.WriteString("<h3>OPERATOR-ONLY: private/summary.json</h3>\n")
		if r.Private == nil {
			b.WriteString("<p class=\"note\">no private/summary.json</p>\n")
		} else {
			b.WriteString("<table class=\"operator-summary\">\n")
			for _, k := range sortedKeys(r.Private) {
				if _, public := r.Summary[k]; !public && k != "pdp" {
					fmt.Fprintf(b, "<tr><th>%s</th><td>%s</td></tr>\n", esc(k), esc(value(r.Private[k])))
				}
			}
			b.WriteString("</table>\n")
		}
	}
	b.WriteString("</section>\n")
}

// pdpRounds writes a personalized run's rounds (summary.json "pdp").
func pdpRounds(b *strings.Builder, pdp map[string]any) {
	rounds, _ := pdp["rounds"].([]any)
	if len(rounds) == 0 {
		return
	}
	cols := []string{"round", "tau", "sigma", "steps", "eligible", "participants", "test_accuracy"}
	b.WriteString("<h3>Personalized-DP rounds</h3>\n<table class=\"pdp-rounds\"><tr>")
	for _, c := range cols {
		fmt.Fprintf(b, "<th>%s</th>", c)
	}
	b.WriteString("</tr>\n")
	for _, x := range rounds {
		m, _ := x.(map[string]any)
		b.WriteString("<tr>")
		for _, c := range cols {
			fmt.Fprintf(b, "<td class=\"num\">%s</td>", esc(fmtNum(m[c])))
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</table>\n")
	if s, ok := pdp["skipped"].(string); ok && s != "" {
		fmt.Fprintf(b, "<p class=\"note\">skipped: %s</p>\n", esc(s))
	}
}

func get(m map[string]any, k string) any {
	if m == nil {
		return nil
	}
	return m[k]
}

func str(v any) string {
	if v == nil {
		return ""
	}
	if s, ok := v.(string); ok {
		return s
	}
	return value(v)
}

func orDash(s, none string) string {
	if s == "" {
		return none
	}
	return s
}

// fmtNum formats a number with 4 significant digits ("" for none).
func fmtNum(v any) string {
	f, ok := v.(float64)
	if !ok {
		return str(v)
	}
	return fmtF(f)
}

func fmtF(f float64) string {
	if f == float64(int64(f)) && f < 1e15 && f > -1e15 {
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'g', 4, 64)
}

// value is a JSON value as text: strings bare, numbers in full, others JSON.
func value(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case []any:
		var parts []string
		for _, e := range x {
			parts = append(parts, value(e))
		}
		return strings.Join(parts, ", ")
	}
	data, _ := json.Marshal(v)
	return string(data)
}

func flatten(prefix string, m map[string]any, out map[string]any) {
	for k, v := range m {
		if sub, ok := v.(map[string]any); ok && len(sub) > 0 {
			flatten(prefix+k+".", sub, out)
			continue
		}
		out[prefix+k] = v
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
