package runner

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/privtrain/privtrain/datasets"
	"github.com/privtrain/privtrain/model"
	"github.com/privtrain/privtrain/optim"
	"github.com/privtrain/privtrain/optim/pdpsgd"
	"github.com/privtrain/privtrain/privacy"
)

// pdpRun is a short personalized run on real MNIST with the paper's CNN.
func pdpRun(method, out string) TrainConfig {
	c := DefaultConfig()
	c.Method = method
	PDPPresets()["pdp-mnist"](&c)
	c.PDP.Rounds = 2
	c.Steps = 8
	c.Out = out
	c.Seed = 5
	c.NoiseKey, c.NoiseKeySource = testNoiseKey(c.Seed), noiseKeySupplied // runs in different directories are compared
	if method == "pdp-adapdp" {
		// Rounds cut at the configured 4 steps (smoke test): run to τ_T
		// they take tens of thousands (TestAdaPDPRunsToThreshold).
		c.PDP.AdaPDPRounds = adaPDPSteps
	}
	return c
}

// readLedger parses ledger.csv and checks every row: the per-round charges
// add up to the spent ε, which is within the budget, and unused = budget −
// spent.
func readLedger(t *testing.T, dir string, rounds int) [][]float64 {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, ledgerCSV))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows[0]) != 6+rounds {
		t.Fatalf("ledger header %v, want %d rounds", rows[0], rounds)
	}
	out := make([][]float64, 0, len(rows)-1)
	for i, row := range rows[1:] {
		v := make([]float64, len(row))
		for k, s := range row {
			v[k], _ = strconv.ParseFloat(s, 64)
		}
		var sum float64
		for r := 0; r < rounds; r++ {
			sum += v[3+r]
		}
		spent, budget := v[3+rounds], v[1]
		if int(v[0]) != i || math.Abs(sum-spent) > 1e-9 || spent > budget || math.Abs(budget-spent-v[4+rounds]) > 1e-12 {
			t.Fatalf("ledger row %d: %v", i, row)
		}
		out = append(out, v)
	}
	return out
}

func TestPDPMethodsOnMNIST(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a CNN on MNIST")
	}
	dir := t.TempDir()
	// pdp-sampling reads its budgets from a file with per-example δ.
	budgetFile := filepath.Join(dir, "budgets.csv")
	var b strings.Builder
	b.WriteString("index,epsilon,delta\n")
	for i := 0; i < 60000; i++ {
		fmt.Fprintf(&b, "%d,%v,%v\n", i, []float64{0.5, 1, 2}[i%3], []float64{1e-5, 1e-6}[i%2])
	}
	if err := os.WriteFile(budgetFile, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		method, loss, accounting string
		rounds                   int
		noGuard                  bool
	}{
		{"pdp-dpsgd", "fixed", "rdp", 1, false},
		{"pdp-sampling", "fixed", "rdp", 1, false},
		{"pdp-adapdp", "fixed", "rdp", 2, false},
		{"pdp-sgd", "fixed", "rdp", 2, false},
		// loss_a leaves round 2 the largest budget group alone (5% of the
		// examples): the noise guard skips it (TestPDPNoiseGuard); without
		// the guard, round 2 is trained.
		{"pdp-sgd", "adaptive", "rdp", 2, true},
		{"pdp-sgd", "fixed", "paper", 2, false},
		{"pdp-dpsgd", "fixed", "", 1, false}, // the default: pld
		{"pdp-adapdp", "fixed", "pld", 2, false},
		{"pdp-sgd", "fixed", "pld", 2, false},
	} {
		t.Run(tc.method+"-"+tc.loss+"-"+tc.accounting, func(t *testing.T) {
			c := pdpRun(tc.method, filepath.Join(dir, tc.method+tc.loss+tc.accounting))
			c.PDP.ThresholdLoss, c.PDP.Accounting = tc.loss, tc.accounting
			if tc.noGuard {
				c.PDP.NoiseGuard = 0
			}
			if tc.method == "pdp-sampling" {
				c.PDP.BudgetsFile = budgetFile
			}
			s, err := Train(context.Background(), c, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var sum pdpSummary
			if err := readJSON(filepath.Join(c.Out, summaryFile), &sum); err != nil {
				t.Fatal(err)
			}
			rep := sum.PDP
			if len(rep.Rounds) != tc.rounds || rep.Iterations != s.Steps || s.Steps != 8 {
				t.Fatalf("%d rounds, %d iterations, %d steps", len(rep.Rounds), rep.Iterations, s.Steps)
			}
			rows := readLedger(t, c.Out, tc.rounds)
			g := rep.Guarantee
			if g.Examples != 60000 || g.MinSlack < 0 || s.Epsilon != g.SpentMax || !(s.TestAccuracy > 0 && s.TestAccuracy <= 1) {
				t.Fatalf("summary %+v, guarantee %+v", s, g)
			}
			paper := strings.Contains(g.Statement, "Theorem 4.2 per round")
			if paper != (tc.accounting == "paper") || g.DeltaMax > 1e-5 {
				t.Errorf("%s accounting: guarantee %+v", tc.accounting, g)
			}
			if want := map[string]string{"": "pld"}[tc.accounting]; (want != "" && string(g.Accounting) != want) || (want == "" && string(g.Accounting) != tc.accounting) ||
				(g.Accounting == "pld") != strings.Contains(g.Statement, "privacy loss distributions") {
				t.Errorf("%q accounting: the guarantee says %q: %s", tc.accounting, g.Accounting, g.Statement)
			}
			// The summary names an RDP conversion and bounds only when the
			// guarantee rests on them.
			if rdp := g.Accounting != "pld"; rdp != (s.Conversion != "" && len(s.Bounds) > 0) {
				t.Errorf("%s accounting: summary conversion %q, bounds %v", g.Accounting, s.Conversion, s.Bounds)
			}
			checkPDPMetrics(t, c.Out, s.Epsilon, string(g.Accounting))
			var maxSpent float64
			for _, r := range rows {
				maxSpent = math.Max(maxSpent, r[3+tc.rounds])
			}
			if maxSpent != g.SpentMax {
				t.Errorf("ledger max spend %v, guarantee %v", maxSpent, g.SpentMax)
			}
			switch tc.method {
			case "pdp-dpsgd":
				// DP-SGD at min ε_i = 0.5: everyone spends the same, just under 0.5.
				if rep.Rounds[0].Tau != 0.5 || g.SpentMin != g.SpentMax || g.SpentMax > 0.5 || g.SpentMax < 0.49 {
					t.Errorf("DP-SGD at min ε: τ %v, spent [%v, %v]", rep.Rounds[0].Tau, g.SpentMin, g.SpentMax)
				}
			case "pdp-sampling":
				if g.BudgetMax != 2 || g.DeltaMax != 1e-5 || rows[1][2] != 1e-6 {
					t.Errorf("budgets file not used: %+v", g)
				}
			case "pdp-adapdp":
				for r, rr := range rep.Rounds {
					if _, err := os.Stat(filepath.Join(c.Out, fmt.Sprintf("round-%d.bin", r+1))); err != nil {
						t.Error(err)
					}
					if rr.Sigma != c.Sigma || rep.EnsembleWeights[r] != rr.Tau*rr.Participants {
						t.Errorf("round %d: σ %v, weight %v", r+1, rr.Sigma, rep.EnsembleWeights[r])
					}
				}
			case "pdp-sgd":
				// τ_2 is one of the budgets remaining after round 1 (of
				// an example that round 1 did not retire).
				tau, found := rep.Rounds[1].Tau, false
				for _, r := range rows {
					found = found || math.Abs(r[1]-r[3]-tau) < 1e-12
				}
				if !found || g.Rounds != 2 {
					t.Errorf("τ_2 = %v is not a budget remaining after round 1", tau)
				}
			}
		})
	}
}

// checkPDPMetrics checks the step lines of a personalized run's
// metrics.jsonl: every step has the ledger's ε (named accountant), which
// never decreases over the run, and the last step's equals the summary's ε
// (the ledger's largest spend) bit for bit.
func checkPDPMetrics(t *testing.T, dir string, eps float64, accounting string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, metricsFile))
	if err != nil {
		t.Fatal(err)
	}
	var last *pdpStepRecord
	steps := 0
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var rec struct {
			pdpStepRecord
			Epsilon *float64 `json:"epsilon"`
			Loss    *float64 `json:"loss"`
			Round   int      `json:"round"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Round != 0 {
			continue // a round's header, result or skip record
		}
		if rec.Epsilon != nil || rec.Loss != nil {
			t.Fatalf("step line with the trainer's ε or the loss: %s", line)
		}
		if rec.Step != steps || rec.Accountant != accounting || !(rec.EpsilonSpentMax > 0) || !(rec.Group > 0) ||
			(accounting == "pld") != (rec.EpsilonSteps > rec.Step) || last != nil && rec.EpsilonSpentMax < last.EpsilonSpentMax {
			t.Fatalf("step line %d: %s (previous %+v)", steps, line, last)
		}
		r := rec.pdpStepRecord
		last = &r
		steps++
	}
	if last == nil || last.EpsilonSpentMax != eps {
		t.Errorf("last step line %+v, summary ε %v", last, eps)
	}
}

// TestPDPNoiseGuard runs adaptive PDP-SGD (loss_a) with the pdp-mnist
// preset's noise guard: round 1 puts τ_1 at the second-largest budget, so
// round 2 would train the largest budget group alone (3,000 of 60,000
// examples) at a noise per expected participant far above round 1's. The
// guard skips it: the run ends after round 1 (stopped by the guard, which
// the summary and metrics.jsonl explain), the ledger charged one round and
// the largest group keeps its unspent budget.
func TestPDPNoiseGuard(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a CNN on MNIST")
	}
	for _, acc := range []string{"pld", "rdp"} {
		t.Run(acc, func(t *testing.T) {
			c := pdpRun("pdp-sgd", filepath.Join(t.TempDir(), "run"))
			c.PDP.ThresholdLoss, c.PDP.Accounting = "adaptive", acc
			if acc == "pld" {
				c.PLDInterval = 1e-3 // a coarser certified grid: the test is about the guard
			}
			if c.PDP.NoiseGuard != 4 {
				t.Fatalf("preset noise guard %v, want 4", c.PDP.NoiseGuard)
			}
			s, err := Train(context.Background(), c, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var sum pdpSummary
			if err := readJSON(filepath.Join(c.Out, summaryFile), &sum); err != nil {
				t.Fatal(err)
			}
			if s.StoppedBy != "noise-guard" || s.Steps != 4 || len(sum.PDP.Rounds) != 1 || !strings.Contains(sum.PDP.Skipped, "round 2: noise per expected participant") {
				t.Fatalf("stopped by %q after %d steps, %d rounds, skipped %q", s.StoppedBy, s.Steps, len(sum.PDP.Rounds), sum.PDP.Skipped)
			}
			rows := readLedger(t, c.Out, 1)
			for _, r := range rows {
				// index, ε_i, δ_i, round 1, spent, unused, retired
				if r[1] == 1 && !(r[5] > 0.02 && r[6] == 0) {
					t.Fatalf("largest budget group: %v (want budget left, not retired)", r)
				}
			}
			checkPDPMetrics(t, c.Out, s.Epsilon, acc)
			data, err := os.ReadFile(filepath.Join(c.Out, metricsFile))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(data), `"skipped":"noise-guard"`) {
				t.Error("metrics.jsonl does not record the skipped round")
			}
			// Resuming the finished run does not train the skipped round.
			again, err := Train(context.Background(), c, Options{Resume: true})
			if err != nil {
				t.Fatal(err)
			}
			if again.Steps != 4 || again.StoppedBy != "noise-guard" || again.Epsilon != s.Epsilon {
				t.Errorf("resumed: %d steps, stopped by %q, ε %v", again.Steps, again.StoppedBy, again.Epsilon)
			}
		})
	}
	// Off for other methods.
	c := pdpRun("pdp-dpsgd", "x")
	c.PDP.NoiseGuard = 4
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "pdp-sgd only") {
		t.Errorf("noise guard on pdp-dpsgd: %v", err)
	}
	c = pdpRun("pdp-sgd", "x")
	c.PDP.NoiseGuard = 0.5
	if err := c.Validate(); err == nil {
		t.Error("noise guard 0.5 accepted")
	}
}

// countdown is a context that reports cancellation after n Err calls (the
// training loop checks it once per step).
type countdown struct {
	context.Context
	n int
}

func (c *countdown) Err() error {
	if c.n--; c.n < 0 {
		return context.Canceled
	}
	return nil
}

// TestPDPResumeIsExact interrupts PDP-SGD in its second round and resumes:
// the round continues from the interrupted step (the interruption
// checkpoints inside the round), the ledger is charged once, and the model,
// ledger and log equal the uninterrupted run's.
func TestPDPResumeIsExact(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a CNN on MNIST")
	}
	dir := t.TempDir()
	full := pdpRun("pdp-sgd", filepath.Join(dir, "full"))
	full.Steps = 9
	full.PDP.Rounds = 3
	want, err := Train(context.Background(), full, Options{})
	if err != nil {
		t.Fatal(err)
	}
	part := full
	part.Out = filepath.Join(dir, "part")
	_, err = Train(&countdown{Context: context.Background(), n: 4}, part, Options{})
	if err == nil || !strings.Contains(err.Error(), "round 2") {
		t.Fatalf("interruption in round 2: %v", err)
	}
	got, err := Train(context.Background(), part, Options{Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	if got.Epsilon != want.Epsilon || got.TestAccuracy != want.TestAccuracy || got.Steps != want.Steps {
		t.Errorf("resumed %+v, uninterrupted %+v", got, want)
	}
	pw, pg := readParams(t, filepath.Join(full.Out, finalModel)), readParams(t, filepath.Join(part.Out, finalModel))
	for i := range pw {
		if pw[i] != pg[i] {
			t.Fatalf("parameter %d: resumed %v, uninterrupted %v", i, pg[i], pw[i])
		}
	}
	for _, f := range []string{ledgerCSV, metricsFile} {
		a, _ := os.ReadFile(filepath.Join(full.Out, f))
		b, _ := os.ReadFile(filepath.Join(part.Out, f))
		if string(a) != string(b) || len(a) == 0 {
			t.Errorf("%s differs after resume", f)
		}
	}
	// A finished run cannot be resumed with another length.
	part.Steps = 12
	if _, err := Train(context.Background(), part, Options{Resume: true}); err == nil {
		t.Error("changing the run length on resume was accepted")
	}
}

func TestPDPValidate(t *testing.T) {
	ok := pdpRun("pdp-sgd", "x")
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]func(*TrainConfig){
		"loss":                     func(c *TrainConfig) { c.PDP.ThresholdLoss = "median" },
		"weights":                  func(c *TrainConfig) { c.PDP.W1, c.PDP.W2 = 0, 0 },
		"rounds":                   func(c *TrainConfig) { c.PDP.Rounds = 0 },
		"length":                   func(c *TrainConfig) { c.Steps, c.PDP.RoundEpochs = 0, 0 },
		"target":                   func(c *TrainConfig) { c.TargetEpsilon = 1 },
		"corruption":               func(c *TrainConfig) { c.Corruption, c.CorruptionRatio = "label-flip", 0.1 },
		"clip":                     func(c *TrainConfig) { c.ClipNorm = 0 },
		"delta":                    func(c *TrainConfig) { c.Delta = 0 },
		"groups":                   func(c *TrainConfig) { c.PDP.BudgetMin, c.PDP.BudgetMax = 1, 0.5 },
		"k":                        func(c *TrainConfig) { c.PDP.BudgetMax, c.PDP.BudgetK = 4, -0.2 },
		"adapdp σ":                 func(c *TrainConfig) { c.Method, c.Sigma = "pdp-adapdp", 0 },
		"accounting":               func(c *TrainConfig) { c.PDP.Accounting = "moments" },
		"adapdp rounds on pdp-sgd": func(c *TrainConfig) { c.PDP.AdaPDPRounds = "threshold" },
		"adapdp rounds name":       func(c *TrainConfig) { c.Method, c.PDP.NoiseGuard, c.PDP.AdaPDPRounds = "pdp-adapdp", 0, "epochs" },
		"draw on pdp-sgd":          func(c *TrainConfig) { c.PDP.SamplingDraw = "once" },
		"draw name":                func(c *TrainConfig) { c.Method, c.PDP.NoiseGuard, c.PDP.SamplingDraw = "pdp-sampling", 0, "twice" },
		"once without paper": func(c *TrainConfig) {
			c.Method, c.PDP.NoiseGuard, c.PDP.SamplingDraw, c.PDP.Accounting = "pdp-sampling", 0, "once", "pld"
		},
	} {
		c := pdpRun("pdp-sgd", "x")
		f(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// The named variants themselves are accepted.
	for _, f := range []func(*TrainConfig){
		func(c *TrainConfig) { c.Method, c.PDP.NoiseGuard, c.PDP.AdaPDPRounds = "pdp-adapdp", 0, "steps" },
		func(c *TrainConfig) { c.Method, c.PDP.NoiseGuard, c.PDP.AdaPDPRounds = "pdp-adapdp", 0, "threshold" },
		func(c *TrainConfig) { c.Method, c.PDP.NoiseGuard, c.PDP.SamplingDraw = "pdp-sampling", 0, "per-step" },
		func(c *TrainConfig) {
			c.Method, c.PDP.NoiseGuard, c.PDP.SamplingDraw, c.PDP.Accounting = "pdp-sampling", 0, "once", "paper"
		},
	} {
		c := pdpRun("pdp-sgd", "x")
		f(&c)
		if err := c.Validate(); err != nil {
			t.Errorf("%s %+v: %v", c.Method, c.PDP, err)
		}
	}
}

// TestEnsembleAccuracy: one model is its own ensemble; the weights decide
// between two models whose predictions differ.
func TestEnsembleAccuracy(t *testing.T) {
	test, err := datasets.Load("mnist", "test", "")
	if err != nil {
		t.Fatal(err)
	}
	x, labels := test.X[:500*test.Dim()], test.Labels[:500]
	spec := model.Spec{Arch: "pdp-cnn-mnist", InputShape: test.Shape, Classes: 10}
	a, _ := model.New(spec, optim.DeriveSeed(1, "a"))
	b, _ := model.New(spec, optim.DeriveSeed(1, "b"))
	accA, _ := Accuracy(a, x, labels, test.Dim())
	accB, _ := Accuracy(b, x, labels, test.Dim())
	if accA == accB {
		t.Skip("the two random models agree")
	}
	for _, tc := range []struct {
		w    []float64
		want float64
	}{{[]float64{1, 0}, accA}, {[]float64{0, 3}, accB}} {
		got, err := ensembleAccuracy([]model.Model{a, b}, tc.w, x, labels, test.Dim())
		if err != nil || got != tc.want {
			t.Errorf("weights %v: %v (%v), want %v", tc.w, got, err, tc.want)
		}
	}
	if _, err := ensembleAccuracy([]model.Model{a}, []float64{0}, x, labels, test.Dim()); err == nil {
		t.Error("zero weights accepted")
	}
}

// TestAdaPDPRunsToThreshold trains pdp-adapdp with its rounds run to τ_T
// (Algorithm 2) at a large batch, so that a round takes few steps: each
// round's length is the ledger's (the largest that keeps every class within
// its cap; one more step would pass one), not the configured length, the
// run's iterations add up, and no budget is exceeded.
func TestAdaPDPRunsToThreshold(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a CNN on MNIST")
	}
	c := pdpRun("pdp-adapdp", t.TempDir())
	c.PDP.AdaPDPRounds = "" // the default: Algorithm 2
	c.PDP.Accounting = "rdp"
	c.Sigma, c.BatchSize = 2, 2000 // round 1: a few hundred steps
	c.Steps = 0
	c.PDP.RoundEpochs = 0.001 // ignored: rounds end at τ_T
	s, err := Train(context.Background(), c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var sum pdpSummary
	if err := readJSON(filepath.Join(c.Out, summaryFile), &sum); err != nil {
		t.Fatal(err)
	}
	rep := sum.PDP
	total := 0
	for _, r := range rep.Rounds {
		total += r.Steps
	}
	if len(rep.Rounds) != 2 || total != s.Steps || rep.Iterations != s.Steps || rep.Rounds[0].Steps <= 2 {
		t.Fatalf("rounds %+v, %d steps", rep.Rounds, s.Steps)
	}
	// Replay round 1 on a fresh ledger: the same plan, n steps fit and
	// n + 1 do not.
	budgets, err := pdpsgd.GroupSpec{Groups: c.PDP.BudgetGroups, Min: c.PDP.BudgetMin, Max: c.PDP.BudgetMax}.Generate(60000, c.Delta, optim.DeriveSeed(c.Seed, "budgets"))
	if err != nil {
		t.Fatal(err)
	}
	l, err := pdpsgd.NewLedger(budgets, privacy.KindRDP, privacy.AccountantConfig{Conversion: privacy.Conversion(c.Conversion)})
	if err != nil {
		t.Fatal(err)
	}
	q := float64(c.BatchSize) / 60000
	r, err := l.Plan(pdpsgd.PlanRequest{Q: q, Steps: rep.Rounds[0].Steps + 1, Loss: c.PDP.loss(), Sigma: c.Sigma})
	if err != nil || r.Steps != rep.Rounds[0].Steps {
		t.Fatalf("replayed round 1: %d steps (%v), the run took %d", r.Steps, err, rep.Rounds[0].Steps)
	}
	if g := rep.Guarantee; g.MinSlack < 0 || g.SpentMax > 1 {
		t.Errorf("guarantee %+v", g)
	}
	t.Logf("rounds: %d and %d steps, τ %.3f / %.3f, test accuracy %.3f", rep.Rounds[0].Steps, rep.Rounds[1].Steps, rep.Rounds[0].Tau, rep.Rounds[1].Tau, s.TestAccuracy)
}
