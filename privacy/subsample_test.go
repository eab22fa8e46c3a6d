package privacy

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

func TestPoissonSubsampledDispatch(t *testing.T) {
	inCond := PTR{Sigma1: 16, Tau: 0.5, B: 1, Delta0: 1e-8}
	mnist := PTR{Sigma1: 1.1, Tau: 0.5, B: 1, Delta0: 1e-8}
	for _, tc := range []struct {
		name      string
		m         PoissonSubsampled
		alpha     float64
		bound     string // prefix of RDPValue.Bound; "" = expect error
		valid     bool
		errSubstr string
	}{
		{"gaussian auto", PoissonSubsampled{Base: Gaussian{Sigma: 1}, Q: 0.01}, 8, "mtz19-integer", true, ""},
		{"gaussian whitebox frac", PoissonSubsampled{Base: Gaussian{Sigma: 1}, Q: 0.01, Bound: SubsampleWhiteBox}, 8.5, "mtz19-fractional", true, ""},
		{"gaussian blackbox", PoissonSubsampled{Base: Gaussian{Sigma: 1}, Q: 0.01, Bound: SubsampleBlackBox}, 8, "zw19-blackbox", true, ""},
		{"gaussian lower", PoissonSubsampled{Base: Gaussian{Sigma: 1}, Q: 0.01, Bound: SubsampleLower}, 8, "zw19-lower", false, ""},
		{"ptr auto proven", PoissonSubsampled{Base: inCond, Q: 0.01}, 10, "ptr-whitebox-thm4.4", true, ""},
		{"ptr auto outside", PoissonSubsampled{Base: inCond, Q: 0.01}, 40, "zw19-blackbox", true, ""},
		{"ptr auto mnist", PoissonSubsampled{Base: mnist, Q: 256.0 / 60000}, 10, "zw19-blackbox", true, ""},
		{"ptr whitebox proven", PoissonSubsampled{Base: inCond, Q: 0.01, Bound: SubsampleWhiteBox}, 10, "ptr-whitebox-thm4.4", true, ""},
		{"ptr whitebox outside", PoissonSubsampled{Base: mnist, Q: 0.01, Bound: SubsampleWhiteBox}, 10, "", false, "sigma2>=4"},
		{"ptr whitebox unproven", PoissonSubsampled{Base: mnist, Q: 0.01, Bound: SubsampleWhiteBox, AllowUnproven: true}, 10, "ptr-whitebox-thm4.4-unproven", false, ""},
		{"ptr blackbox", PoissonSubsampled{Base: inCond, Q: 0.01, Bound: SubsampleBlackBox}, 10, "zw19-blackbox", true, ""},
		{"ptr lower frac", PoissonSubsampled{Base: inCond, Q: 0.01, Bound: SubsampleLower}, 10.5, "zw19-lower-floor-order", false, ""},
		{"laplace auto", PoissonSubsampled{Base: Laplace{B: 1}, Q: 0.1}, 3, "zw19-blackbox", true, ""},
		{"laplace whitebox", PoissonSubsampled{Base: Laplace{B: 1}, Q: 0.1, Bound: SubsampleWhiteBox}, 3, "", false, "no white-box"},
		{"q=0", PoissonSubsampled{Base: mnist, Q: 0, Bound: SubsampleWhiteBox}, 3, "poisson-subsampled-q0", true, ""},
		{"q=1", PoissonSubsampled{Base: mnist, Q: 1}, 3, "ptr-thm4.3", true, ""},
		{"bad q", PoissonSubsampled{Base: mnist, Q: 1.5}, 3, "", false, "sampling rate"},
		{"nan q", PoissonSubsampled{Base: mnist, Q: math.NaN()}, 3, "", false, "sampling rate"},
		{"nil base", PoissonSubsampled{Q: 0.1}, 3, "", false, "nil"},
		{"bad base", PoissonSubsampled{Base: Gaussian{Sigma: -1}, Q: 0.1}, 3, "", false, "σ"},
		{"bad bound", PoissonSubsampled{Base: mnist, Q: 0.1, Bound: "tight"}, 3, "", false, "unknown subsampling bound"},
		{"bad order", PoissonSubsampled{Base: mnist, Q: 0.1}, 1, "", false, "order"},
	} {
		v, err := tc.m.RDP(tc.alpha)
		if tc.bound == "" {
			if err == nil || !strings.Contains(err.Error(), tc.errSubstr) {
				t.Errorf("%s: want error containing %q, got %v (value %+v)", tc.name, tc.errSubstr, err, v)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !strings.HasPrefix(v.Bound, tc.bound) || v.Valid != tc.valid || !(v.Epsilon >= 0) || math.IsInf(v.Epsilon, 0) {
			t.Errorf("%s: got %+v, want bound %q valid %v", tc.name, v, tc.bound, tc.valid)
		}
	}
}

// Auto is the tightest proven value: never above the black-box bound, equal
// to min(white-box, black-box) where Theorem 4.4 holds.
func TestPoissonSubsampledAutoIsTightestProven(t *testing.T) {
	p := PTR{Sigma1: 16, Tau: 0.5, B: 1, Delta0: 1e-8}
	for _, a := range append(DefaultOrders(), 128, 256) {
		auto, err := PoissonSubsampled{Base: p, Q: 0.01}.RDP(a)
		if err != nil {
			t.Fatal(err)
		}
		bb, _ := PoissonSubsampled{Base: p, Q: 0.01, Bound: SubsampleBlackBox}.RDP(a)
		if !auto.Valid || auto.Epsilon > bb.Epsilon {
			t.Errorf("α=%v: auto %+v vs black-box %+v", a, auto, bb)
		}
		if WhiteBoxConditions(0.01, p, a) == nil {
			wb, _ := PoissonSubsampled{Base: p, Q: 0.01, Bound: SubsampleWhiteBox}.RDP(a)
			if auto.Epsilon != math.Min(wb.Epsilon, bb.Epsilon) {
				t.Errorf("α=%v: auto %v, want min(%v, %v)", a, auto.Epsilon, wb.Epsilon, bb.Epsilon)
			}
		}
	}
}

// Figure 2 setting within Theorem 4.4's conditions (q=0.01, b=1, δ0=1e-8,
// τ=0.5, σ1=16 so that σ2=8 ≥ 4; the brief's σ1=4 gives σ2=2 < 4): the
// white-box bound is below the black-box bound from α=3 to the largest
// proven order, and above the ZW19 lower bound.
func TestFigure2WhiteBoxTighter(t *testing.T) {
	p := PTR{Sigma1: 16, Tau: 0.5, B: 1, Delta0: 1e-8}
	n := 0
	for a := 3.0; WhiteBoxConditions(0.01, p, a) == nil; a++ {
		wb, _ := PoissonSubsampled{Base: p, Q: 0.01, Bound: SubsampleWhiteBox}.RDP(a)
		bb, _ := PoissonSubsampled{Base: p, Q: 0.01, Bound: SubsampleBlackBox}.RDP(a)
		lo, _ := PoissonSubsampled{Base: p, Q: 0.01, Bound: SubsampleLower}.RDP(a)
		if !(lo.Epsilon <= wb.Epsilon && wb.Epsilon < bb.Epsilon) {
			t.Errorf("α=%v: want lower %.6g ≤ white-box %.6g < black-box %.6g", a, lo.Epsilon, wb.Epsilon, bb.Epsilon)
		}
		n++
	}
	if n < 20 {
		t.Errorf("only %d proven integer orders ≥ 3", n)
	}
}

func TestPoissonSubsampledSpecRoundTrip(t *testing.T) {
	resolve := func(s Spec) (Mechanism, error) {
		switch s.Kind {
		case "gaussian":
			return Gaussian{Sigma: s.Params["sigma"]}, nil
		case "ptr":
			return PTR{Sigma1: s.Params["sigma1"], Tau: s.Params["tau"], B: s.Params["b"], Delta0: s.Params["delta0"]}, nil
		}
		return nil, fmt.Errorf("unknown kind %q", s.Kind)
	}
	for _, m := range []PoissonSubsampled{
		{Base: Gaussian{Sigma: 1.3}, Q: 0.004},
		{Base: PTR{Sigma1: 1.1, Tau: 0.5, B: 1, Delta0: 1e-8}, Q: 0.01, Bound: SubsampleWhiteBox, AllowUnproven: true},
		{Base: PTR{Sigma1: 16, Tau: 0.5, B: 1, Delta0: 1e-8}, Q: 0.01, Bound: SubsampleLower},
	} {
		s := m.Spec()
		if s.Kind != "poisson-subsampled" || s.Inner == nil || s.Params["q"] != m.Q {
			t.Fatalf("bad spec %+v", s)
		}
		got, err := poissonSubsampledFromSpec(s, resolve)
		if err != nil {
			t.Fatal(err)
		}
		want := m
		want.Bound = want.Bound.orAuto()
		if got != want {
			t.Errorf("round trip: got %+v, want %+v", got, want)
		}
	}
	bad := PoissonSubsampled{Base: Gaussian{Sigma: 1}, Q: 0.1}.Spec()
	bad.Options["allow_unproven"] = "maybe"
	if _, err := poissonSubsampledFromSpec(bad, resolve); err == nil {
		t.Errorf("bad option accepted")
	}
	bad = PoissonSubsampled{Base: Gaussian{Sigma: 1}, Q: 0.1}.Spec()
	bad.Params["q"] = 2
	if _, err := poissonSubsampledFromSpec(bad, resolve); err == nil {
		t.Errorf("q=2 accepted")
	}
	bad.Inner = nil
	if _, err := poissonSubsampledFromSpec(bad, resolve); err == nil {
		t.Errorf("missing inner accepted")
	}
}
