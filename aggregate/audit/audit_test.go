package audit

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/privtrain/privtrain/aggregate"
	"github.com/privtrain/privtrain/privacy"
)

// misreport runs inner but reports mech: a rule whose accounting claims
// more noise (or a smaller sensitivity) than it uses.
type misreport struct {
	inner aggregate.Aggregator
	mech  privacy.Mechanism
}

func (m misreport) Name() string { return "misreport-" + m.inner.Name() }

func (m misreport) Aggregate(g aggregate.Grads, rng *rand.Rand, out []float32) (aggregate.Report, error) {
	rep, err := m.inner.Aggregate(g, rng, out)
	rep.Mechanism = m.mech
	return rep, err
}

// floatSum is the Gaussian sum computed either in float32 with the noise
// rounded to float32 and added in float32 (the precision leak: the set of
// reachable outputs depends on the sum, Mironov, CCS 2012), or in float64
// and rounded once (post-processing of the Gaussian mechanism: no leak).
type floatSum struct {
	sigma, r float64
	leaky    bool
}

func (s floatSum) Name() string { return "float-sum" }

func (s floatSum) Aggregate(g aggregate.Grads, rng *rand.Rand, out []float32) (aggregate.Report, error) {
	for j := range out {
		var acc32 float32
		var acc64 float64
		for i := 0; i < g.M; i++ {
			acc32 += g.G[i*g.P+j]
			acc64 += float64(g.G[i*g.P+j])
		}
		noise := s.sigma * s.r * rng.NormFloat64()
		if s.leaky {
			out[j] = acc32 + float32(noise)
		} else {
			out[j] = float32(acc64 + noise)
		}
	}
	return aggregate.Report{Mechanism: privacy.Gaussian{Sigma: s.sigma}}, nil
}

func samples(short, long int) int {
	if testing.Short() {
		return short
	}
	return long
}

func factory(a func() aggregate.Aggregator) Factory {
	return func() (aggregate.Aggregator, error) { return a(), nil }
}

func mustNew(t *testing.T, name string, cfg aggregate.Config) aggregate.Aggregator {
	t.Helper()
	a, err := aggregate.New(name, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

var ptrCfg = aggregate.Config{Sigma: 1.1, ClipNorm: 1, Tau: 0.3, B: 1, Delta0: 1e-8, F: 40, FloatNoise: true}

// Each planted bug must be caught: the empirical ε exceeds the claim.
func TestPlantedBugsAreCaught(t *testing.T) {
	sum := aggregate.Config{Sigma: 1.1, ClipNorm: 1, FloatNoise: true}
	half := aggregate.Config{Sigma: 0.55, ClipNorm: 1, FloatNoise: true}
	noTest := aggregate.Config{Sigma: ptrCfg.Sigma * ptrCfg.Tau, ClipNorm: 1, F: ptrCfg.F, FloatNoise: true}
	ptrMech := privacy.PTR{Sigma1: 1.1, Tau: 0.3, B: 1, Delta0: 1e-8}
	for _, c := range []struct {
		name  string
		cfg   aggregate.Config
		agg   func() aggregate.Aggregator
		tests string
		cases []string
	}{
		{"noise scale halved", sum, func() aggregate.Aggregator {
			return misreport{mustNew(t, "sum", half), privacy.Gaussian{Sigma: 1.1}}
		}, TestsReal, nil},
		{"float32 precision leak", sum, func() aggregate.Aggregator { return floatSum{1.1, 1, true} }, TestsAll, nil},
		// PTR whose trimmed branch is released without the test: noise
		// calibrated to the proposed sensitivity τ, true sensitivity R.
		{"wrong sensitivity (PTR without its test)", ptrCfg, func() aggregate.Aggregator {
			return misreport{mustNew(t, "tsum", noTest), ptrMech}
		}, TestsReal, []string{"ptr-delta-zero"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := Run(c.name, factory(c.agg), c.cfg, Options{Samples: samples(200000, 1000000), Delta: 1e-3, Seed: 7, Tests: c.tests, Cases: c.cases})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("claimed %.3f, empirical %.3f (%s: %s)", r.ClaimedEpsilon, r.EmpiricalEpsilon, r.Case, r.Cases[0].Test)
			if !r.Exceeds || !(r.EmpiricalEpsilon > r.ClaimedEpsilon) {
				t.Errorf("bug not caught: empirical ε %.3f ≤ claimed %.3f", r.EmpiricalEpsilon, r.ClaimedEpsilon)
			}
		})
	}
}

// Correct mechanisms stay below their claim (at 95% confidence; a seed is
// fixed, so a failure is a real regression, not a coin flip).
func TestCorrectRulesStayBelowClaim(t *testing.T) {
	for _, c := range []struct {
		name  string
		cfg   aggregate.Config
		agg   func() aggregate.Aggregator
		tests string
		floor float64 // the audit must find at least this much
	}{
		{"sum", aggregate.Config{Sigma: 1.1, ClipNorm: 1, FloatNoise: true}, nil, TestsReal, 1.5},
		{"tsum", aggregate.Config{Sigma: 1.1, ClipNorm: 1, F: 5, FloatNoise: true}, nil, TestsReal, 1.5},
		{"ptr-tsum", ptrCfg, nil, TestsReal, 1.5},
		{"float64 sum, rounded once", aggregate.Config{Sigma: 1.1, ClipNorm: 1, FloatNoise: true}, func() aggregate.Aggregator { return floatSum{1.1, 1, false} }, TestsAll, 1.5},
		// The secure-noise releases resist the float32-granularity test the
		// float release fails (TestPlantedBugsAreCaught's precision leak).
		{"sum secure", aggregate.Config{Sigma: 1.1, ClipNorm: 1}, nil, TestsAll, 1.5},
		{"ptr-tsum secure", secure(ptrCfg), nil, TestsAll, 1.5},
	} {
		t.Run(c.name, func(t *testing.T) {
			opt := Options{Samples: samples(100000, 200000), Delta: 1e-3, Seed: 3, Tests: c.tests}
			var r *Result
			var err error
			if c.agg == nil {
				r, err = Rule(strings.Fields(c.name)[0], c.cfg, opt)
			} else {
				r, err = Run(c.name, factory(c.agg), c.cfg, opt)
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, cr := range r.Cases {
				t.Logf("%s: empirical %.3f (claim %.3f), %s", cr.Case, cr.EmpiricalEpsilon, r.ClaimedEpsilon, cr.Test)
			}
			if r.Exceeds {
				t.Errorf("correct rule audited above its claim: %.3f > %.3f in case %s", r.EmpiricalEpsilon, r.ClaimedEpsilon, r.Case)
			}
			if r.EmpiricalEpsilon < c.floor {
				t.Errorf("audit has no power: empirical ε %.3f < %.1f", r.EmpiricalEpsilon, c.floor)
			}
		})
	}
}

func secure(c aggregate.Config) aggregate.Config { c.FloatNoise = false; return c }

// The power requirement: sum at σ = 1.1, δ = 1e-3, 10⁶ samples
// finds ε ≥ 2.0 (exact 2.79, claimed ≈ 3.15).
func TestSumMillionSamples(t *testing.T) {
	if testing.Short() {
		t.Skip("10⁶ releases per batch: run without -short")
	}
	r, err := Rule("sum", aggregate.Config{Sigma: 1.1, ClipNorm: 1, FloatNoise: true}, Options{Samples: 1000000, Delta: 1e-3, Seed: 11, Tests: TestsReal})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("claimed %.3f, empirical %.3f in %.1fs", r.ClaimedEpsilon, r.EmpiricalEpsilon, r.Seconds)
	if r.EmpiricalEpsilon < 2.0 || r.EmpiricalEpsilon > 2.79 {
		t.Errorf("empirical ε %.3f outside [2.0, 2.79 (exact)]", r.EmpiricalEpsilon)
	}
	if math.Abs(r.ClaimedEpsilon-3.15) > 0.01 {
		t.Errorf("claimed ε %.4f, want ≈ 3.15", r.ClaimedEpsilon)
	}
}

// The PTR batches have the safety margins their names promise
// (aggregate.SafetyMargin is Theorem 5.1).
func TestPTRCasesSafetyMargins(t *testing.T) {
	cases, err := ptrCases(ptrCfg, nil, 2)
	if err != nil {
		t.Fatal(err)
	}
	thr := ptrCfg.B * math.Log(1/(2*ptrCfg.Delta0))
	k := int(math.Ceil(thr))
	want := map[string][2]int{"ptr-delta-zero": {0, 0}, "ptr-test-boundary": {k, k - 1}, "ptr-ls-at-tau": {ptrCfg.F, ptrCfg.F - 1}}
	for _, c := range cases {
		var got [2]int
		for i, g := range []aggregate.Grads{c.D, c.DPrime} {
			n := slices.Clone(g.Norms)
			slices.Sort(n)
			got[i] = aggregate.SafetyMargin(n, ptrCfg.F, ptrCfg.Tau, ptrCfg.ClipNorm)
		}
		if got != want[c.Name] {
			t.Errorf("%s: Δ(D), Δ(D′) = %v, want %v", c.Name, got, want[c.Name])
		}
		if c.DPrime.M != c.D.M+1 {
			t.Errorf("%s: D′ has %d rows, D %d: not add-one neighbours", c.Name, c.DPrime.M, c.D.M)
		}
	}
	if len(cases) != 3 {
		t.Errorf("got %d PTR cases, want 3", len(cases))
	}
}

func TestDeterministicAcrossWorkers(t *testing.T) {
	opt := Options{Samples: 9000, Delta: 1e-3, Seed: 5, Tests: TestsAll, Workers: 1}
	a, err := Rule("ptr-tsum", ptrCfg, opt)
	if err != nil {
		t.Fatal(err)
	}
	opt.Workers = 3
	b, err := Rule("ptr-tsum", ptrCfg, opt)
	if err != nil {
		t.Fatal(err)
	}
	for i := range a.Cases {
		if a.Cases[i].Counts != b.Cases[i].Counts || a.Cases[i].EmpiricalEpsilon != b.Cases[i].EmpiricalEpsilon {
			t.Errorf("case %s differs between 1 and 3 workers: %+v vs %+v", a.Cases[i].Case, a.Cases[i].Counts, b.Cases[i].Counts)
		}
	}
}

func TestBadOptions(t *testing.T) {
	cfg := aggregate.Config{Sigma: 1, ClipNorm: 1, FloatNoise: true}
	for _, o := range []Options{
		{Samples: 10, Delta: 1e-3},
		{Samples: 1000, Delta: 0},
		{Samples: 1000, Delta: 1e-3, Confidence: 1},
		{Samples: 1000, Delta: 1e-3, Tests: "some"},
		{Samples: 1000, Delta: 1e-3, Cases: []string{"nope"}},
	} {
		if _, err := Rule("sum", cfg, o); err == nil {
			t.Errorf("options %+v accepted", o)
		}
	}
	if _, err := Rule("sum", aggregate.Config{}, Options{Samples: 1000, Delta: 1e-3}); err == nil {
		t.Error("non-private rule accepted")
	}
	if _, err := Rule("no-such-rule", cfg, Options{Samples: 1000, Delta: 1e-3}); err == nil {
		t.Error("unknown rule accepted")
	}
}

func TestLowestBit(t *testing.T) {
	for _, c := range []struct {
		v    float32
		want float64
	}{{1, 0}, {0.5, -1}, {3, 0}, {0.75, -2}, {1 + 1.0/(1<<23), -23}, {-6, 1}, {0, 1000}, {math.SmallestNonzeroFloat32, -149}} {
		if got := lowestBit(c.v); got != c.want {
			t.Errorf("lowestBit(%v) = %v, want %v", c.v, got, c.want)
		}
	}
}

// Check (2) of docs/ptr-pld.md: ptr-tsum audited on its worst-case
// neighbours never exceeds the PLD accountant's one-step claim, for several
// (σ, τ, b, δ₀), σ < 4 included. The float release is audited over the
// reals (TestsReal): its float32 granularity leak exceeds every claim and is
// what the secure release fixes (TestPlantedBugsAreCaught).
func TestPTRAuditBelowPLDClaim(t *testing.T) {
	for _, cfg := range []aggregate.Config{
		ptrCfg,
		{Sigma: 0.7, ClipNorm: 1, Tau: 0.5, B: 0.5, Delta0: 1e-6, F: 20, FloatNoise: true},
		{Sigma: 2, ClipNorm: 1, Tau: 0.2, B: 2, Delta0: 1e-5, F: 40, FloatNoise: true},
	} {
		t.Run(fmt.Sprintf("σ=%v,τ=%v,b=%v,δ₀=%v", cfg.Sigma, cfg.Tau, cfg.B, cfg.Delta0), func(t *testing.T) {
			r, err := Rule("ptr-tsum", cfg, Options{Samples: samples(100000, 200000), Delta: 1e-3, Seed: 5, Tests: TestsReal})
			if err != nil {
				t.Fatal(err)
			}
			if r.ClaimedEpsilonPLD == nil {
				t.Fatal("ptr-tsum has no PLD claim")
			}
			for _, cr := range r.Cases {
				t.Logf("%s: empirical %.3f (PLD claim %.3f, RDP claim %.3f), %s", cr.Case, cr.EmpiricalEpsilon, *r.ClaimedEpsilonPLD, r.ClaimedEpsilon, cr.Test)
			}
			if !(*r.ClaimedEpsilonPLD <= r.ClaimedEpsilon) {
				t.Errorf("PLD claim %.4f above the RDP claim %.4f", *r.ClaimedEpsilonPLD, r.ClaimedEpsilon)
			}
			if r.ExceedsPLD || r.EmpiricalEpsilon > *r.ClaimedEpsilonPLD {
				t.Errorf("ptr-tsum audited above its PLD claim: %.3f > %.3f in case %s", r.EmpiricalEpsilon, *r.ClaimedEpsilonPLD, r.Case)
			}
		})
	}
}
