package main

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/privtrain/privtrain/privacy"
)

// Inputs whose privacy losses no PLD grid represents: the default rule
// (privacy.ChooseAccountant) answers with the RDP accountant and says why;
// its bound is finite and at least the exact ε, or null with a reason when
// none exists in float64 (main printed "epsilon": 0 for σ = 1e-300 and −Inf
// for σ = 1e-170; the last session exited 2). An explicit --accountant pld
// still refuses them (exit 2, one line).
func TestAccountEpsilonUnrepresentable(t *testing.T) {
	for _, c := range []struct {
		args []string
		// lb is a lower bound on the exact ε (0: no finite ε in float64,
		// the answer must be null).
		lb float64
	}{
		// σ → 0: RDP +Inf at every order (σ² underflows), the true ε
		// exceeds 1/(2σ²) − 6 > MaxFloat64.
		{[]string{"--mech", "gaussian", "--sigma", "1e-300", "--q", "0.01", "--steps", "10"}, 0},
		{[]string{"--mech", "gaussian", "--sigma", "1e-170", "--q", "1", "--steps", "1"}, 0},
		// σ = 1e-150, q = 0.01: with probability q/2 the loss exceeds
		// log q + 1/(2σ²), so ε ≥ 1/(2σ²) + log q − 1 (δ = 1e-5 < q/2·(1−e⁻¹)).
		{[]string{"--mech", "gaussian", "--sigma", "1e-150", "--q", "0.01", "--steps", "10"}, 0.5e300 * (1 - 1e-12)},
		// σ = 0.01, q = 0.01: representable losses, but more grid points
		// than a PLD holds at the default interval; the same argument
		// gives ε ≥ 5000 + log(0.01) − 1.
		{[]string{"--mech", "gaussian", "--sigma", "0.01", "--q", "0.01", "--steps", "10"}, 5000 + math.Log(0.01) - 1},
		// Laplace b: the exact ε(δ) of one step is 1/b + 2·log(1−δ); the
		// RDP conversion is within float64 rounding of it (1 ulp below
		// at 1e300, a relative 1e-16).
		{[]string{"--mech", "laplace", "--b", "1e-300", "--steps", "1"}, 1e300 * (1 - 1e-15)},
	} {
		a := append([]string{"epsilon", "--delta", "1e-5"}, c.args...)
		m := runAccountJSON(t, a...)
		reason, _ := m["accountant_reason"].(string)
		if m["accountant"] != "rdp" || !strings.Contains(reason, "pld cannot account") || !strings.Contains(reason, "rdp used") {
			t.Errorf("%v: accountant %v (%q), want rdp with the reason", a, m["accountant"], reason)
		}
		e, finite := m["epsilon"].(float64)
		switch {
		case c.lb == 0:
			if v, ok := m["epsilon"]; !ok || v != nil || !strings.HasPrefix(m["epsilon_reason"].(string), "no finite ε") {
				t.Errorf("%v: ε %v (%v), want null with a reason", a, m["epsilon"], m["epsilon_reason"])
			}
			// No order gives a finite bound: none is named (not "NaN").
			if o, ok := m["order"]; ok || strings.Contains(m["detail"].(string), "NaN") {
				t.Errorf("%v: order %v, detail %q: want no order and no NaN", a, o, m["detail"])
			}
		case !finite || !(e >= c.lb) || math.IsInf(e, 0):
			t.Errorf("%v: ε %v, want a finite bound ≥ %v", a, m["epsilon"], c.lb)
		}
		// The table names the accountant and why.
		var out, errb bytes.Buffer
		if code := runAccount(a, &out, &errb); code != 0 || !strings.Contains(out.String(), "accountant:  rdp; default: pld cannot account") {
			t.Errorf("%v: exit %d, table %q, stderr %q", a, code, out.String(), errb.String())
		}
		// --accountant pld: refused, exit 2 and one line.
		out.Reset()
		errb.Reset()
		code := runAccount(append(append([]string{}, a...), "--accountant", "pld"), &out, &errb)
		if code != 2 || out.Len() != 0 || strings.Count(errb.String(), "\n") != 1 || !strings.Contains(errb.String(), "not representable") {
			t.Errorf("%v --accountant pld: exit %d, stdout %q, stderr %q; want exit 2 and one line", a, code, out.String(), errb.String())
		}
	}
	// A PLD option with a step only RDP can account: a clear exit 2 that
	// says why the default is rdp.
	var out, errb bytes.Buffer
	code := runAccount([]string{"epsilon", "--mech", "gaussian", "--sigma", "1e-4", "--q", "1", "--steps", "1", "--delta", "1e-5", "--interval", "1"}, &out, &errb)
	if code != 2 || out.Len() != 0 || strings.Count(errb.String(), "\n") != 1 || !strings.Contains(errb.String(), "pld cannot account") {
		t.Errorf("--interval with σ = 1e-4: exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
	// Through --history as well.
	h := writeFile(t, t.TempDir(), "h.json", `[{"mech": "gaussian", "sigma": 1e-300, "q": 0.01, "steps": 10}]`)
	mh := runAccountJSON(t, "epsilon", "--history", h, "--delta", "1e-5")
	if v, ok := mh["epsilon"]; mh["accountant"] != "rdp" || !ok || v != nil {
		t.Errorf("--history: %v", mh)
	}
	out.Reset()
	errb.Reset()
	if code := runAccount([]string{"epsilon", "--history", h, "--delta", "1e-5", "--accountant", "pld", "--json"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "not representable") {
		t.Errorf("--history --accountant pld: exit %d, stderr %q", code, errb.String())
	}
	// A small σ that is representable gets a bound at least the exact
	// one-step ε of the Gaussian mechanism (Balle & Wang 2018, Theorem 8).
	m := runAccountJSON(t, "epsilon", "--mech", "gaussian", "--sigma", "3e-4", "--q", "1", "--steps", "1", "--delta", "1e-5", "--interval", "1")
	mu := 1 / (2 * 3e-4 * 3e-4)
	// δ(μ) = 1/2 − e^μ Φ(−√(2μ)) ≈ 1/2 > 1e-5, so the exact ε exceeds μ.
	lb := mu
	if e, ok := m["epsilon"].(float64); !ok || !(e >= lb) || m["accountant"] != "pld" {
		t.Errorf("σ = 3e-4: ε %v (%v), want ≥ %v from pld", m["epsilon"], m["accountant"], lb)
	}
}

// gaussianExactEpsilon is the exact ε(δ) of n compositions of the Gaussian
// mechanism with noise multiplier σ (sensitivity 1): one Gaussian with
// s = √n/σ, δ(ε) = Φ(−ε/s + s/2) − e^ε Φ(−ε/s − s/2) (Balle & Wang 2018,
// Theorem 8), by bisection.
func gaussianExactEpsilon(sigma float64, n int, delta float64) float64 {
	s := math.Sqrt(float64(n)) / sigma
	phi := func(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }
	d := func(e float64) float64 { return phi(-e/s+s/2) - math.Exp(e)*phi(-e/s-s/2) }
	lo, hi := 0.0, 1.0
	for d(hi) > delta {
		hi *= 2
	}
	for range 200 {
		mid := (lo + hi) / 2
		if d(mid) > delta {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// The unsubsampled Gaussian takes the default rule too (privacy.
// ChooseAccountant: PLD, it has one): at δ = 1e-10 the PLD is within 1e-5
// relative of the exact ε where the RDP accountant (the old default here)
// gave 114.57 and 106.71; --accountant rdp keeps its numbers.
func TestAccountEpsilonGaussianDefault(t *testing.T) {
	if testing.Short() {
		t.Skip("tilted PLD path: ~10 s")
	}
	for _, c := range []struct {
		sigma float64
		steps int
		rdp   float64
	}{{9.2501, 8387, 114.56555448363113}, {2.7878, 690, 106.71359237452126}} {
		args := []string{"epsilon", "--mech", "gaussian", "--sigma", fmtF(c.sigma), "--steps", fmtI(c.steps), "--delta", "1e-10"}
		m := runAccountJSON(t, args...)
		r := runAccountJSON(t, append(args, "--accountant", "rdp")...)
		exact := gaussianExactEpsilon(c.sigma, c.steps, 1e-10)
		e := m["epsilon"].(float64)
		t.Logf("σ = %v, %d steps, δ = 1e-10: pld %.6f, exact %.6f, rdp %.6f", c.sigma, c.steps, e, exact, r["epsilon"])
		if m["accountant"] != "pld" || !(e >= exact && e <= exact*(1+1e-5)) {
			t.Errorf("σ = %v: %v ε %v, exact %v", c.sigma, m["accountant"], e, exact)
		}
		if r["epsilon"] != c.rdp || r["order"] != 1.7 {
			t.Errorf("σ = %v: --accountant rdp ε %v (order %v), want %v", c.sigma, r["epsilon"], r["order"], c.rdp)
		}
	}
}

func fmtF(x float64) string { b, _ := json.Marshal(x); return string(b) }
func fmtI(n int) string     { b, _ := json.Marshal(n); return string(b) }

// Small δ: the PLD accountant reports min(PLD, RDP) and names it, with the
// tilted path's optimistic estimate (main:
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
	// Its optimistic estimate is the tilted path's (the fast path's, 0.904,
	// meant nothing): below the certified bound by at most the
	// discretization's drift (about h/2 per step; at most h asserted).
	if o, ok := m["epsilon_optimistic"].(float64); !ok || !(o <= m["epsilon"].(float64) && o >= m["epsilon"].(float64)-100*1e-4) {
		t.Errorf("δ = 1e-12: optimistic %v, certified %v", m["epsilon_optimistic"], m["epsilon"])
	}
	// Without subsampling the exact ε lies between the two.
	g := runAccountJSON(t, "epsilon", "--mech", "gaussian", "--sigma", "3", "--steps", "20", "--delta", "1e-12")
	exact := gaussianExactEpsilon(3, 20, 1e-12)
	if o, e := g["epsilon_optimistic"].(float64), g["epsilon"].(float64); !(o <= exact && exact <= e && exact-o <= 20*1e-4) || !strings.HasPrefix(g["detail"].(string), "pld tilted") {
		t.Errorf("σ = 3, 20 steps, δ = 1e-12: optimistic %v, exact %v, certified %v (%v)", o, exact, e, g["detail"])
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

// RDP options make the default rdp (privacy.ChooseAccountant, with the
// reason); the RDP accountant takes a --history too.
func TestAccountRDPOptionsDefault(t *testing.T) {
	m := runAccountJSON(t, "epsilon", "--mech", "gaussian", "--sigma", "1.1", "--q", "0.01", "--bound", "blackbox", "--steps", "100", "--delta", "1e-5")
	ref, _ := privacy.NewAccountant(privacy.KindRDP, privacy.AccountantConfig{})
	ref.Compose(privacy.PoissonSubsampled{Base: privacy.Gaussian{Sigma: 1.1}, Q: 0.01, Bound: privacy.SubsampleBlackBox}, 100)
	g, _ := ref.EpsilonFor(1e-5)
	if m["accountant"] != "rdp" || m["epsilon"] != g.Epsilon || !strings.Contains(m["accountant_reason"].(string), "subsampling bound blackbox") {
		t.Errorf("--bound blackbox: %v, want rdp ε %v", m, g.Epsilon)
	}
	h := writeFile(t, t.TempDir(), "h.json", `[{"mech": "gaussian", "sigma": 1.1, "q": 0.01, "steps": 100}, {"mech": "laplace", "b": 20, "steps": 2}]`)
	r := runAccountJSON(t, "epsilon", "--accountant", "rdp", "--history", h, "--delta", "1e-5")
	ref, _ = privacy.NewAccountant(privacy.KindRDP, privacy.AccountantConfig{})
	ref.Compose(privacy.PoissonSubsampled{Base: privacy.Gaussian{Sigma: 1.1}, Q: 0.01}, 100)
	ref.Compose(privacy.Laplace{B: 20}, 2)
	g, _ = ref.EpsilonFor(1e-5)
	if r["accountant"] != "rdp" || r["epsilon"] != g.Epsilon || r["steps"] != 102.0 {
		t.Errorf("--accountant rdp --history: %v, want ε %v", r, g.Epsilon)
	}
}
