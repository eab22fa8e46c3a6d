package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/privtrain/privtrain/privacy"
)

// testAccountant is an accountant registered from a test, as another module
// would (examples/custom-accountant): the RDP accountant under another name,
// so its numbers are known.
type testAccountant struct{ inner privacy.Accountant }

const testAccountantName = "rdp-test"

func init() {
	privacy.RegisterAccountant(testAccountantName, privacy.AccountantDef{
		New: func(cfg privacy.AccountantConfig) (privacy.Accountant, error) {
			a, err := privacy.NewAccountant(privacy.KindRDP, cfg)
			return &testAccountant{a}, err
		},
		Load: func(data []byte, cfg privacy.AccountantConfig) (privacy.Accountant, error) {
			var w struct {
				State json.RawMessage `json:"state"`
			}
			if err := json.Unmarshal(data, &w); err != nil {
				return nil, err
			}
			a, err := privacy.LoadAccountant(w.State, cfg)
			return &testAccountant{a}, err
		},
	})
}

func (a *testAccountant) Kind() string { return testAccountantName }
func (a *testAccountant) Compose(m privacy.Mechanism, count int) error {
	return a.inner.Compose(m, count)
}
func (a *testAccountant) Steps() int                     { return a.inner.Steps() }
func (a *testAccountant) History() []privacy.Composition { return a.inner.History() }
func (a *testAccountant) relabel(g privacy.Guarantee, err error) (privacy.Guarantee, error) {
	g.Accountant = testAccountantName
	return g, err
}
func (a *testAccountant) EpsilonFor(d float64) (privacy.Guarantee, error) {
	return a.relabel(a.inner.EpsilonFor(d))
}
func (a *testAccountant) DeltaFor(e float64) (privacy.Guarantee, error) {
	return a.relabel(a.inner.DeltaFor(e))
}
func (a *testAccountant) MaxSteps(m privacy.Mechanism, target, delta float64, limit int) (int, error) {
	return a.inner.MaxSteps(m, target, delta, limit)
}
func (a *testAccountant) CloneAccountant() privacy.Accountant {
	return &testAccountant{a.inner.CloneAccountant()}
}
func (a *testAccountant) MarshalJSON() ([]byte, error) {
	st, err := json.Marshal(a.inner)
	if err != nil {
		return nil, err
	}
	return json.Marshal(struct {
		Accountant string          `json:"accountant"`
		State      json.RawMessage `json:"state"`
	}{testAccountantName, st})
}

// TestAccountRegisteredAccountant: `account epsilon` and `account sigma`
// answer on a registered accountant by name, with its numbers.
func TestAccountRegisteredAccountant(t *testing.T) {
	m := runAccountJSON(t, "epsilon", "--accountant", testAccountantName, "--mech", "gaussian", "--sigma", "1.1", "--q", "0.01", "--steps", "300", "--delta", "1e-5")
	ref, _ := privacy.NewAccountant(privacy.KindRDP, privacy.AccountantConfig{})
	ref.Compose(privacy.PoissonSubsampled{Base: privacy.Gaussian{Sigma: 1.1}, Q: 0.01}, 300)
	g, _ := ref.EpsilonFor(1e-5)
	if m["accountant"] != testAccountantName || m["epsilon"] != g.Epsilon || m["steps"] != 300.0 {
		t.Errorf("account epsilon: %v; want ε = %v", m, g.Epsilon)
	}
	m = runAccountJSON(t, "sigma", "--accountant", testAccountantName, "--target-epsilon", "2", "--q", "0.01", "--steps", "300", "--delta", "1e-5")
	want, _ := privacy.CalibrateSigma(privacy.CalibrationRequest{TargetEpsilon: 2, Delta: 1e-5, Q: 0.01, Steps: 300, Accountant: privacy.KindRDP})
	if s, _ := m["sigma"].(float64); m["accountant"] != testAccountantName || math.Abs(s-want) > 2*privacy.CalibrationTolerance {
		t.Errorf("account sigma: %v; want σ = %v", m, want)
	}
	var out, errb bytes.Buffer
	if code := runAccount([]string{"epsilon", "--accountant", "nope", "--mech", "gaussian", "--sigma", "1", "--steps", "1", "--delta", "1e-5"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), `unknown accountant "nope"`) || !strings.Contains(errb.String(), testAccountantName) {
		t.Errorf("unknown accountant: exit %d, %q", code, errb.String())
	}
}

// TestTrainRegisteredAccountant: `train --accountant NAME` accounts the run
// on the registered accountant, records it in the checkpoint and summary,
// and its ε is the RDP accountant's over the recorded history.
func TestTrainRegisteredAccountant(t *testing.T) {
	if testing.Short() {
		t.Skip("trains on MNIST")
	}
	out := filepath.Join(t.TempDir(), "run")
	var stdout, stderr bytes.Buffer
	args := []string{"train", "--method", "dpsgd", "--model", "logreg", "--steps", "5", "--lr", "1", "--accountant", testAccountantName,
		"--target-epsilon", "0", "--corruption", "none", "--corruption-ratio", "0", "--out", out}
	if code := dispatch(args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "by the RDP-TEST accountant at Rényi order") {
		t.Errorf("output does not name the accountant:\n%s", stdout.String())
	}
	var sum struct {
		Accountant string  `json:"accountant"`
		Epsilon    float64 `json:"epsilon"`
		Delta      float64 `json:"delta"`
	}
	if data, err := os.ReadFile(filepath.Join(out, "summary.json")); err != nil || json.Unmarshal(data, &sum) != nil {
		t.Fatalf("summary.json: %v", err)
	}
	var st struct {
		Accountant json.RawMessage `json:"accountant"`
	}
	if data, err := os.ReadFile(filepath.Join(out, "state.json")); err != nil || json.Unmarshal(data, &st) != nil {
		t.Fatalf("state.json: %v", err)
	}
	acct, err := privacy.LoadAccountant(st.Accountant, privacy.AccountantConfig{})
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := privacy.NewAccountant(privacy.KindRDP, privacy.AccountantConfig{})
	for _, c := range acct.History() {
		m, err := privacy.FromSpec(c.Spec)
		if err != nil {
			t.Fatal(err)
		}
		ref.Compose(m, c.Count)
	}
	g, _ := ref.EpsilonFor(sum.Delta)
	if sum.Accountant != testAccountantName || acct.Kind() != testAccountantName || acct.Steps() != 5 || sum.Epsilon != g.Epsilon {
		t.Errorf("summary %+v, checkpoint %s with %d steps; RDP ε over its history %v", sum, acct.Kind(), acct.Steps(), g.Epsilon)
	}
}
