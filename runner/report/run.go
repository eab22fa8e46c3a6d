package report

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"
)

// The files a report reads, relative to the run directory.
const (
	configFile      = "config.json"
	metricsFile     = "metrics.jsonl"
	summaryFile     = "summary.json"
	ledgerFile      = "ledger.csv"
	privDiagnostics = "private/diagnostics.jsonl"
	privSummary     = "private/summary.json"
)

// ReleaseSafeFiles are the files a report reads without Options.Operator.
var ReleaseSafeFiles = []string{configFile, metricsFile, summaryFile, ledgerFile}

// Curve is one quantity of a run against an x value (the step of
// metrics.jsonl, 0-based, unless XName says otherwise).
type Curve struct {
	XName, YName string
	X, Y         []float64
}

func (c *Curve) add(x, y float64) { c.X, c.Y = append(c.X, x), append(c.Y, y) }

// Len is the number of points.
func (c *Curve) Len() int { return len(c.X) }

// Group is one budget group of a personalized-DP run's ledger: the
// examples with the same budget (ε_i, δ_i), their ε charged per round and
// spent in total (the largest over the group's examples).
type Group struct {
	Epsilon, Delta float64
	Examples       int
	Rounds         []float64 // ε charged in round r (max over the group)
	Spent          float64
}

// Run is what a report shows of one run directory.
type Run struct {
	Dir, Label string
	// Config and Summary are config.json and summary.json as stored (Summary
	// nil while the run has not finished).
	Config, Summary map[string]any
	Accuracy        Curve // test_accuracy records
	Epsilon         Curve // ε so far (pdp-*: the ledger's largest spend)
	F               Curve // trim level F
	PassRate        Curve // PTR: fraction of tests passed so far
	PassWindow      Curve // PTR: fraction passed over the last passWindow tests
	Groups          []Group
	// Operator-only (nil / empty without Options.Operator).
	Operator      bool
	Private       map[string]any // private/summary.json
	Loss, Batch   Curve
	Margin, Noisy Curve // PTR's Δ and Δ̂
}

// passWindow is the window of the windowed PTR pass rate.
const passWindow = 50

// LoadError is a run directory that cannot be reported: missing, not a run,
// or with an unreadable file. Its message is one line.
type LoadError struct {
	Dir string
	Err error
}

func (e *LoadError) Error() string { return e.Dir + ": " + e.Err.Error() }
func (e *LoadError) Unwrap() error { return e.Err }

// Load reads the run directory dir. fsys is the directory itself (nil:
// os.DirFS(dir)); operator adds the operator-only files under private/.
func Load(dir string, fsys fs.FS, operator bool) (*Run, error) {
	if fsys == nil {
		st, err := os.Stat(dir)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, &LoadError{dir, errors.New("no such run directory")}
			}
			return nil, &LoadError{dir, err}
		}
		if !st.IsDir() {
			return nil, &LoadError{dir, errors.New("not a directory (want a run directory written by trainer train)")}
		}
		fsys = os.DirFS(dir)
	}
	r := &Run{Dir: dir, Operator: operator}
	fail := func(err error) (*Run, error) { return nil, &LoadError{dir, err} }
	var err error
	if r.Config, err = readObject(fsys, configFile); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fail(errors.New("not a run directory (no config.json)"))
		}
		return fail(err)
	}
	if _, ok := r.Config["method"].(string); !ok {
		return fail(errors.New("config.json names no method: not a run directory"))
	}
	if r.Summary, err = readObject(fsys, summaryFile); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fail(err)
	}
	if err := r.readMetrics(fsys); err != nil {
		return fail(err)
	}
	if strings.HasPrefix(r.Method(), "pdp-") {
		if err := r.readLedger(fsys); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fail(err)
		}
	}
	if operator {
		if r.Private, err = readObject(fsys, privSummary); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fail(err)
		}
		if err := r.readDiagnostics(fsys); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fail(err)
		}
	}
	return r, nil
}

// Method is the run's training method.
func (r *Run) Method() string { s, _ := r.Config["method"].(string); return s }

func readObject(fsys fs.FS, name string) (map[string]any, error) {
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if m == nil {
		return nil, fmt.Errorf("%s: not a JSON object", name)
	}
	return m, nil
}

// eachJSONL calls f with every record of the JSON-lines file name. A torn
// last line (a crashed run's) is skipped; any other bad line is an error.
func eachJSONL(fsys fs.FS, name string, f func(rec map[string]any) error) error {
	file, err := fsys.Open(name)
	if err != nil {
		return err
	}
	defer file.Close()
	data, err := io.ReadAll(file)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 1<<16), 1<<24)
	var lines [][]byte
	for sc.Scan() {
		if l := bytes.TrimSpace(sc.Bytes()); len(l) > 0 {
			lines = append(lines, append([]byte(nil), l...))
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	for i, l := range lines {
		var rec map[string]any
		if err := json.Unmarshal(l, &rec); err != nil || rec == nil {
			if i == len(lines)-1 && !bytes.HasSuffix(data, []byte("\n")) {
				break // torn last line
			}
			return fmt.Errorf("%s line %d: not a JSON object", name, i+1)
		}
		if err := f(rec); err != nil {
			return fmt.Errorf("%s line %d: %w", name, i+1, err)
		}
	}
	return nil
}

// num returns rec[key] as a finite number.
func num(rec map[string]any, key string) (float64, bool) {
	v, ok := rec[key].(float64)
	return v, ok && !math.IsNaN(v) && !math.IsInf(v, 0)
}

func (r *Run) readMetrics(fsys fs.FS) error {
	r.Accuracy = Curve{XName: "step", YName: "test_accuracy"}
	r.Epsilon = Curve{XName: "step", YName: "epsilon"}
	r.F = Curve{XName: "step", YName: "f"}
	r.PassRate = Curve{XName: "step", YName: "ptr_pass_rate"}
	r.PassWindow = Curve{XName: "step", YName: fmt.Sprintf("ptr_pass_rate_last_%d", passWindow)}
	var tests, passed int
	var recent []bool
	err := eachJSONL(fsys, metricsFile, func(rec map[string]any) error {
		step, ok := num(rec, "step")
		if !ok {
			return errors.New(`no "step"`)
		}
		if a, ok := num(rec, "test_accuracy"); ok {
			r.Accuracy.add(step, a)
		}
		if e, ok := num(rec, "epsilon"); ok {
			r.Epsilon.add(step, e)
		} else if e, ok := num(rec, "epsilon_spent_max"); ok {
			r.Epsilon.add(step, e)
		}
		if f, ok := num(rec, "f"); ok {
			r.F.add(step, f)
		}
		if b, ok := rec["branch"].(string); ok && b != "" {
			// The published bit: "-" passed (TSUM released), "+" failed.
			if b != "+" && b != "-" {
				return fmt.Errorf("PTR outcome %q (want + or -)", b)
			}
			tests++
			pass := b == "-"
			if pass {
				passed++
			}
			recent = append(recent, pass)
			if len(recent) > passWindow {
				recent = recent[1:]
			}
			r.PassRate.add(step, float64(passed)/float64(tests))
			k := 0
			for _, p := range recent {
				if p {
					k++
				}
			}
			r.PassWindow.add(step, float64(k)/float64(len(recent)))
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return errors.New("no metrics.jsonl: the run has not started")
	}
	if err != nil {
		return err
	}
	// The final evaluation (summary.json) ends the accuracy curve of the
	// SGD family; a personalized run's summary accuracy may be an
	// ensemble's, which is not a point of the curve.
	if a, ok := num(r.Summary, "test_accuracy"); ok && !strings.HasPrefix(r.Method(), "pdp-") {
		if steps, ok := num(r.Summary, "steps"); ok && steps > 0 {
			if n := r.Accuracy.Len(); n == 0 || r.Accuracy.X[n-1] < steps-1 {
				r.Accuracy.add(steps-1, a)
			}
		}
	}
	return nil
}

func (r *Run) readDiagnostics(fsys fs.FS) error {
	r.Loss = Curve{XName: "step", YName: "loss"}
	r.Batch = Curve{XName: "step", YName: "batch_size"}
	r.Margin = Curve{XName: "step", YName: "ptr_delta"}
	r.Noisy = Curve{XName: "step", YName: "ptr_delta_hat"}
	return eachJSONL(fsys, privDiagnostics, func(rec map[string]any) error {
		step, ok := num(rec, "step")
		if !ok {
			return errors.New(`no "step"`)
		}
		if v, ok := num(rec, "loss"); ok {
			r.Loss.add(step, v)
		}
		if v, ok := num(rec, "batch_size"); ok {
			r.Batch.add(step, v)
		}
		if _, ok := rec["branch"]; ok {
			d, _ := num(rec, "delta") // omitted when 0
			r.Margin.add(step, d)
			dh, _ := num(rec, "delta_hat")
			r.Noisy.add(step, dh)
		}
		return nil
	})
}

// readLedger groups ledger.csv (index, epsilon, delta, round_1…round_k,
// spent, unused, retired) by budget (ε_i, δ_i).
func (r *Run) readLedger(fsys fs.FS) error {
	f, err := fsys.Open(ledgerFile)
	if err != nil {
		return err
	}
	defer f.Close()
	cr := csv.NewReader(bufio.NewReader(f))
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err != nil {
		return fmt.Errorf("%s: %w", ledgerFile, err)
	}
	col := map[string]int{}
	var rounds []int
	for i, h := range head {
		col[h] = i
		if strings.HasPrefix(h, "round_") {
			rounds = append(rounds, i)
		}
	}
	for _, h := range []string{"epsilon", "delta", "spent"} {
		if _, ok := col[h]; !ok {
			return fmt.Errorf("%s: no column %q", ledgerFile, h)
		}
	}
	type key struct{ e, d float64 }
	groups := map[key]*Group{}
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("%s: %w", ledgerFile, err)
		}
		val := func(i int) (float64, error) {
			v, err := strconv.ParseFloat(rec[i], 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return 0, fmt.Errorf("%s line %d: %q in column %s is not a finite number", ledgerFile, line, rec[i], head[i])
			}
			return v, nil
		}
		e, err := val(col["epsilon"])
		if err != nil {
			return err
		}
		d, err := val(col["delta"])
		if err != nil {
			return err
		}
		g := groups[key{e, d}]
		if g == nil {
			g = &Group{Epsilon: e, Delta: d, Rounds: make([]float64, len(rounds))}
			groups[key{e, d}] = g
		}
		g.Examples++
		for k, i := range rounds {
			v, err := val(i)
			if err != nil {
				return err
			}
			g.Rounds[k] = math.Max(g.Rounds[k], v)
		}
		s, err := val(col["spent"])
		if err != nil {
			return err
		}
		g.Spent = math.Max(g.Spent, s)
	}
	for _, g := range groups {
		r.Groups = append(r.Groups, *g)
	}
	sort.Slice(r.Groups, func(i, j int) bool {
		a, b := r.Groups[i], r.Groups[j]
		return a.Epsilon < b.Epsilon || a.Epsilon == b.Epsilon && a.Delta < b.Delta
	})
	return nil
}

// labels gives each run a short distinct label: the directory's base name,
// or more of its path where base names repeat.
func labels(runs []*Run) {
	for depth := 1; depth < 64; depth++ {
		seen := map[string]int{}
		for _, r := range runs {
			r.Label = tail(r.Dir, depth)
			seen[r.Label]++
		}
		dup := false
		for _, n := range seen {
			dup = dup || n > 1
		}
		if !dup {
			return
		}
	}
	for i, r := range runs {
		r.Label = fmt.Sprintf("%d:%s", i+1, r.Dir)
	}
}

// tail is the last n elements of the cleaned path p.
func tail(p string, n int) string {
	parts := strings.Split(path.Clean(strings.ReplaceAll(p, "\\", "/")), "/")
	if n > len(parts) {
		n = len(parts)
	}
	return strings.Join(parts[len(parts)-n:], "/")
}
