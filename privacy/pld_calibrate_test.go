package privacy

import (
	"math"
	"testing"
)

// plainPLDEpsilon is the certified ε of prior (history replayed on a fresh
// accountant, nil: none) followed by steps SubsampledGaussian{q, σ} steps:
// what an accountant reports, computed without any of the calibrator's
// shortcuts (search grid, cached prior, upper-only compositions).
func plainPLDEpsilon(t *testing.T, prior []Composition, h, q, sigma float64, steps int, delta float64) float64 {
	t.Helper()
	a, err := NewPLDAccountant(h)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range prior {
		m, err := FromSpec(c.Spec)
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Compose(m, c.Count); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Compose(SubsampledGaussian{Q: q, Sigma: sigma}, steps); err != nil {
		t.Fatal(err)
	}
	g, err := a.EpsilonFor(delta)
	if err != nil {
		t.Fatal(err)
	}
	return g.Epsilon
}

// TestCalibrateSigmaPLDFast checks the search-grid calibration against its
// contract on plain, freshly composed accountants: the σ meets the target
// (certified grid), σ − CalibrationTolerance does not, it equals a plain
// bisection on the certified grid to the tolerance, and it is below RDP's σ
// (with and without a prior history: Algorithm 4).
func TestCalibrateSigmaPLDFast(t *testing.T) {
	const h, delta = 1e-3, 1e-5
	prior, _ := NewPLDAccountant(h)
	if err := prior.Compose(SubsampledGaussian{Q: 0.02, Sigma: 1.2}, 150); err != nil {
		t.Fatal(err)
	}
	rdpPrior, _ := NewRDPAccountant(nil)
	rdpPrior.Compose(SubsampledGaussian{Q: 0.02, Sigma: 1.2}, 150)
	for _, c := range []struct {
		name   string
		target float64
		q      float64
		steps  int
		prior  bool
	}{
		{"no prior", 1.5, 0.01, 300, false},
		{"after a prior round", 2.5, 0.005, 400, true},
		{"one step, q = 1", 3, 1, 1, false},
	} {
		req := CalibrationRequest{TargetEpsilon: c.target, Delta: delta, Q: c.q, Steps: c.steps, Accountant: KindPLD, PLDInterval: h}
		rreq := CalibrationRequest{TargetEpsilon: c.target, Delta: delta, Q: c.q, Steps: c.steps, Accountant: KindRDP}
		var hist []Composition
		if c.prior {
			req.Prior, req.PLDInterval, rreq.Prior, hist = prior, 0, &RDPAccounting{Acc: rdpPrior}, prior.History()
		}
		s, err := CalibrateSigma(req)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if e := plainPLDEpsilon(t, hist, h, c.q, s, c.steps, delta); e > c.target {
			t.Errorf("%s: σ = %v gives certified ε = %v > target %v", c.name, s, e, c.target)
		}
		if e := plainPLDEpsilon(t, hist, h, c.q, s-CalibrationTolerance, c.steps, delta); e <= c.target {
			t.Errorf("%s: σ − tol = %v already meets the target (ε = %v)", c.name, s-CalibrationTolerance, e)
		}
		plain := math.NaN()
		if !testing.Short() {
			var err error
			if plain, err = bisectSigma(func(sigma float64) (float64, error) {
				return plainPLDEpsilon(t, hist, h, c.q, sigma, c.steps, delta), nil
			}, c.target); err != nil {
				t.Fatal(err)
			}
			if math.Abs(s-plain) > CalibrationTolerance {
				t.Errorf("%s: σ = %v, plain certified bisection %v", c.name, s, plain)
			}
		}
		rdp, err := CalibrateSigma(rreq)
		if err != nil {
			t.Fatal(err)
		}
		if !(s <= rdp) {
			t.Errorf("%s: PLD σ %v above RDP σ %v", c.name, s, rdp)
		}
		t.Logf("%s: σ PLD %.6f (plain bisection %.6f), RDP %.6f", c.name, s, plain, rdp)

		// Floor: above the answer it is returned as is (and meets the
		// target); below it, the answer is.
		req.Floor = s + 0.05
		if f, err := CalibrateSigma(req); err != nil || f != req.Floor {
			t.Errorf("%s: floor %v above σ gives %v (%v)", c.name, req.Floor, f, err)
		}
		if e := plainPLDEpsilon(t, hist, h, c.q, req.Floor, c.steps, delta); e > c.target {
			t.Errorf("%s: floor %v returned but ε = %v > target", c.name, req.Floor, e)
		}
		req.Floor = s / 2
		if f, err := CalibrateSigma(req); err != nil || f != s {
			t.Errorf("%s: floor %v below σ = %v gives %v (%v)", c.name, req.Floor, s, f, err)
		}
	}
	if s, err := CalibrateSigma(CalibrationRequest{TargetEpsilon: 1, Delta: delta, Q: 0.01, Steps: 10, Accountant: KindRDP, Floor: 100}); err != nil || s != 100 {
		t.Errorf("a floor of 100 meeting the target on the RDP accountant gives %v (%v)", s, err)
	}
	if _, err := CalibrateSigma(CalibrationRequest{TargetEpsilon: 1, Delta: delta, Q: 0.01, Steps: 10, Accountant: KindPLD, Floor: math.NaN()}); err == nil {
		t.Error("a NaN floor was accepted")
	}
}

// refineSigma on closed forms: the smallest σ with eps(σ) ≤ target, to the
// tolerance, from guesses on either side and far away.
func TestRefineSigma(t *testing.T) {
	for _, c := range []struct {
		name   string
		eps    func(float64) float64
		target float64
		root   float64
	}{
		{"1/σ", func(s float64) float64 { return 1 / s }, 0.8, 1.25},
		{"1/σ²", func(s float64) float64 { return 1 / (s * s) }, 0.25, 2},
		{"exp(−σ)", func(s float64) float64 { return math.Exp(-s) }, math.Exp(-0.7), 0.7},
		{"step at 3 (+Inf below)", func(s float64) float64 {
			if s < 3 {
				return math.Inf(1)
			}
			return 0
		}, 1, 3},
	} {
		for _, guess := range []float64{c.root * 0.5, c.root * 0.999, c.root, c.root * 1.001, c.root * 3} {
			n := 0
			s, err := refineSigma(func(x float64) (float64, error) { n++; return c.eps(x), nil }, c.target, guess, CalibrationTolerance)
			if err != nil {
				t.Fatalf("%s from %v: %v", c.name, guess, err)
			}
			if !(c.eps(s) <= c.target && s-c.root <= CalibrationTolerance && s >= c.root-1e-12) {
				t.Errorf("%s from %v: σ = %v, root %v", c.name, guess, s, c.root)
			}
			if n > 60 {
				t.Errorf("%s from %v: %d evaluations", c.name, guess, n)
			}
		}
	}
}

// The cached squaring chain, the cached last self-composition and the
// accountant's prefix compositions give bit for bit what fresh objects do.
func TestPLDCachesBitForBit(t *testing.T) {
	const h = 1e-3
	m := SubsampledGaussian{Q: 0.02, Sigma: 0.9}
	p, _ := NewPLD(m, h)
	if _, err := p.SelfCompose(1000); err != nil { // fills the chain
		t.Fatal(err)
	}
	for _, n := range []int{1, 37, 512, 1000, 999} {
		fresh, _ := NewPLD(m, h)
		want, _ := fresh.SelfCompose(n)
		got, _ := p.SelfCompose(n)
		gw, _ := want.Epsilon(1e-5)
		gg, _ := got.Epsilon(1e-5)
		if gw != gg || len(want.dirs[0].upper.p) != len(got.dirs[0].upper.p) {
			t.Fatalf("n = %d: cached %+v, fresh %+v", n, gg, gw)
		}
		for i := range want.dirs[0].upper.p {
			if want.dirs[0].upper.p[i] != got.dirs[0].upper.p[i] {
				t.Fatalf("n = %d: mass %d differs", n, i)
			}
		}
	}
	// Accountant: incremental queries (prefix cache, shared PLDs) vs one
	// fresh composition of the same history.
	cache := NewPLDCache()
	a, _ := NewPLDAccountant(h)
	a.ShareCache(cache)
	b, _ := NewPLDAccountant(h)
	b.ShareCache(cache)
	steps := []struct {
		m Mechanism
		n int
	}{{m, 200}, {SubsampledGaussian{Q: 0.01, Sigma: 1.1}, 300}, {SubsampledGaussian{Q: 0.01, Sigma: 1.1}, 5}, {m, 7}}
	for i, s := range steps {
		a.Compose(s.m, s.n)
		b.Compose(s.m, s.n)
		ga, err := a.EpsilonFor(1e-5)
		if err != nil {
			t.Fatal(err)
		}
		f, _ := NewPLDAccountant(h)
		for _, c := range a.History() {
			mm, _ := FromSpec(c.Spec)
			f.Compose(mm, c.Count)
		}
		gf, _ := f.EpsilonFor(1e-5)
		gb, _ := b.EpsilonFor(1e-5)
		if ga != gf || gb != gf {
			t.Fatalf("after %d: incremental %+v, shared %+v, fresh %+v", i, ga, gb, gf)
		}
	}
}
