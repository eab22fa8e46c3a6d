package main

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/privtrain/privtrain/privacy"
)

// Inputs whose privacy losses no PLD grid represents are refused with exit
// 2 and one line (main printed "epsilon": 0 for σ = 1e-300 and −Inf for
// σ = 1e-170); no printed ε is below the exact one-step ε.
func TestAccountEpsilonUnrepresentable(t *testing.T) {
	for _, args := range [][]string{
		{"--mech", "gaussian", "--sigma", "1e-300", "--q", "0.01", "--steps", "10", "--delta", "1e-5"},
		{"--mech", "gaussian", "--sigma", "1e-170", "--q", "1", "--steps", "1", "--delta", "1e-5"},
		{"--mech", "gaussian", "--sigma", "1e-4", "--q", "1", "--steps", "1", "--delta", "1e-5", "--interval", "1"},
		{"--mech", "laplace", "--b", "1e-300", "--steps", "1", "--delta", "1e-5"},
	} {
		for _, json := range []bool{false, true} {
			a := append([]string{"epsilon"}, args...)
			if json {
				a = append(a, "--json")
			}
			var out, errb bytes.Buffer
			code := runAccount(a, &out, &errb)
			if code != 2 || out.Len() != 0 || strings.Count(errb.String(), "\n") != 1 || !strings.Contains(errb.String(), "not representable") {
				t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line", a, code, out.String(), errb.String())
			}
		}
	}
	// Through --history as well.
	h := writeFile(t, t.TempDir(), "h.json", `[{"mech": "gaussian", "sigma": 1e-300, "q": 0.01, "steps": 10}]`)
	var out, errb bytes.Buffer
	if code := runAccount([]string{"epsilon", "--history", h, "--delta", "1e-5", "--json"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "not representable") {
		t.Errorf("--history: exit %d, stderr %q", code, errb.String())
	}
	// A small σ that is representable gets a bound at least the exact
	// one-step ε of the Gaussian mechanism (Balle & Wang 2018, Theorem 8).
	m := runAccountJSON(t, "epsilon", "--mech", "gaussian", "--sigma", "3e-4", "--q", "1", "--steps", "1", "--delta", "1e-5", "--interval", "1")
	mu := 1 / (2 * 3e-4 * 3e-4)
	// δ(μ) = 1/2 − e^μ Φ(−√(2μ)) ≈ 1/2 > 1e-5, so the exact ε exceeds μ.
	lb := mu
	if e, ok := m["epsilon"].(float64); !ok || !(e >= lb) {
		t.Errorf("σ = 3e-4: ε %v, want ≥ %v", m["epsilon"], lb)
	}
}

// Small δ: the PLD accountant reports min(PLD, RDP) and names it (main:
// "+Inf" at δ = 1e-12, then RDP's 2.04); the PLD bound is now finite and
// tight there (the tilted path: 1.2973 against the 1.297 of a PLD computed
// elsewhere); no finite bound gives null with a reason (both accountants)
// instead of the string "+Inf".
func TestAccountEpsilonSmallDeltaAndNull(t *testing.T) {
	m := runAccountJSON(t, "epsilon", "--mech", "gaussian", "--sigma", "1.1", "--q", "0.004266", "--steps", "100", "--delta", "1e-12")
	r := runAccountJSON(t, "epsilon", "--accountant", "rdp", "--mech", "gaussian", "--sigma", "1.1", "--q", "0.004266", "--steps", "100", "--delta", "1e-12")
	if m["bound"] != privacy.BoundPLD || !strings.HasPrefix(m["detail"].(string), "pld tilted") {
		t.Errorf("δ = 1e-12: pld %v (bound %v, %v), rdp %v", m["epsilon"], m["bound"], m["detail"], r["epsilon"])
	}
	if e, ok := m["epsilon"].(float64); !ok || !(e >= 1.297 && e < 1.2973*1.001) {
		t.Errorf("δ = 1e-12: ε %v, want the tight 1.2973", m["epsilon"])
	}
	if e, ok := r["epsilon"].(float64); !ok || !(e > 2.04 && e < 2.05) {
		t.Errorf("δ = 1e-12: RDP ε %v, want 2.04", r["epsilon"])
	}
	u := runAccountJSON(t, "epsilon", "--mech", "gaussian", "--sigma", "1.1", "--q", "0.01", "--steps", "200", "--delta", "1e-5")
	if u["bound"] != privacy.BoundPLD {
		t.Errorf("usual regime: bound %v", u["bound"])
	}
	n := runAccountJSON(t, "epsilon", "--accountant", "rdp", "--mech", "gaussian", "--sigma", "1e-170", "--q", "1", "--steps", "1", "--delta", "1e-5")
	if v, ok := n["epsilon"]; !ok || v != nil || !strings.HasPrefix(n["epsilon_reason"].(string), "no finite ε") {
		t.Errorf("rdp, no finite bound: %v", n)
	}
	for _, c := range []struct {
		v    float64
		want string
	}{{math.Inf(1), "null"}, {math.NaN(), "null"}, {1.5, "1.5"}, {0, "0"}} {
		b, err := json.Marshal(boundNum(c.v))
		if err != nil || string(b) != c.want {
			t.Errorf("boundNum(%v) = %s, %v; want %s", c.v, b, err, c.want)
		}
	}
}
