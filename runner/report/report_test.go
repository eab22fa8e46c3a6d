package report

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/privtrain/privtrain/runner"
)

// shortRun trains a few steps of logistic regression on MNIST with batch
// 20000, so that an epoch is 3 steps and the default evaluation (every
// epoch) gives an accuracy curve.
func shortRun(t *testing.T, method, out string, steps int) {
	t.Helper()
	c := runner.TrainDefaults()
	c.Method, c.Model, c.Dataset, c.Preset = method, "logreg", "mnist", ""
	c.TargetEpsilon, c.Steps, c.Epochs, c.CheckpointEvery = 0, steps, 0, 0
	c.BatchSize, c.LR, c.Sigma, c.ClipNorm = 20000, 0.5, 1.1, 1
	if method == "tsgd-ptr" {
		c.Tau, c.TrimFraction, c.DynamicF = 0.5, 0.25, true
	} else {
		c.DynamicF = false
	}
	c.Out = out
	if _, err := runner.Train(context.Background(), c, runner.Options{}); err != nil {
		t.Fatal(err)
	}
}

// records reads a JSON-lines file independently of the package.
func records(t *testing.T, path string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

func readObj(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// recordingFS records the files opened through it.
type recordingFS struct {
	fs.FS
	mu     sync.Mutex
	opened []string
}

func (r *recordingFS) Open(name string) (fs.File, error) {
	r.mu.Lock()
	r.opened = append(r.opened, name)
	r.mu.Unlock()
	return r.FS.Open(name)
}

var (
	trainOnce sync.Once
	trainDir  string
)

// runs trains the two short runs the tests share: TSGD+PTR (9 steps) and
// DP-SGD (6 steps).
func runs(t *testing.T) (ptr, dp string) {
	t.Helper()
	trainOnce.Do(func() {
		d, err := os.MkdirTemp("", "report-test-")
		if err != nil {
			t.Fatal(err)
		}
		shortRun(t, "tsgd-ptr", filepath.Join(d, "ptr"), 9)
		shortRun(t, "dpsgd", filepath.Join(d, "dp"), 6)
		trainDir = d
	})
	if trainDir == "" {
		t.Fatal("training the short runs failed")
	}
	return filepath.Join(trainDir, "ptr"), filepath.Join(trainDir, "dp")
}

func TestMain(m *testing.M) {
	code := m.Run()
	if trainDir != "" {
		os.RemoveAll(trainDir)
	}
	os.Exit(code)
}

// TestLoadReadsOnlyReleaseSafeFiles: without Operator no file under private/
// is opened; with it, both private files are.
func TestLoadReadsOnlyReleaseSafeFiles(t *testing.T) {
	ptr, _ := runs(t)
	for _, operator := range []bool{false, true} {
		rec := &recordingFS{FS: os.DirFS(ptr)}
		if _, err := Load(ptr, rec, operator); err != nil {
			t.Fatal(err)
		}
		private := map[string]bool{}
		for _, f := range rec.opened {
			if strings.HasPrefix(f, "private/") {
				private[f] = true
			} else if !contains(ReleaseSafeFiles, f) {
				t.Errorf("operator=%v: opened %s, not a release-safe file", operator, f)
			}
		}
		if want := map[string]bool{}; !operator && len(private) != 0 {
			t.Errorf("without --operator opened %v", private)
		} else if operator {
			want[privDiagnostics], want[privSummary] = true, true
			if len(private) != 2 || !private[privDiagnostics] || !private[privSummary] {
				t.Errorf("with --operator opened %v, want %v", private, want)
			}
		}
	}
}

func contains(l []string, s string) bool {
	for _, v := range l {
		if v == s {
			return true
		}
	}
	return false
}

// TestCurvesMatchTheRunFiles checks the loaded curves against metrics.jsonl
// and summary.json read independently: ε per step (the last one is the
// summary's ε), the accuracy at every epoch (steps 2, 5, 8) and at the end,
// the PTR pass rate (its last value is the summary's rate) and F.
func TestCurvesMatchTheRunFiles(t *testing.T) {
	ptr, dp := runs(t)
	for _, dir := range []string{ptr, dp} {
		r, err := Load(dir, nil, false)
		if err != nil {
			t.Fatal(err)
		}
		sum := readObj(t, filepath.Join(dir, "summary.json"))
		var eps, acc, accSteps, fs []float64
		var tests, passed int
		for _, m := range records(t, filepath.Join(dir, "metrics.jsonl")) {
			if v, ok := m["epsilon"].(float64); ok {
				eps = append(eps, v)
			}
			if v, ok := m["test_accuracy"].(float64); ok {
				acc, accSteps = append(acc, v), append(accSteps, m["step"].(float64))
			}
			if v, ok := m["f"].(float64); ok {
				fs = append(fs, v)
			}
			switch m["branch"] {
			case "-":
				passed++
				tests++
			case "+":
				tests++
			}
		}
		steps := sum["steps"].(float64)
		if len(eps) != int(steps) || r.Epsilon.Len() != len(eps) {
			t.Fatalf("%s: %d ε records, curve %d, want %v", dir, len(eps), r.Epsilon.Len(), steps)
		}
		for i, v := range eps {
			if r.Epsilon.Y[i] != v || r.Epsilon.X[i] != float64(i) {
				t.Errorf("%s: ε point %d = (%v, %v), want (%d, %v)", dir, i, r.Epsilon.X[i], r.Epsilon.Y[i], i, v)
			}
		}
		// rdp: the same accountant, so the same ε; pld: the per-step ε is a
		// certified bound at epsilon_steps ≥ step+1 steps, so at least the
		// summary's and close to it.
		last, want := eps[len(eps)-1], sum["epsilon"].(float64)
		switch sum["accountant"] {
		case "rdp":
			if math.Abs(last-want) > 1e-9*want {
				t.Errorf("%s: last step ε %v, summary ε %v", dir, last, want)
			}
		case "pld":
			if last < want*(1-1e-12) || last > want*(1+1e-3) {
				t.Errorf("%s: last step ε %v, summary ε %v", dir, last, want)
			}
		default:
			t.Errorf("%s: accountant %v", dir, sum["accountant"])
		}
		// Every epoch (3 steps), then the final evaluation unless it fell on
		// an epoch's end.
		wantSteps := []float64{2, 5, 8}[:int(steps)/3]
		if !equal(accSteps, wantSteps) {
			t.Errorf("%s: evaluated after steps %v, want %v", dir, accSteps, wantSteps)
		}
		if accSteps[len(accSteps)-1] != steps-1 {
			accSteps, acc = append(accSteps, steps-1), append(acc, sum["test_accuracy"].(float64))
		}
		if !equal(r.Accuracy.X, accSteps) || !equal(r.Accuracy.Y, acc) {
			t.Errorf("%s: accuracy curve %v %v, want %v %v", dir, r.Accuracy.X, r.Accuracy.Y, accSteps, acc)
		}
		if r.Method() != "tsgd-ptr" {
			if r.PassRate.Len() != 0 || r.F.Len() != 0 {
				t.Errorf("%s: PTR curves for %s", dir, r.Method())
			}
			continue
		}
		if r.PassRate.Len() != tests || tests != int(steps) {
			t.Fatalf("pass-rate points %d, PTR tests %d, steps %v", r.PassRate.Len(), tests, steps)
		}
		rate := float64(passed) / float64(tests)
		if got := r.PassRate.Y[tests-1]; got != rate {
			t.Errorf("final pass rate %v, want %v", got, rate)
		}
		if s, ok := sum["ptr_pass_rate"].(float64); ok && s != rate || !ok && rate != 0 {
			t.Errorf("final pass rate %v, summary %v", rate, sum["ptr_pass_rate"])
		}
		if !equal(r.F.Y, fs) {
			t.Errorf("F curve %v, metrics %v", r.F.Y, fs)
		}
	}
}

func equal(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// polylinePoints returns the number of points of the line of series name in
// the chart with the given id.
func polylinePoints(t *testing.T, page, id, name string) int {
	t.Helper()
	i := strings.Index(page, `id="`+id+`"`)
	if i < 0 {
		t.Fatalf("no chart %s", id)
	}
	svg := page[i : i+strings.Index(page[i:], "</svg>")]
	re := regexp.MustCompile(`<g class="series" data-series="` + regexp.QuoteMeta(name) + `"[^>]*><title>[^<]*</title><polyline [^>]*points="([^"]*)"`)
	m := re.FindStringSubmatch(svg)
	if m == nil {
		t.Fatalf("chart %s has no line %q", id, name)
	}
	return len(strings.Fields(m[1]))
}

// TestHTMLReleaseSafe builds the page of both runs and checks its charts,
// series and legend, and that no operator-only value is on it without
// --operator (and that they are, labelled, with it).
func TestHTMLReleaseSafe(t *testing.T) {
	ptr, dp := runs(t)
	private := readObj(t, filepath.Join(ptr, "private", "summary.json"))
	loss := strconv.FormatFloat(private["final_train_loss"].(float64), 'g', -1, 64)
	examples := strconv.FormatFloat(private["examples_processed"].(float64), 'g', -1, 64)
	for _, operator := range []bool{false, true} {
		rep, err := New([]string{ptr, dp}, Options{Operator: operator})
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := rep.HTML(&b); err != nil {
			t.Fatal(err)
		}
		page := b.String()
		if !strings.HasPrefix(page, "<!DOCTYPE html>") || strings.Contains(page, "<script") || strings.Contains(page, "http://") && !strings.Contains(page, `xmlns="http://www.w3.org/2000/svg"`) {
			t.Error("not a self-contained page")
		}
		if n := strings.Count(page, `xmlns="http://www.w3.org/2000/svg"`); n != strings.Count(page, "<svg") {
			t.Errorf("inline svg without namespace")
		}
		// ε of every step: 9 and 6 points; PTR pass rate and F: PTR only.
		if got := polylinePoints(t, page, "epsilon", "ptr"); got != 9 {
			t.Errorf("ε line of ptr has %d points, want 9", got)
		}
		if got := polylinePoints(t, page, "epsilon", "dp"); got != 6 {
			t.Errorf("ε line of dp has %d points, want 6", got)
		}
		if got := polylinePoints(t, page, "accuracy", "ptr"); got != 3 {
			t.Errorf("accuracy line of ptr has %d points, want 3", got)
		}
		if got := polylinePoints(t, page, "ptr-pass-rate", "ptr"); got != 9 {
			t.Errorf("pass-rate line has %d points, want 9", got)
		}
		if strings.Contains(page, `data-series="dp (last`) {
			t.Error("pass rate drawn for the DP-SGD run")
		}
		if c := strings.Count(page, `<g class="legend">`); c < 2+2+1 {
			t.Errorf("%d legend entries", c)
		}
		for _, want := range []string{`id="trim-level"`, `<tr class="run-row">`, "tsgd-ptr", "dpsgd", "privacy_randomness", "pld"} {
			if !strings.Contains(page, want) {
				t.Errorf("page lacks %q", want)
			}
		}
		opOnly := []string{`id="operator-only"`, "OPERATOR-ONLY", `id="operator-loss"`, `id="operator-batch"`, `id="operator-ptr-margin"`, "final_train_loss", "examples_processed", "wall_seconds", loss, examples}
		for _, s := range opOnly {
			if has := strings.Contains(page, s); has != operator {
				t.Errorf("operator=%v: page contains %q: %v", operator, s, has)
			}
		}
		if !operator && !strings.Contains(page, `id="release-safe"`) {
			t.Error("no release-safe note")
		}
		if operator && strings.Index(page, `id="operator-only"`) > strings.Index(page, "<h1>") {
			t.Error("the operator-only warning is not at the top")
		}
	}
}

// TestCSV checks the exported curves against the loaded ones, and that
// operator-only curves are exported only with --operator.
func TestCSV(t *testing.T) {
	ptr, dp := runs(t)
	for _, operator := range []bool{false, true} {
		rep, err := New([]string{ptr, dp}, Options{Operator: operator})
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		files, err := rep.WriteCSV(dir)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"ptr/test_accuracy.csv", "ptr/epsilon.csv", "ptr/ptr_pass_rate.csv", "ptr/ptr_pass_rate_last_50.csv", "ptr/f.csv", "dp/test_accuracy.csv", "dp/epsilon.csv"}
		if operator {
			want = append(want[:5], "ptr/operator_loss.csv", "ptr/operator_batch_size.csv", "ptr/operator_ptr_delta.csv", "ptr/operator_ptr_delta_hat.csv",
				"dp/test_accuracy.csv", "dp/epsilon.csv", "dp/operator_loss.csv", "dp/operator_batch_size.csv")
		}
		var got []string
		for _, f := range files {
			rel, _ := filepath.Rel(dir, f)
			got = append(got, filepath.ToSlash(rel))
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("operator=%v: files %v, want %v", operator, got, want)
		}
		r := rep.Runs[0]
		for _, c := range []struct {
			file  string
			curve Curve
		}{{"test_accuracy.csv", r.Accuracy}, {"epsilon.csv", r.Epsilon}, {"ptr_pass_rate.csv", r.PassRate}, {"f.csv", r.F}} {
			f, err := os.Open(filepath.Join(dir, "ptr", c.file))
			if err != nil {
				t.Fatal(err)
			}
			rows, err := csv.NewReader(f).ReadAll()
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			if rows[0][0] != "step" || rows[0][1] != c.curve.YName || len(rows)-1 != c.curve.Len() || c.curve.Len() == 0 {
				t.Fatalf("%s: header %v, %d rows, curve %d points", c.file, rows[0], len(rows)-1, c.curve.Len())
			}
			for i, row := range rows[1:] {
				x, _ := strconv.ParseFloat(row[0], 64)
				y, _ := strconv.ParseFloat(row[1], 64)
				if x != c.curve.X[i] || y != c.curve.Y[i] {
					t.Errorf("%s row %d: %v, want %v %v", c.file, i+1, row, c.curve.X[i], c.curve.Y[i])
				}
			}
		}
	}
}

// TestPDPReport: a short personalized run (2 rounds) gives the ledger's
// budget groups (checked against ledger.csv read independently), the
// per-group spend chart and its CSV.
func TestPDPReport(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a personalized run")
	}
	c := runner.TrainDefaults()
	c.Method, c.Model, c.Dataset, c.Preset = "pdp-sgd", "logreg", "mnist", ""
	c.TargetEpsilon, c.DynamicF, c.BatchSize, c.LR = 0, false, 2000, 0.5
	c.PDP.Rounds, c.PDP.RoundEpochs, c.PDP.BudgetGroups = 2, 0.1, 4
	c.Out = filepath.Join(t.TempDir(), "pdp")
	if _, err := runner.Train(context.Background(), c, runner.Options{}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(c.Out, "ledger.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	// Independent grouping: budget → (count, spent).
	type agg struct {
		n     int
		spent float64
	}
	want := map[string]*agg{}
	for _, row := range rows[1:] {
		a := want[row[1]]
		if a == nil {
			a = &agg{}
			want[row[1]] = a
		}
		s, _ := strconv.ParseFloat(row[len(row)-3], 64)
		a.n++
		a.spent = math.Max(a.spent, s)
	}
	r, err := Load(c.Out, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Groups) != len(want) || len(want) != 4 {
		t.Fatalf("%d groups, ledger has %d", len(r.Groups), len(want))
	}
	total := 0
	for _, g := range r.Groups {
		a := want[strconv.FormatFloat(g.Epsilon, 'g', -1, 64)]
		if a == nil || a.n != g.Examples || a.spent != g.Spent {
			t.Errorf("group ε_i %v: %d examples spent %v, ledger %+v", g.Epsilon, g.Examples, g.Spent, a)
		}
		if sum := g.Rounds[0] + g.Rounds[1]; math.Abs(sum-g.Spent) > 1e-12 || g.Spent > g.Epsilon {
			t.Errorf("group ε_i %v: rounds %v spent %v", g.Epsilon, g.Rounds, g.Spent)
		}
		total += g.Examples
	}
	if total != 60000 {
		t.Errorf("groups hold %d examples, want 60000", total)
	}
	if r.Epsilon.Len() == 0 || r.Accuracy.Len() != 2 {
		t.Errorf("ε points %d, accuracy points %d (want one per round)", r.Epsilon.Len(), r.Accuracy.Len())
	}
	rep := &Report{Runs: []*Run{r}}
	labels(rep.Runs)
	var b bytes.Buffer
	if err := rep.HTML(&b); err != nil {
		t.Fatal(err)
	}
	if got := polylinePoints(t, b.String(), "pdp-spend-1", "spent after round 2"); got != 4 {
		t.Errorf("spend line has %d points, want 4 groups", got)
	}
	if !strings.Contains(b.String(), "Personalized-DP rounds") {
		t.Error("no rounds table")
	}
	dir := t.TempDir()
	if _, err := rep.WriteCSV(dir); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "pdp", "pdp_group_spend.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(string(data)), "\n"); len(lines) != 5 || lines[0] != "epsilon,delta,examples,round_1,round_2,spent" {
		t.Errorf("pdp_group_spend.csv:\n%s", data)
	}
}

// TestLoadErrors: a missing directory, a file, a directory without a run
// and a corrupt metrics line are one-line errors naming the directory; a
// torn last line (a crashed run) is skipped.
func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, []byte("x"), 0o644)
	run := func(name, metrics string) string {
		d := filepath.Join(dir, name)
		os.MkdirAll(d, 0o755)
		os.WriteFile(filepath.Join(d, "config.json"), []byte(`{"method":"dpsgd"}`), 0o644)
		os.WriteFile(filepath.Join(d, "metrics.jsonl"), []byte(metrics), 0o644)
		return d
	}
	torn := run("torn", "{\"step\":0,\"epsilon\":0.5}\n{\"step\":1,\"epsilon\":0.6}\n{\"step\":2,\"eps")
	bad := run("bad", "{\"step\":0,\"epsilon\":0.5}\nnot json\n{\"step\":2,\"epsilon\":0.7}\n")
	nostep := run("nostep", "{\"epsilon\":0.5}\n")
	for _, c := range []struct{ dir, want string }{
		{filepath.Join(dir, "missing"), "no such run directory"},
		{file, "not a directory"},
		{dir, "not a run directory (no config.json)"},
		{bad, "metrics.jsonl line 2: not a JSON object"},
		{nostep, `metrics.jsonl line 1: no "step"`},
	} {
		_, err := Load(c.dir, nil, false)
		var le *LoadError
		if !errors.As(err, &le) || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), c.dir+": ") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line with %q", c.dir, err, c.want)
		}
	}
	r, err := Load(torn, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if !equal(r.Epsilon.Y, []float64{0.5, 0.6}) {
		t.Errorf("torn log: ε %v", r.Epsilon.Y)
	}
	if r.Summary != nil {
		t.Error("summary of an unfinished run")
	}
}

func TestNiceTicks(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		n      int
		want   string
	}{
		{0, 1, 6, "0 0.2 0.4 0.6 0.8 1.0"},
		{0.714, 0.841, 6, "0.72 0.74 0.76 0.78 0.80 0.82 0.84"},
		{0, 120, 8, "0 20 40 60 80 100 120"},
		{-3, 7, 6, "-2 0 2 4 6"},
		{2, 2, 6, "2"},
	} {
		ticks, step := niceTicks(c.lo, c.hi, c.n)
		var l []string
		for _, v := range ticks {
			l = append(l, tickLabel(v, step))
		}
		if got := strings.Join(l, " "); got != c.want {
			t.Errorf("[%v, %v]: %q, want %q", c.lo, c.hi, got, c.want)
		}
	}
}

func TestLabels(t *testing.T) {
	rs := []*Run{{Dir: "a/x/run"}, {Dir: "b/x/run"}, {Dir: "c/other"}}
	labels(rs)
	if got := rs[0].Label + " " + rs[1].Label + " " + rs[2].Label; got != "a/x/run b/x/run x/other" && got != "a/x/run b/x/run c/other" {
		t.Errorf("labels %q", got)
	}
	rs = []*Run{{Dir: "runs/a"}, {Dir: "runs/b/"}}
	labels(rs)
	if rs[0].Label != "a" || rs[1].Label != "b" {
		t.Errorf("labels %q %q", rs[0].Label, rs[1].Label)
	}
}

// TestEscaping: configuration strings are escaped on the page.
func TestEscaping(t *testing.T) {
	d := filepath.Join(t.TempDir(), "<run>")
	os.MkdirAll(d, 0o755)
	os.WriteFile(filepath.Join(d, "config.json"), []byte(`{"method":"dpsgd","dataset":"<script>alert(1)</script>"}`), 0o644)
	os.WriteFile(filepath.Join(d, "metrics.jsonl"), []byte("{\"step\":0,\"epsilon\":0.5}\n"), 0o644)
	rep, err := New([]string{d}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	rep.HTML(&b)
	if strings.Contains(b.String(), "<script") || strings.Contains(b.String(), "<run>") {
		t.Error("unescaped text on the page")
	}
}
