package grid

import (
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/privtrain/privtrain/runner"
)

func TestKeyCoversEverySetting(t *testing.T) {
	base := runner.DefaultConfig()
	base.TargetEpsilon = 2.27
	k0, err := Key(base)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		change func(*runner.TrainConfig)
		same   bool
	}{
		{"epsilon 2.35", func(c *runner.TrainConfig) { c.TargetEpsilon = 2.35 }, false},
		{"seed", func(c *runner.TrainConfig) { c.Seed = 2 }, false},
		{"lr", func(c *runner.TrainConfig) { c.LR *= 1.0000001 }, false},
		{"method", func(c *runner.TrainConfig) { c.Method = "dpsgd" }, false},
		{"corruption ratio", func(c *runner.TrainConfig) { c.CorruptionRatio = 0.2 }, false},
		{"steps", func(c *runner.TrainConfig) { c.Steps = 30 }, false},
		{"pdp rounds", func(c *runner.TrainConfig) { c.PDP.Rounds = 4 }, false},
		{"dynamic F", func(c *runner.TrainConfig) { c.DynamicF = false }, false},
		{"float noise", func(c *runner.TrainConfig) { c.FloatNoise = true }, false},
		{"optimizer", func(c *runner.TrainConfig) { c.Optimizer, c.Momentum = "momentum", 0.9 }, false},
		{"accumulate", func(c *runner.TrainConfig) { c.Accumulate = 2 }, false},
		{"optimizer sgd stated", func(c *runner.TrainConfig) { c.Optimizer = "" }, true},
		// secure is the default: stating it (the former --secure-noise)
		// is the same cell
		{"secure noise stated", func(c *runner.TrainConfig) { c.SecureNoise = true }, true},
		{"out", func(c *runner.TrainConfig) { c.Out = "elsewhere" }, true},
		{"data dir", func(c *runner.TrainConfig) { c.DataDir = "/data" }, true},
	} {
		cfg := base
		c.change(&cfg)
		k, err := Key(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if (k == k0) != c.same {
			t.Errorf("%s: key %s vs base %s, want same=%v", c.name, k, k0, c.same)
		}
		if len(k) != 16 {
			t.Errorf("key %q: want 16 hex digits", k)
		}
	}
}

func TestPTRGridExpansion(t *testing.T) {
	tab := PTRTable{Preset: "ptr-mnist", Epsilons: []float64{3, 5}, Methods: []string{"tsgd-ptr", "tsgd-gaussian", "dpsgd"},
		Corruptions: PTRPaperCorruptions(), Seeds: []uint64{1, 2, 3, 4, 5}, DPSGDSigma: 1.1}
	g, err := tab.Grid()
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Cells) != 2*7*3*5 {
		t.Fatalf("%d cells, want 210", len(g.Cells))
	}
	byRow := map[string]Cell{}
	for _, c := range g.Cells {
		byRow[strings.Join(c.Row, "|")] = c
		cfg := c.Config
		if cfg.Seed != c.Seed || cfg.Out != "" {
			t.Fatalf("cell %v: seed %d/%d out %q", c.Row, cfg.Seed, c.Seed, cfg.Out)
		}
	}
	for _, c := range []struct {
		row          string
		paper, sigma float64
		dynamicF     bool
	}{
		{"mnist|3|label-flip|0.2|tsgd-ptr", 92.704, 1.1, true},
		{"mnist|5|none|0|tsgd-gaussian", 81.31, 0.7, false},
		{"mnist|5|gradient-noise|0.2|tsgd-ptr", 90.31, 1.1, true},
		{"mnist|3|feature|0.1|dpsgd σ=1.1", math.NaN(), 1.1, false},
	} {
		cell, ok := byRow[c.row]
		if !ok {
			t.Fatalf("no row %s", c.row)
		}
		if !(cell.Paper == c.paper || math.IsNaN(cell.Paper) && math.IsNaN(c.paper)) {
			t.Errorf("%s: paper %v, want %v", c.row, cell.Paper, c.paper)
		}
		if cell.Config.Sigma != c.sigma || cell.Config.DynamicF != c.dynamicF {
			t.Errorf("%s: σ %v dynamic F %v", c.row, cell.Config.Sigma, cell.Config.DynamicF)
		}
	}
	if _, err := (PTRTable{Preset: "ptr-mnist", Epsilons: []float64{3}, Methods: []string{"sgd"},
		Corruptions: PTRPaperCorruptions()[:1], Seeds: []uint64{1}}).Grid(); err == nil {
		t.Error("unknown method accepted")
	}
	if _, err := (PTRTable{Preset: "ptr-mnist", Epsilons: []float64{3}, Methods: []string{"dpsgd"},
		Corruptions: PTRPaperCorruptions()[:1], Seeds: []uint64{1, 1}}).Grid(); err == nil {
		t.Error("duplicate cells accepted")
	}
}

func TestPDPGridExpansion(t *testing.T) {
	g, err := PDPTable{Presets: []string{"pdp-mnist", "pdp-fashion-mnist"}, Methods: PDPMethods(),
		Accountings: []string{"rdp"}, Seeds: []uint64{1, 2, 3}, Epochs: 25, Rounds: 2}.Grid()
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Cells) != 2*5*3 {
		t.Fatalf("%d cells, want 30", len(g.Cells))
	}
	for _, c := range g.Cells {
		p := c.Config.PDP
		// every method trains 25 epochs in total
		if got := float64(p.Rounds) * p.RoundEpochs; got != 25 {
			t.Errorf("%v: %d rounds × %v epochs", c.Row, p.Rounds, p.RoundEpochs)
		}
		switch c.Row[2] {
		case "pdp-sgd-fixed", "pdp-sgd-adaptive":
			if c.Config.Method != "pdp-sgd" || p.ThresholdLoss != strings.TrimPrefix(c.Row[2], "pdp-sgd-") || p.Rounds != 2 {
				t.Errorf("%v: method %s loss %s rounds %d", c.Row, c.Config.Method, p.ThresholdLoss, p.Rounds)
			}
		case "pdp-dpsgd", "pdp-sampling":
			if p.Rounds != 1 {
				t.Errorf("%v: %d rounds", c.Row, p.Rounds)
			}
		}
	}
	if v := PDPPaperAccuracy("pdp-fashion-mnist", "pdp-sgd-adaptive"); v != 79.81 {
		t.Errorf("paper Fashion loss_a: %v", v)
	}
	// Both sampling rows compare to the paper's Sampling; the ceiling has no paper value.
	if a, b := PDPPaperAccuracy("pdp-mnist", "pdp-sampling-once"), PDPPaperAccuracy("pdp-mnist", "pdp-sampling"); a != 92.50 || b != 92.50 || !math.IsNaN(PDPPaperAccuracy("pdp-mnist", "pdp-ceiling")) {
		t.Errorf("paper Sampling: once %v, per step %v", a, b)
	}
	if _, err := (PDPTable{Presets: []string{"pdp-mnist"}, Methods: []string{"pdp-sgd"}, Accountings: []string{"rdp"},
		Seeds: []uint64{1}, Epochs: 1, Rounds: 1}).Grid(); err == nil {
		t.Error("pdp-sgd without a threshold loss accepted")
	}
}

func TestMeanSD(t *testing.T) {
	for _, c := range []struct {
		x        []float64
		mean, sd float64
	}{
		{[]float64{1, 2, 3, 4}, 2.5, math.Sqrt(5.0 / 3)},
		{[]float64{94.74, 94.74}, 94.74, 0},
		{[]float64{90}, 90, math.NaN()},
		{nil, math.NaN(), math.NaN()},
	} {
		m, s := meanSD(c.x)
		eq := func(a, b float64) bool { return math.IsNaN(a) && math.IsNaN(b) || math.Abs(a-b) < 1e-12 }
		if !eq(m, c.mean) || !eq(s, c.sd) {
			t.Errorf("meanSD(%v) = %v, %v; want %v, %v", c.x, m, s, c.mean, c.sd)
		}
	}
}

func TestRangeList(t *testing.T) {
	for _, c := range []struct {
		in   []int
		want string
	}{{[]int{0, 1, 2, 3}, "0-3"}, {[]int{0, 2, 3, 4, 9}, "0,2-4,9"}, {[]int{7}, "7"}, {nil, ""}} {
		if got := rangeList(c.in); got != c.want {
			t.Errorf("rangeList(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}

// fakeGrid is a 2-row × 3-seed grid of DP-SGD cells (never trained: the
// tests write their summaries).
func fakeGrid(t *testing.T) *Grid {
	g, err := PTRTable{Preset: "ptr-mnist", Epsilons: []float64{3}, Methods: []string{"tsgd-ptr", "tsgd-gaussian"},
		Corruptions: []runner.Corruption{{Kind: "label-flip", Ratio: 0.1}}, Seeds: []uint64{1, 2, 3}}.Grid()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestCollect(t *testing.T) {
	g := fakeGrid(t)
	out := t.TempDir()
	accs := map[int]float64{0: 0.9, 1: 0.92, 2: 0.94, 3: 0.85} // cells 4 and 5 missing
	for i, a := range accs {
		dir, err := g.Dir(out, i)
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(dir, 0o755)
		data, _ := json.Marshal(runner.Summary{TestAccuracy: a, Steps: 100 * (i + 1), Epsilon: 2.9})
		if err := os.WriteFile(filepath.Join(dir, "summary.json"), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tab, err := g.Collect(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.Rows) != 2 || len(tab.Cells) != 4 || len(tab.Missing) != 2 || tab.Missing[0] != 4 || tab.Missing[1] != 5 {
		t.Fatalf("rows %d cells %d missing %v", len(tab.Rows), len(tab.Cells), tab.Missing)
	}
	r := tab.Rows[0]
	if r.N != 3 || r.Of != 3 || math.Abs(r.MeanAcc-92) > 1e-9 || math.Abs(r.SDAcc-2) > 1e-9 || r.Steps != 200 || r.Paper != 93.29 {
		t.Errorf("row 0: %+v", r)
	}
	if r := tab.Rows[1]; r.N != 1 || r.Of != 3 || math.Abs(r.MeanAcc-85) > 1e-9 || !math.IsNaN(r.SDAcc) {
		t.Errorf("row 1: %+v", r)
	}
	md := tab.Markdown()
	for _, want := range []string{"| mnist | 3 | label-flip | 0.1 | tsgd-ptr | 92.00 ± 2.00 | 3/3 | 93.29 |",
		"| tsgd-gaussian | 85.00 | 1/3 | 90.15 |", "Missing 2 of 6 cells: 4-5"} {
		if !strings.Contains(md, want) {
			t.Errorf("table lacks %q:\n%s", want, md)
		}
	}
	if n := strings.Count(tab.CSV(), "\n"); n != 5 {
		t.Errorf("CSV has %d lines, want header + 4", n)
	}
}

func TestWriteSlurm(t *testing.T) {
	g, err := PTRTable{Preset: "ptr-mnist", Epsilons: []float64{3}, Methods: []string{"tsgd-ptr", "dpsgd"},
		Corruptions: PTRPaperCorruptions()[:2], Seeds: []uint64{1, 2}}.Grid()
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if _, err := g.WriteSlurm(out, SlurmOptions{Trainer: "bin/trainer"}); err == nil {
		t.Error("relative trainer path accepted")
	}
	files, err := g.WriteSlurm(out, SlurmOptions{Trainer: "/opt/privtrain/trainer", Concurrency: 3, Partition: "cpu",
		Args: []string{"experiment", "ptr-table", "--corruptions=none:0,label-flip:0.1", "--out=" + out, "--note=it's"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 4 {
		t.Fatalf("files %v", files)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(out, "slurm", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	// cells: ε 3 × {none, label} × {tsgd-ptr, dpsgd} × seeds {1,2}: tsgd-ptr is 0,1,4,5
	ptr := read("array-tsgd-ptr.sbatch")
	for _, want := range []string{"#SBATCH --array=0-1,4-5%3\n", "#SBATCH --cpus-per-task=2\n", "#SBATCH --mem=3072M\n",
		"#SBATCH --time=0-02:00:00\n", "#SBATCH --partition=cpu\n", "#SBATCH --requeue\n", "#SBATCH --open-mode=append\n",
		"logs/ptr-table-tsgd-ptr-%A_%a.log\n",
		"exec /opt/privtrain/trainer experiment ptr-table --corruptions=none:0,label-flip:0.1 --out=" + out + ` '--note=it'\''s' --cell "${SLURM_ARRAY_TASK_ID}"`} {
		if !strings.Contains(ptr, want) {
			t.Errorf("array script lacks %q:\n%s", want, ptr)
		}
	}
	if d := read("array-dpsgd.sbatch"); !strings.Contains(d, "--array=2-3,6-7%3\n") || !strings.Contains(d, "--time=0-03:00:00\n") {
		t.Errorf("dpsgd array:\n%s", d)
	}
	if c := read("collect.sbatch"); !strings.Contains(c, "--out="+out+` '--note=it'\''s' --collect`) {
		t.Errorf("collect script:\n%s", c)
	}
	sub := read("submit.sh")
	if !strings.Contains(sub, `sbatch --dependency="afterany$deps" "$@" collect.sbatch`) ||
		strings.Count(sub, "sbatch --parsable") != 2 {
		t.Errorf("submit.sh:\n%s", sub)
	}
	for _, f := range files {
		if out, err := exec.Command("bash", "-n", f).CombinedOutput(); err != nil {
			t.Errorf("bash -n %s: %v %s", f, err, out)
		}
	}
}

func TestSlurmDuration(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{{30 * time.Minute, "0-00:30:00"}, {90*time.Second + time.Hour, "0-01:02:00"}, {50 * time.Hour, "2-02:00:00"}} {
		if got := slurmDuration(c.d); got != c.want {
			t.Errorf("%v: %s, want %s", c.d, got, c.want)
		}
	}
}

// TestRunCellResumeAndReuse trains a real (tiny) MNIST cell: interrupted
// before its first step it leaves a checkpoint; the next RunCell resumes
// and finishes; a third returns the stored summary without training; a
// locked cell is refused.
func TestRunCellResumeAndReuse(t *testing.T) {
	if testing.Short() {
		t.Skip("loads MNIST")
	}
	g, err := PTRTable{Preset: "ptr-mnist", Epsilons: []float64{3}, Methods: []string{"dpsgd"},
		Corruptions: []runner.Corruption{{Kind: "none"}}, Seeds: []uint64{7}, Steps: 3}.Grid()
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	dir, _ := g.Dir(out, 0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := g.RunCell(ctx, out, 0, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled run: %v", err)
	}
	if cellState(dir) != "partial" {
		t.Fatalf("state after interruption: %s", cellState(dir))
	}
	s, err := g.RunCell(context.Background(), out, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Steps != 3 || cellState(dir) != "done" {
		t.Fatalf("steps %d state %s", s.Steps, cellState(dir))
	}
	st, _ := os.Stat(filepath.Join(dir, "summary.json"))
	s2, err := g.RunCell(context.Background(), out, 0, nil)
	if err != nil || s2.TestAccuracy != s.TestAccuracy {
		t.Fatalf("reuse: %v, %v vs %v", err, s2, s)
	}
	if st2, _ := os.Stat(filepath.Join(dir, "summary.json")); !st2.ModTime().Equal(st.ModTime()) {
		t.Error("finished cell was retrained")
	}
	var rec cellRecord
	if b, err := os.ReadFile(filepath.Join(dir, "cell.json")); err != nil || json.Unmarshal(b, &rec) != nil || rec.Row["method"] != "dpsgd σ=0.7" {
		t.Errorf("cell.json: %v %+v", err, rec)
	}
	os.Remove(filepath.Join(dir, "summary.json"))
	unlock, err := lockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	if _, err := g.RunCell(context.Background(), out, 0, nil); !errors.Is(err, ErrBusy) {
		t.Errorf("locked cell: %v", err)
	}
}

// A float PTR cell has the key the same cell had before secure noise became
// the default (its configuration then had no noise key), a secure cell the
// key of the former --secure-noise cell; each is labelled in its row.
func TestPTRGridNoiseKeys(t *testing.T) {
	tab := PTRTable{Preset: "ptr-mnist", Epsilons: []float64{3}, Methods: []string{"tsgd-ptr", "dpsgd"},
		Corruptions: []runner.Corruption{{Kind: "label-flip", Ratio: 0.1}}, Seeds: []uint64{1}}
	formerKey := func(c runner.TrainConfig, secure bool) string {
		c.Out, c.DataDir, c.FloatNoise, c.SecureNoise = "", "", false, secure
		data, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		return hex.EncodeToString(sum[:8])
	}
	for _, float := range []bool{false, true} {
		tab.FloatNoise = float
		g, err := tab.Grid()
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range g.Cells {
			k, err := Key(c.Config)
			if err != nil {
				t.Fatal(err)
			}
			if want := formerKey(c.Config, !float); k != want {
				t.Errorf("float=%v %v: key %s, former key %s", float, c.Row, k, want)
			}
			if c.Config.SecureRelease() == float || strings.HasSuffix(c.Row[4], "[float noise]") != float {
				t.Errorf("float=%v %v: secure %v", float, c.Row, c.Config.SecureRelease())
			}
		}
	}
}

// TestPTRGridAccountant: TSGD+PTR cells run on the PLD by default with the
// accountant named in their configuration, so their keys differ from the
// RDP cells of earlier grids (which left it empty); --accountant pld and
// rdp are accepted for every method.
func TestPTRGridAccountant(t *testing.T) {
	for _, tc := range []struct {
		acc, want string
	}{{"", "pld"}, {"pld", "pld"}, {"rdp", "rdp"}} {
		g, err := PTRTable{Preset: "ptr-mnist", Epsilons: []float64{3}, Methods: []string{"tsgd-ptr", "tsgd-gaussian"},
			Corruptions: PTRPaperCorruptions()[:1], Seeds: []uint64{1}, Accountant: tc.acc}.Grid()
		if err != nil {
			t.Fatalf("accountant %q: %v", tc.acc, err)
		}
		for _, c := range g.Cells {
			want := tc.want
			if c.Class != "tsgd-ptr" {
				want = tc.acc
			}
			if c.Config.Accountant != want {
				t.Errorf("accountant %q, %s: config accountant %q, want %q", tc.acc, c.Class, c.Config.Accountant, want)
			}
		}
		if tc.acc != "" {
			continue
		}
		ptr := g.Cells[0].Config
		old := ptr
		old.Accountant = ""
		kNew, err := Key(ptr)
		if err != nil {
			t.Fatal(err)
		}
		kOld, err := Key(old)
		if err != nil {
			t.Fatal(err)
		}
		if kNew == kOld {
			t.Errorf("a default TSGD+PTR cell has the key %s of an earlier grid's RDP cell", kNew)
		}
	}
}

// TestCSVQuotes: cells.csv is RFC 4180 (encoding/csv): a row value with a
// comma or a quote reads back as one field.
func TestCSVQuotes(t *testing.T) {
	tab := &Table{Columns: []string{"corruption", "note"}, Cells: []CellResult{
		{Index: 3, Key: "ab12", Row: []string{"label-flip:0.1,gradient-noise:0.2", `say "hi"`}, Seed: 7, TestAccuracy: 91.25, Epsilon: 2.5, Steps: 10, Accountant: "rdp"},
	}}
	recs, err := csv.NewReader(strings.NewReader(tab.CSV())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"3", "ab12", "label-flip:0.1,gradient-noise:0.2", `say "hi"`, "7", "91.2500", "2.5000", "10", "0.0000", "0.0", "0", "rdp"}
	if len(recs) != 2 || strings.Join(recs[1], "|") != strings.Join(want, "|") || len(recs[0]) != len(want) || recs[0][2] != "corruption" {
		t.Errorf("cells.csv read back as %q, want header + %q", recs, want)
	}
}

// TestPTRPassColumn: a TSGD+PTR row shows its pass rate even when every
// test failed (0.0%, as in short CI runs); a row without PTR tests shows –.
func TestPTRPassColumn(t *testing.T) {
	g := fakeGrid(t) // cells 0–2 tsgd-ptr, 3–5 tsgd-gaussian
	out := t.TempDir()
	for i := range g.Cells {
		s := runner.Summary{TestAccuracy: 0.5, Steps: 40, Epsilon: 2}
		if i < 3 {
			s.PTRTests, s.PTRPassed = 40, 0
		}
		dir, _ := g.Dir(out, i)
		os.MkdirAll(dir, 0o755)
		data, _ := json.Marshal(s)
		if err := os.WriteFile(filepath.Join(dir, "summary.json"), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tab, err := g.Collect(out)
	if err != nil {
		t.Fatal(err)
	}
	md := tab.Markdown()
	for _, want := range []string{"| tsgd-ptr | 50.00 ± 0.00 | 3/3 | 93.29 | 2.000 | 40 | 0.0% | 0 |", "| tsgd-gaussian | 50.00 ± 0.00 | 3/3 | 90.15 | 2.000 | 40 | – | 0 |"} {
		if !strings.Contains(md, want) {
			t.Errorf("table lacks %q:\n%s", want, md)
		}
	}
}
