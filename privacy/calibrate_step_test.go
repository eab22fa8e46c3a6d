package privacy

import (
	"math"
	"strings"
	"testing"
)

// TestCalibrateSigmaStep: with Step the generic bisection calibrates any
// step mechanism. For Step(σ) = Gaussian{σ} on RDP it must agree, within
// CalibrationTolerance, with the accountant's own Gaussian calibration (a
// different code path: curves summed directly); for PTR it returns the
// smallest σ meeting the target (checked on a fresh accountant at σ and
// σ − tolerance); an invalid step and an unreachable target are refused.
func TestCalibrateSigmaStep(t *testing.T) {
	req := CalibrationRequest{TargetEpsilon: 2, Delta: 1e-5, Q: 0.01, Steps: 1000, Accountant: KindRDP}
	fast, err := CalibrateSigma(req)
	if err != nil {
		t.Fatal(err)
	}
	g := req
	g.Step = func(s float64) Mechanism { return Gaussian{Sigma: s} }
	generic, err := CalibrateSigma(g)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(generic-fast) > CalibrationTolerance {
		t.Errorf("Gaussian through Step: σ = %v, the RDP calibration %v", generic, fast)
	}

	ptr := func(s float64) Mechanism { return PTR{Sigma1: s, Tau: 0.4, B: 5, Delta0: 1e-8} }
	p := req
	p.Step = ptr
	s, err := CalibrateSigma(p)
	if err != nil {
		t.Fatal(err)
	}
	eps := func(s float64) float64 {
		a, err := NewAccountant(KindRDP, AccountantConfig{})
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Compose(PoissonSubsampled{Base: ptr(s), Q: req.Q}, req.Steps); err != nil {
			t.Fatal(err)
		}
		g, err := a.EpsilonFor(req.Delta)
		if err != nil {
			t.Fatal(err)
		}
		return g.Epsilon
	}
	if at, below := eps(s), eps(s-CalibrationTolerance); !(at <= req.TargetEpsilon) || !(below > req.TargetEpsilon) {
		t.Errorf("PTR: σ = %v, ε(σ) = %v, ε(σ − tol) = %v, target %v", s, at, below, req.TargetEpsilon)
	}

	for _, tc := range []struct {
		name string
		step func(float64) Mechanism
		eps  float64
		want string
	}{
		{"invalid step", func(s float64) Mechanism { return PTR{Sigma1: s, Tau: 2, B: 1, Delta0: 1e-8} }, 2, "step mechanism"},
		{"nil step mechanism", func(float64) Mechanism { return nil }, 2, "step mechanism"},
		// The test's Laplace part costs ε regardless of σ.
		{"below the test's cost", func(s float64) Mechanism { return PTR{Sigma1: s, Tau: 0.4, B: 0.05, Delta0: 1e-8} }, 0.5, "unreachable"},
	} {
		r := req
		r.Step, r.TargetEpsilon = tc.step, tc.eps
		if _, err := CalibrateSigma(r); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want mention of %q", tc.name, err, tc.want)
		}
	}
}
