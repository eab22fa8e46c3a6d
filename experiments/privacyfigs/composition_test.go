package privacyfigs

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/privtrain/privtrain/privacy"
)

// checkComposition checks a Figure 3/5 panel: its numbers against fresh
// library calls, and the paper's claims on them.
func checkComposition(t *testing.T, dir, name string, s Settings, sigma1, tau float64) {
	h, rows := readCSV(t, filepath.Join(dir, name+".csv"))
	if len(rows) != len(s.Fig3Steps) {
		t.Fatalf("%s: %d rows, want %d", name, len(rows), len(s.Fig3Steps))
	}
	ks := column(t, h, rows, "iterations")
	white, black, direct := column(t, h, rows, colCompWhite), column(t, h, rows, colCompBlack), column(t, h, rows, colCompDirect)
	whiteOrd := column(t, h, rows, colCompWhiteOrder)
	stepEps, stepDel := column(t, h, rows, colDirectStepEps), column(t, h, rows, colDirectStepDel)
	slack, dTotal := column(t, h, rows, colDirectSlack), column(t, h, rows, colDirectDelta)

	// RDP curves: k times one step's curve (computed by a fresh accountant
	// with a single composition), converted by EpsilonFromRDP.
	p := privacy.PTR{Sigma1: sigma1, Tau: tau, B: s.B, Delta0: s.Fig3Delta0}
	orders := privacy.DefaultOrders()
	curve := func(b privacy.SubsampleBound) []float64 {
		a, err := privacy.NewRDPAccountant(orders)
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Compose(privacy.PoissonSubsampled{Base: p, Q: s.Fig3Q, Bound: b}, 1); err != nil {
			t.Fatal(err)
		}
		return a.RDP()
	}
	cw, cb := curve(privacy.SubsampleAuto), curve(privacy.SubsampleBlackBox)
	maxProven := maxProvenOrder(orders, s.Fig3Q, p)
	if maxProven < 10 {
		t.Fatalf("%s: Theorem 4.4 proven only up to α = %v", name, maxProven)
	}
	epsK := func(c []float64, k float64) float64 {
		r := make([]float64, len(c))
		for i := range c {
			r[i] = k * c[i]
		}
		e, _, err := privacy.EpsilonFromRDP(orders, r, s.Delta, privacy.ConversionBBG)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Abs(b) }
	for i, k := range ks {
		if w := epsK(cw, k); !near(white[i], w) {
			t.Errorf("%s k=%v: CSV white-box %v, library %v", name, k, white[i], w)
		}
		if b := epsK(cb, k); !near(black[i], b) {
			t.Errorf("%s k=%v: CSV black-box %v, library %v", name, k, black[i], b)
		}
		// Direct: recompute from the stored per-step δ and slack.
		deltaN := stepDel[i]/s.Fig3Q - s.Fig3Delta0
		e1, d1, err := privacy.PTRDirect(sigma1, s.B, s.Fig3Delta0, deltaN)
		if err != nil {
			t.Fatalf("%s k=%v: %v", name, k, err)
		}
		// Poisson amplification (BBG18 Theorem 8), written out here.
		ea := math.Log(1 + s.Fig3Q*(math.Exp(e1)-1))
		if !near(stepEps[i], ea) || !near(stepDel[i], s.Fig3Q*d1) {
			t.Errorf("%s k=%v: per-step (%v, %v), want (%v, %v)", name, k, stepEps[i], stepDel[i], ea, s.Fig3Q*d1)
		}
		eT, dT, err := privacy.StrongComposition(stepEps[i], stepDel[i], int(k), slack[i])
		if err != nil || eT != direct[i] || dT != dTotal[i] {
			t.Errorf("%s k=%v: CSV direct (%v, %v), library (%v, %v, %v)", name, k, direct[i], dTotal[i], eT, dT, err)
		}
		if !(dTotal[i] <= s.Delta*(1+1e-9)) {
			t.Errorf("%s k=%v: direct total δ %v exceeds %v", name, k, dTotal[i], s.Delta)
		}
		// The kept split is the best: no slack δ·j/10 does better.
		for j := 1; j <= 9; j++ {
			d, err := directComposedStep(sigma1, s.B, s.Fig3Delta0, s.Fig3Q, s.Delta, int(k), s.Delta*float64(j)/10)
			if err == nil && d.eps < direct[i] && d.deltaTotal <= s.Delta*(1+1e-9) {
				t.Errorf("%s k=%v: slack δ·%d/10 gives ε %v < CSV %v", name, k, j, d.eps, direct[i])
			}
		}
	}

	// Claims. All curves grow with k.
	for _, c := range [][]float64{white, black, direct} {
		for i := 1; i < len(c); i++ {
			if !(c[i] > c[i-1]) {
				t.Errorf("%s: ε not increasing at k=%v", name, ks[i])
			}
		}
	}
	// White-box never above black-box; equal only where the optimal order
	// is above Theorem 4.4's proven range; strictly below from 1000 steps on.
	for i, k := range ks {
		switch {
		case white[i] > black[i]:
			t.Errorf("%s k=%v: white-box %v above black-box %v", name, k, white[i], black[i])
		case white[i] == black[i] && whiteOrd[i] <= maxProven:
			t.Errorf("%s k=%v: white-box = black-box although the optimal order %v is proven (≤ %v)", name, k, whiteOrd[i], maxProven)
		case k >= 1000 && !(white[i] < 0.97*black[i]):
			t.Errorf("%s k=%v: white-box %v not clearly below black-box %v", name, k, white[i], black[i])
		}
	}
	// "Direct Analysis achieves lower privacy loss with very few iterations":
	// direct below white-box up to some k* ≤ 10, above both RDP curves after,
	// and at least twice the white-box ε at the last k.
	cross := -1
	for i := range ks {
		if direct[i] >= white[i] {
			cross = i
			break
		}
	}
	if cross < 1 || ks[cross] > 10 {
		t.Fatalf("%s: direct stops beating white-box at index %d (want 1 < k* ≤ 10)", name, cross)
	}
	for i := cross; i < len(ks); i++ {
		if !(direct[i] > black[i]) {
			t.Errorf("%s k=%v: direct %v not above black-box %v", name, ks[i], direct[i], black[i])
		}
	}
	if last := len(ks) - 1; !(direct[last] > 2*white[last]) {
		t.Errorf("%s: at k=%v direct %v not well above white-box %v", name, ks[last], direct[last], white[last])
	}
}

// TestFigure3Settings checks Figure 3's parameters against the brief and the
// white-box proof conditions: the plotted curve must use Theorem 4.4 at
// some orders.
func TestFigure3Settings(t *testing.T) {
	s := DefaultSettings()
	if s.Fig3Delta0 != 1e-8 || s.Delta != 1e-5 {
		t.Errorf("Figure 3 caption: δ0 = 1e-8, δ = 1e-5; got %v, %v", s.Fig3Delta0, s.Delta)
	}
	check := func(sigma1, tau float64) {
		p := privacy.PTR{Sigma1: sigma1, Tau: tau, B: s.B, Delta0: s.Fig3Delta0}
		m := privacy.PoissonSubsampled{Base: p, Q: s.Fig3Q, Bound: privacy.SubsampleAuto}
		used := false
		for _, a := range privacy.DefaultOrders() {
			v, err := m.RDP(a)
			if err != nil || !v.Valid {
				t.Fatalf("σ1=%v τ=%v α=%v: %v %v", sigma1, tau, a, v, err)
			}
			used = used || v.Bound == "ptr-whitebox-thm4.4"
		}
		if !used {
			t.Errorf("σ1=%v τ=%v: the auto bound never uses Theorem 4.4", sigma1, tau)
		}
	}
	check(s.Fig3Sigma1, s.Fig3Tau)
	for i, tau := range s.Fig5Taus {
		check(s.Fig5Sigma1[i], tau)
	}
}

func TestStepsGrid(t *testing.T) {
	g := stepsGrid(100, 4)
	want := []int{1, 2, 3, 6, 10, 18, 32, 56, 100}
	if len(g) != len(want) {
		t.Fatalf("stepsGrid(100, 4) = %v, want %v", g, want)
	}
	for i := range g {
		if g[i] != want[i] {
			t.Fatalf("stepsGrid(100, 4) = %v, want %v", g, want)
		}
	}
}

func TestDirectComposedErrors(t *testing.T) {
	// 1e4 steps at q·δ0 = 1e-9 each already spend δ = 1e-5.
	if _, err := directComposed(16, 1, 1e-8, 0.1, 1e-5, 10000, 9); err == nil {
		t.Errorf("impossible δ budget accepted")
	}
	if _, err := directComposedStep(16, 1, 1e-8, 0.01, 1e-5, 10, 2e-5); err == nil {
		t.Errorf("slack above δ accepted")
	}
	s := DefaultSettings()
	s.Fig5Sigma1 = s.Fig5Sigma1[:1]
	if _, err := GenerateWith(t.TempDir(), s); err == nil {
		t.Errorf("mismatched Figure 5 σ1 and τ accepted")
	}
	s = DefaultSettings()
	s.Fig3Steps = []int{1, 5, 5}
	if _, err := GenerateWith(t.TempDir(), s); err == nil {
		t.Errorf("non-increasing iteration counts accepted")
	}
}
