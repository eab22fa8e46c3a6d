package main

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/privtrain/privtrain/privacy"
)

// The PLD contract: "epsilon" is the certified upper bound, with the
// optimistic value and the interval; a one-entry history gives the same
// numbers as the flags; the values match the library.
func TestAccountEpsilonPLD(t *testing.T) {
	m := runAccountJSON(t, "epsilon", "--accountant", "pld", "--mech", "gaussian", "--sigma", "1.1", "--q", "0.01", "--steps", "200", "--delta", "1e-5")
	acc, _ := privacy.NewPLDAccountant(0)
	acc.Compose(privacy.PoissonSubsampled{Base: privacy.Gaussian{Sigma: 1.1}, Q: 0.01}, 200)
	g, _ := acc.EpsilonFor(1e-5)
	if m["epsilon"] != g.Epsilon || m["epsilon_optimistic"] != g.Optimistic || m["interval"] != privacy.DefaultPLDInterval || m["accountant"] != "pld" {
		t.Errorf("output %v, want ε %v optimistic %v", m, g.Epsilon, g.Optimistic)
	}
	if !(g.Optimistic <= g.Epsilon) || g.Epsilon <= 0 {
		t.Errorf("ε %v optimistic %v", g.Epsilon, g.Optimistic)
	}
	dir := t.TempDir()
	h := filepath.Join(dir, "h.json")
	os.WriteFile(h, []byte(`[{"mech": "gaussian", "sigma": 1.1, "q": 0.01, "steps": 200}]`), 0o644)
	mh := runAccountJSON(t, "epsilon", "--accountant", "pld", "--history", h, "--delta", "1e-5")
	if mh["epsilon"] != m["epsilon"] || mh["epsilon_optimistic"] != m["epsilon_optimistic"] {
		t.Errorf("history %v vs flags %v", mh["epsilon"], m["epsilon"])
	}
	// Heterogeneous: adding a Laplace entry and a second Gaussian costs more.
	os.WriteFile(h, []byte(`[{"mech": "gaussian", "sigma": 1.1, "q": 0.01, "steps": 200}, {"mech": "laplace", "b": 50, "steps": 2}, {"mech": "gaussian", "sigma": 3, "q": 1, "steps": 1}]`), 0o644)
	mh2 := runAccountJSON(t, "epsilon", "--accountant", "pld", "--history", h, "--delta", "1e-5", "--interval", "2e-4")
	if !(mh2["epsilon"].(float64) > m["epsilon"].(float64)) || mh2["steps"] != 203.0 || mh2["interval"] != 2e-4 {
		t.Errorf("heterogeneous history: %v", mh2)
	}
	// Laplace without subsampling, one step: pure ε = 1/b bounds it.
	ml := runAccountJSON(t, "epsilon", "--accountant", "pld", "--mech", "laplace", "--b", "2", "--steps", "1", "--delta", "1e-5")
	if e := ml["epsilon"].(float64); !(e <= 0.5+2e-4 && e > 0.49) {
		t.Errorf("laplace b=2: ε %v", e)
	}
	// PLD below RDP for the same composition.
	r := runAccountJSON(t, "epsilon", "--accountant", "rdp", "--mech", "gaussian", "--sigma", "1.1", "--q", "0.01", "--steps", "200", "--delta", "1e-5")
	if r["accountant"] != nil && r["accountant"] != "rdp" {
		t.Errorf("--accountant rdp answered by %v", r["accountant"])
	}
	// Without --accountant the Gaussian with a rate gets the PLD: the same
	// number as --accountant pld.
	d := runAccountJSON(t, "epsilon", "--mech", "gaussian", "--sigma", "1.1", "--q", "0.01", "--steps", "200", "--delta", "1e-5")
	if d["accountant"] != "pld" || d["epsilon"] != m["epsilon"] {
		t.Errorf("default accountant: %v (ε %v), want pld (ε %v)", d["accountant"], d["epsilon"], m["epsilon"])
	}
	if !(m["epsilon"].(float64) < r["epsilon"].(float64)) {
		t.Errorf("pld %v not below rdp %v", m["epsilon"], r["epsilon"])
	}
}

func TestAccountPLDBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(s), 0o644)
		return p
	}
	base := []string{"epsilon", "--accountant", "pld", "--delta", "1e-5"}
	for name, args := range map[string][]string{
		"nan sigma":      {"--mech", "gaussian", "--sigma", "NaN", "--q", "0.1", "--steps", "3"},
		"zero sigma":     {"--mech", "gaussian", "--sigma", "0", "--q", "0.1", "--steps", "3"},
		"q > 1":          {"--mech", "gaussian", "--sigma", "1", "--q", "1.01", "--steps", "3"},
		"q = 0":          {"--mech", "gaussian", "--sigma", "1", "--q", "0", "--steps", "3"},
		"nan q":          {"--mech", "gaussian", "--sigma", "1", "--q", "NaN", "--steps", "3"},
		"nan delta":      {"--mech", "gaussian", "--sigma", "1", "--q", "0.1", "--steps", "3", "--delta", "NaN"},
		"bad interval":   {"--mech", "gaussian", "--sigma", "1", "--q", "0.1", "--steps", "3", "--interval", "NaN"},
		"ptr tau > 1":    {"--mech", "ptr", "--sigma1", "1", "--tau", "1.5", "--b", "1", "--delta0", "1e-6", "--q", "0.1", "--steps", "3"},
		"ptr delta0":     {"--mech", "ptr", "--sigma1", "1", "--tau", "0.5", "--b", "1", "--delta0", "0.7", "--q", "0.1", "--steps", "3"},
		"ptr no b":       {"--mech", "ptr", "--sigma1", "1", "--tau", "0.5", "--delta0", "1e-6", "--q", "0.1", "--steps", "3"},
		"ptr nan sigma1": {"--mech", "ptr", "--sigma1", "NaN", "--tau", "0.5", "--b", "1", "--delta0", "1e-6", "--q", "0.1", "--steps", "3"},
		"rgm":            {"--mech", "rgm", "--eta", "0.1", "--gamma", "1", "--dim", "10", "--q", "0.1", "--steps", "3"},
		"bad accountant": {"--mech", "gaussian", "--sigma", "1", "--q", "0.1", "--steps", "3", "--accountant", "prv"},
		"rdp option":     {"--mech", "gaussian", "--sigma", "1", "--q", "0.1", "--steps", "3", "--conversion", "bbg"},
		"rdp orders":     {"--mech", "gaussian", "--sigma", "1", "--q", "0.1", "--steps", "3", "--orders", "2,3"},
		"rdp bound":      {"--mech", "gaussian", "--sigma", "1", "--q", "0.1", "--steps", "3", "--bound", "blackbox"},
		"direct":         {"--mech", "ptr", "--direct", "--sigma1", "20", "--tau", "0.5", "--b", "1", "--delta0", "1e-9", "--steps", "3"},
		"empty history":  {"--history", write("e.json", `[]`)},
		"malformed":      {"--history", write("m.json", `[{"mech": "gaussian", "sigma": 1, "q": 0.1, "steps": 3}`)},
		"nan in history": {"--history", write("n.json", `[{"mech": "gaussian", "sigma": NaN, "q": 0.1, "steps": 3}]`)},
		"unknown field":  {"--history", write("u.json", `[{"mech": "gaussian", "sigma": 1, "q": 0.1, "steps": 3, "x": 1}]`)},
		"history q":      {"--history", write("q.json", `[{"mech": "gaussian", "sigma": 1, "q": 2, "steps": 3}]`)},
		"history sigma":  {"--history", write("s.json", `[{"mech": "gaussian", "sigma": -1, "q": 0.5, "steps": 3}]`)},
		"history steps":  {"--history", write("t.json", `[{"mech": "gaussian", "sigma": 1, "q": 0.5, "steps": 0}]`)},
		"history mech":   {"--history", write("k.json", `[{"mech": "ptr", "sigma": 1, "steps": 1}]`)},
		"no file":        {"--history", filepath.Join(dir, "missing.json")},
		"history+mech":   {"--history", write("ok.json", `[{"mech": "laplace", "b": 1, "steps": 1}]`), "--mech", "laplace"},
	} {
		var out, errb bytes.Buffer
		code := runAccount(append(append([]string(nil), base...), args...), &out, &errb)
		if code != 2 || out.Len() != 0 || strings.Count(strings.TrimRight(errb.String(), "\n"), "\n") != 0 || errb.Len() == 0 {
			t.Errorf("%s: exit %d, stdout %q, stderr %q (want exit 2 and one line)", name, code, out.String(), errb.String())
		}
	}
}

func TestAccountSigmaPLD(t *testing.T) {
	if testing.Short() {
		t.Skip("calibration composes ~25 PLDs")
	}
	m := runAccountJSON(t, "sigma", "--accountant", "pld", "--target-epsilon", "3", "--delta", "1e-5", "--q", "0.02", "--steps", "100", "--interval", "5e-4")
	r := runAccountJSON(t, "sigma", "--accountant", "rdp", "--target-epsilon", "3", "--delta", "1e-5", "--q", "0.02", "--steps", "100")
	if !(m["epsilon"].(float64) <= 3) || !(m["sigma"].(float64) < r["sigma"].(float64)) || math.IsNaN(m["epsilon_optimistic"].(float64)) {
		t.Errorf("pld %v vs rdp %v", m, r)
	}
}

// `account epsilon --accountant pld --mech ptr` composes the PTR step's
// envelope pair (docs/ptr-pld.md): certified, below the RDP accountant's ε,
// and the default accountant for --mech ptr.
func TestAccountPTRPLD(t *testing.T) {
	args := []string{"--mech", "ptr", "--sigma1", "1.1", "--tau", "0.5", "--b", "1", "--delta0", "1e-8", "--q", "0.01", "--steps", "200", "--delta", "1e-5"}
	m := runAccountJSON(t, append([]string{"epsilon", "--accountant", "pld", "--interval", "1e-3"}, args...)...)
	r := runAccountJSON(t, append([]string{"epsilon", "--accountant", "rdp"}, args...)...)
	d := runAccountJSON(t, append([]string{"epsilon", "--interval", "1e-3"}, args...)...)
	pe, re := m["epsilon"].(float64), r["epsilon"].(float64)
	t.Logf("ptr σ1=1.1 τ=0.5 b=1 δ0=1e-8 q=0.01 200 steps: pld ε %.4f, rdp ε %.4f", pe, re)
	if m["accountant"] != "pld" || !(pe > 0 && pe < re) || !(m["epsilon_optimistic"].(float64) <= pe) {
		t.Errorf("pld %v vs rdp %v", m, r)
	}
	if d["accountant"] != "pld" || d["epsilon"].(float64) != pe {
		t.Errorf("default accountant for --mech ptr: %v, want the pld answer %v", d, m)
	}
}

// TestOptimisticNote: the optimistic estimate is shown while steps × interval
// stays at most 0.1, and replaced by the size of its possible bias after.
func TestOptimisticNote(t *testing.T) {
	for _, tc := range []struct {
		opt   float64
		steps int
		h     float64
		want  string
	}{
		{0.2129, 100, 1e-4, "optimistic estimate 0.2129"},
		{1.5, 1000, 1e-4, "optimistic estimate 1.5"},
		{1.9, 1001, 1e-4, "optimistic estimate omitted: 1001 steps × interval 0.0001 can bias it low by 0.1"},
		{2.27, 100000, 1e-4, "optimistic estimate omitted: 100000 steps × interval 0.0001 can bias it low by 10"},
	} {
		if got := optimisticNote(tc.opt, tc.steps, tc.h); got != tc.want {
			t.Errorf("optimisticNote(%v, %d, %v) = %q, want %q", tc.opt, tc.steps, tc.h, got, tc.want)
		}
	}
}
