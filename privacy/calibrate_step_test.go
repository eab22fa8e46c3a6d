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

// TestCalibrateSigmaStepPLD: on the PLD accountant a Step mechanism (PTR)
// goes through the coarse-grid search and certified refinement
// (pld_calibrate.go), not the generic bisection. Its σ meets the target on
// a fresh accountant, σ − CalibrationTolerance does not, it equals the
// generic certified bisection to the tolerance (without -short), with a
// prior history too; the PTR floor it cannot go below is refused.
func TestCalibrateSigmaStepPLD(t *testing.T) {
	const h, delta, q, steps = 1e-3, 1e-5, 0.05, 50
	ptr := func(s float64) Mechanism { return PTR{Sigma1: s, Tau: 0.5, B: 2, Delta0: 1e-7} }
	prior, err := NewPLDAccountant(h)
	if err != nil {
		t.Fatal(err)
	}
	if err := prior.Compose(PoissonSubsampled{Base: ptr(3), Q: q}, 30); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		target float64
		prior  bool
	}{{"no prior", 2, false}, {"after a prior round", 3, true}} {
		req := CalibrationRequest{TargetEpsilon: c.target, Delta: delta, Q: q, Steps: steps, Accountant: KindPLD, PLDInterval: h, Step: ptr}
		fresh := func() Accountant {
			a, err := NewPLDAccountant(h)
			if err != nil {
				t.Fatal(err)
			}
			if c.prior {
				if err := a.Compose(PoissonSubsampled{Base: ptr(3), Q: q}, 30); err != nil {
					t.Fatal(err)
				}
			}
			return a
		}
		if c.prior {
			req.Prior, req.Accountant, req.PLDInterval = prior.CloneAccountant(), "", 0
		}
		s, err := CalibrateSigma(req)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		eps := func(sigma float64) (float64, error) { return epsilonAfter(fresh(), req, sigma) }
		at, _ := eps(s)
		below, _ := eps(s - CalibrationTolerance)
		if !(at <= c.target) || !(below > c.target) {
			t.Errorf("%s: σ = %v: ε(σ) = %v, ε(σ − tol) = %v, target %v", c.name, s, at, below, c.target)
		}
		if !testing.Short() {
			plain, err := bisectSigma(eps, c.target)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(s-plain) > CalibrationTolerance {
				t.Errorf("%s: σ = %v, generic certified bisection %v", c.name, s, plain)
			}
			t.Logf("%s: σ %.6f, generic bisection %.6f", c.name, s, plain)
		}
	}
	// The test's Laplace part costs ε regardless of σ.
	req := CalibrationRequest{TargetEpsilon: 0.3, Delta: delta, Q: 1, Steps: 1, Accountant: KindPLD, PLDInterval: h,
		Step: func(s float64) Mechanism { return PTR{Sigma1: s, Tau: 0.5, B: 0.05, Delta0: 1e-7} }}
	if _, err := CalibrateSigma(req); err == nil || !strings.Contains(err.Error(), "unreachable") {
		t.Errorf("below the test's cost: err = %v, want unreachable", err)
	}
}
