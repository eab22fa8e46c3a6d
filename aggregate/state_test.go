package aggregate

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// TestPTRStateAndSummary runs ptr-tsum on random batches and checks its
// summary against counts taken independently from the step reports, then
// moves its state (F and the counts) to a fresh instance through
// MarshalState/UnmarshalState: the copy reports the same summary and
// releases the same next step.
func TestPTRStateAndSummary(t *testing.T) {
	cfg := Config{Sigma: 1.1, ClipNorm: 1, Tau: 0.5, B: 0.3, Delta0: 1e-2, F: 4, FloatNoise: true}
	a := mustNew(t, "ptr-tsum", cfg).(*PTRTSum)
	data := rand.New(rand.NewPCG(1, 2))
	noise := rand.New(rand.NewPCG(3, 4))
	tests, passed := 0, 0
	out := make([]float32, 6)
	for step := 0; step < 60; step++ {
		// Half of the batches have small norms (TSUM_F is safe: tests
		// pass), half have norms near R (they fail).
		R := 1.0
		if step%2 == 0 {
			R = 0.3
		}
		rep, err := a.Aggregate(batch(randRows(data, 30, 6, R), 1), noise, out)
		if err != nil {
			t.Fatal(err)
		}
		tests++
		if ptrOf(rep).Branch == PTRPassed {
			passed++
		}
		a.SetTrimLevel(4 + step%3) // as a dynamic-F policy would
	}
	if passed == 0 || passed == tests {
		t.Fatalf("%d of %d tests passed: the batches should give both outcomes", passed, tests)
	}
	var sum map[string]float64
	js, _ := json.Marshal(a.Summary())
	if err := json.Unmarshal(js, &sum); err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"ptr_tests": float64(tests), "ptr_passed": float64(passed),
		"ptr_pass_rate": float64(passed) / float64(tests), "final_f": float64(a.TrimLevel())}
	for k, v := range want {
		if sum[k] != v {
			t.Errorf("summary %s = %v, want %v (summary %s)", k, sum[k], v, js)
		}
	}
	state, err := a.MarshalState()
	if err != nil {
		t.Fatal(err)
	}
	b := mustNew(t, "ptr-tsum", cfg).(*PTRTSum)
	if err := b.UnmarshalState(state); err != nil {
		t.Fatal(err)
	}
	jb, _ := json.Marshal(b.Summary())
	if string(jb) != string(js) {
		t.Errorf("restored summary %s, want %s", jb, js)
	}
	g := batch(randRows(data, 30, 6, 0.3), 1)
	oa, ob := make([]float32, 6), make([]float32, 6)
	ra, _ := a.Aggregate(g, rand.New(rand.NewPCG(5, 6)), oa)
	rb, _ := b.Aggregate(g, rand.New(rand.NewPCG(5, 6)), ob)
	if ptrOf(ra) != ptrOf(rb) || oa[0] != ob[0] || oa[5] != ob[5] {
		t.Errorf("restored rule released %v %v, original %v %v", ptrOf(rb), ob, ptrOf(ra), oa)
	}
	for _, bad := range []string{`{"trim_level": -1}`, `{"trim_level": 2, "ptr_tests": 3, "ptr_passed": 4}`, `[1]`} {
		if b.UnmarshalState([]byte(bad)) == nil {
			t.Errorf("state %s accepted", bad)
		}
	}
}

// TestTSumState moves tsum's trim level through its state; tsum has no
// test counts and its summary is the final F.
func TestTSumState(t *testing.T) {
	a := mustNew(t, "tsum", Config{Sigma: 1, ClipNorm: 1, F: 3, FloatNoise: true}).(*TSum)
	a.SetTrimLevel(7)
	state, err := a.MarshalState()
	if err != nil || string(state) != `{"trim_level":7}` {
		t.Fatalf("state %s, %v", state, err)
	}
	b := mustNew(t, "tsum", Config{Sigma: 1, ClipNorm: 1, F: 3, FloatNoise: true}).(*TSum)
	// A version-2 checkpoint's fields: the counts are ptr-tsum's, ignored.
	if err := b.UnmarshalState([]byte(`{"trim_level":7,"ptr_tests":0,"ptr_passed":0}`)); err != nil || b.TrimLevel() != 7 {
		t.Fatalf("restored F = %d, %v", b.TrimLevel(), err)
	}
	if js, _ := json.Marshal(b.Summary()); string(js) != `{"final_f":7}` {
		t.Errorf("summary %s", js)
	}
}
