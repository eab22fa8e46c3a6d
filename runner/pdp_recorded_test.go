package runner

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/privtrain/privtrain/optim/pdpsgd"
	"github.com/privtrain/privtrain/privacy"
)

// mainMidRound copies testdata/pdp-midround-main (see its README) to a new
// run directory and returns the run's configuration there: a pdp-sgd run
// (pdpRun with the logreg model, 2 rounds of 4 steps on MNIST) that main's
// code of 2026-11-26 (1698d3e, gonum's FFT on the PLD fast path)
// interrupted at step 6, inside round 2.
func mainMidRound(t *testing.T, dir string) TrainConfig {
	t.Helper()
	src := filepath.Join("testdata", "pdp-midround-main")
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		name := e.Name()
		if name == "README.md" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		if base, ok := strings.CutSuffix(name, ".gz"); ok {
			zr, err := gzip.NewReader(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			if _, err := b.ReadFrom(zr); err != nil {
				t.Fatal(err)
			}
			name, data = base, b.Bytes()
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	c := pdpRun("pdp-sgd", dir)
	c.Model = "logreg"
	c.CheckpointEvery = 0
	// The run's noise key is the test key of seed 5 (pdpRun), written here
	// rather than kept in testdata.
	key, _ := c.NoiseKey.MarshalText()
	if err := os.MkdirAll(filepath.Join(dir, privateDir), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, privateDir, noiseKeyFile), append(key, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	return c
}

// readPDPState reads the personalized-DP state of dir's checkpoint.
func readPDPState(t *testing.T, dir string) pdpState {
	t.Helper()
	ck, err := readCheckpoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	var st pdpState
	if err := json.Unmarshal(ck.PDP, &st); err != nil {
		t.Fatal(err)
	}
	return st
}

// TestPDPResumeRoundPlannedByMain: a checkpoint main's code wrote inside
// round 2 resumes. This code re-plans round 2 at another τ and σ (its PLD
// accountant certifies the round-1 spends slightly higher), so the round
// continues on its recorded plan: the τ and σ the checkpoint recorded and
// the rates π = Rate(ε_i − recorded spend, τ) (Definition 4.1, computed
// here from the checkpoint's JSON) that its first two steps ran at, with
// the participants main logged in the round's header. Interrupted again at
// step 7, the checkpoint keeps that plan, and resuming it finishes
// identically to an uninterrupted resume (main's
// logged participants of round 2 match bit for bit); the ledger is charged round 2
// with this code's accountant (every spend its certified ε, within the
// budget or re-certified within privacy.RecertificationTolerance). A
// recorded τ moved by 1% (rebound) is refused.
func TestPDPResumeRoundPlannedByMain(t *testing.T) {
	if testing.Short() {
		t.Skip("resumes a run on MNIST three times (PLD accounting: ~40 s)")
	}
	dir := t.TempDir()
	c := mainMidRound(t, filepath.Join(dir, "direct"))
	old := readPDPState(t, c.Out)
	if old.Round == nil || old.NextRound != 1 || old.NextStep != 6 {
		t.Fatalf("testdata: next round %d, step %d, round in progress %+v; want step 6 in round 2", old.NextRound+1, old.NextStep, old.Round)
	}
	// The recorded spends, as main wrote them.
	var rec struct {
		PDP struct {
			Ledger struct {
				Classes []struct {
					Budget  pdpsgd.Budget `json:"budget"`
					Count   int           `json:"count"`
					Spent   float64       `json:"spent"`
					Retired bool          `json:"retired"`
				} `json:"classes"`
			} `json:"ledger"`
		} `json:"pdp"`
	}
	if data, err := os.ReadFile(filepath.Join(c.Out, stateFile)); err != nil || json.Unmarshal(data, &rec) != nil {
		t.Fatalf("state: %v", err)
	}
	classes := rec.PDP.Ledger.Classes
	if !old.Ledger.Recertified() {
		t.Error("main's ledger is not re-certified by this code")
	}
	q := float64(c.BatchSize) / 60000
	req := pdpsgd.PlanRequest{Q: q, Steps: old.RoundSteps, Loss: c.PDP.loss()}
	replanned, err := old.Ledger.Plan(req)
	if err != nil {
		t.Fatal(err)
	}
	if replanned.Tau == old.Round.Tau && replanned.Sigma == old.Round.Sigma {
		t.Fatalf("this code re-plans main's round 2 as recorded (τ %v, σ %v): the test does not test a differing plan", replanned.Tau, replanned.Sigma)
	}
	t.Logf("round 2 recorded τ = %v, σ = %v; re-planned τ = %v, σ = %v", old.Round.Tau, old.Round.Sigma, replanned.Tau, replanned.Sigma)

	// Interrupted at step 7: the checkpoint holds the recorded plan.
	part := mainMidRound(t, filepath.Join(dir, "part"))
	if _, err := Train(&countdown{Context: context.Background(), n: 1}, part, Options{Resume: true}); err == nil || !strings.Contains(err.Error(), "interrupted in round 2 at step 7") {
		t.Fatalf("interruption: %v", err)
	}
	mid := readPDPState(t, part.Out)
	p := mid.Round.Recorded
	if p == nil {
		t.Fatal("the checkpoint at step 7 does not keep the recorded plan")
	}
	if p.Tau != old.Round.Tau || p.Sigma != old.Round.Sigma || p.Steps != 4 || p.Index != 1 || p.Q != q {
		t.Errorf("kept plan τ = %v, σ = %v, %d steps, round %d, q %v; recorded τ = %v, σ = %v, 4 steps, round 2, q %v", p.Tau, p.Sigma, p.Steps, p.Index+1, p.Q, old.Round.Tau, old.Round.Sigma, q)
	}
	var participants float64
	for k, cl := range classes {
		rem := cl.Budget.Epsilon - cl.Spent
		want := 1.0
		switch {
		case cl.Retired || rem <= pdpsgd.MinRemaining:
			want = 0
		case rem < p.Tau:
			want = math.Expm1(rem) / math.Expm1(p.Tau)
		}
		if p.Rates[k] != want {
			t.Errorf("class ε = %v: rate %v, want expm1(%v)/expm1(τ) = %v", cl.Budget.Epsilon, p.Rates[k], rem, want)
		}
		participants += float64(cl.Count) * want
	}
	// main's header record of round 2.
	logged := headerOf(t, c.Out, 2)
	if p.Participants != participants || p.Participants != logged["participants"] || p.Tau != logged["tau"] || p.Sigma != logged["sigma"] {
		t.Errorf("kept plan participants %v, τ %v, σ %v; recomputed participants %v; main logged %v", p.Participants, p.Tau, p.Sigma, participants, logged)
	}

	// Both finish, identically.
	want, err := Train(context.Background(), c, Options{Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	got, err := Train(context.Background(), part, Options{Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	if want.Steps != 8 || got.Epsilon != want.Epsilon || got.TestAccuracy != want.TestAccuracy || got.Guarantee != want.Guarantee {
		t.Errorf("resumed twice %+v, once %+v", got, want)
	}
	for _, f := range []string{ledgerCSV, finalModel} {
		a, _ := os.ReadFile(filepath.Join(c.Out, f))
		b, _ := os.ReadFile(filepath.Join(part.Out, f))
		if !bytes.Equal(a, b) || len(a) == 0 {
			t.Errorf("%s differs between the two resumes", f)
		}
	}
	end := readPDPState(t, c.Out)
	if r := end.Reports[1]; r.Tau != old.Round.Tau || r.Sigma != old.Round.Sigma || r.Steps != 4 {
		t.Errorf("round 2 reported τ = %v, σ = %v, %d steps; recorded τ = %v, σ = %v", r.Tau, r.Sigma, r.Steps, old.Round.Tau, old.Round.Sigma)
	}
	l := end.Ledger
	for i := 0; i < l.Len(); i++ {
		b := l.Budget(i).Epsilon
		if s := l.Spent(i); s > b*(1+privacy.RecertificationTolerance) || s > b && !l.Retired(i) {
			t.Fatalf("example %d: spent %v of budget %v (retired %v)", i, s, b, l.Retired(i))
		}
	}
	if !strings.Contains(want.Guarantee, "every spent ε_i ≤ its budget") {
		t.Errorf("guarantee %q", want.Guarantee)
	}
	t.Logf("guarantee: %s", want.Guarantee)

	// A recorded τ 1% off is no accountant version's difference.
	bad := mainMidRound(t, filepath.Join(dir, "bad"))
	editJSON(t, filepath.Join(bad.Out, stateFile), func(m map[string]json.RawMessage) {
		var st map[string]json.RawMessage
		json.Unmarshal(m["pdp"], &st)
		var r map[string]any
		json.Unmarshal(st["round"], &r)
		r["tau"] = r["tau"].(float64) * 1.01
		st["round"] = raw(r)
		m["pdp"] = raw(st)
	})
	rebind(t, bad.Out, bad)
	if _, err := Train(context.Background(), bad, Options{Resume: true}); err == nil || !strings.Contains(err.Error(), "not a round an earlier accountant version planned") {
		t.Errorf("a recorded τ 1%% off: %v", err)
	}
}

// headerOf returns the header record of round R in dir's metrics.jsonl.
func headerOf(t *testing.T, dir string, R int) map[string]float64 {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, metricsFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var m map[string]float64
		if json.Unmarshal([]byte(line), &m) == nil && m["round"] == float64(R) && m["tau"] != 0 {
			return m
		}
	}
	t.Fatalf("no header of round %d in %s", R, metricsFile)
	return nil
}
