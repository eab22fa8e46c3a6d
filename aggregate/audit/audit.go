package audit

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/privtrain/privtrain/aggregate"
	"github.com/privtrain/privtrain/privacy"
	"github.com/privtrain/privtrain/privacy/audit"
)

// Factory returns a new instance of the audited rule (one per goroutine:
// aggregators are not safe for concurrent use).
type Factory func() (aggregate.Aggregator, error)

// Tests selects the statistics the audit may use.
const (
	// TestsAll uses the real-valued statistics and the float32 granularity
	// test (floating-point leaks).
	TestsAll = "all"
	// TestsReal uses only real-valued statistics: it audits the mechanism
	// as analysed over the reals, ignoring floating-point effects.
	TestsReal = "real"
)

// Options configures an audit.
type Options struct {
	// Samples is N, the number of releases drawn on each batch of each
	// case (≥ 200); the first half selects the test, the second evaluates it.
	Samples int
	// Delta is the δ at which ε is bounded, in (0, 1).
	Delta float64
	// Confidence is the probability, over the audit's randomness, that the
	// reported bound (the maximum over all cases) holds; default 0.95.
	Confidence float64
	// Dim is the gradient dimension P of the audit batches (default 2).
	Dim int
	// Workers is the number of goroutines (0: GOMAXPROCS).
	Workers int
	// Seed drives all noise of the audit.
	Seed uint64
	// Tests is TestsAll (default) or TestsReal.
	Tests string
	// Cases, if not empty, restricts the audit to the named cases.
	Cases []string
}

// ErrOptions is wrapped by every error caused by invalid options (as
// opposed to a failure of the audited rule).
var ErrOptions = errors.New("invalid audit options")

// maxValues caps N·P per batch (two batches of float32 are held per case).
const maxValues = 1 << 26

func (o *Options) defaults() error {
	if err := o.check(); err != nil {
		return fmt.Errorf("%w: %w", ErrOptions, err)
	}
	return nil
}

func (o *Options) check() error {
	if o.Confidence == 0 {
		o.Confidence = 0.95
	}
	if o.Dim == 0 {
		o.Dim = 2
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	if o.Tests == "" {
		o.Tests = TestsAll
	}
	switch {
	case o.Samples < 200:
		return fmt.Errorf("audit: at least 200 samples per batch are needed, got %d", o.Samples)
	case !(o.Delta > 0 && o.Delta < 1):
		return fmt.Errorf("audit: δ must be in (0, 1), got %v", o.Delta)
	case !(o.Confidence > 0 && o.Confidence < 1):
		return fmt.Errorf("audit: confidence must be in (0, 1), got %v", o.Confidence)
	case o.Dim < 1:
		return fmt.Errorf("audit: dimension must be ≥ 1, got %d", o.Dim)
	case o.Tests != TestsAll && o.Tests != TestsReal:
		return fmt.Errorf("audit: tests must be %q or %q, got %q", TestsAll, TestsReal, o.Tests)
	case int64(o.Samples)*int64(o.Dim) > maxValues:
		return fmt.Errorf("audit: samples × dimension = %d exceeds %d values per batch", int64(o.Samples)*int64(o.Dim), maxValues)
	}
	return nil
}

// CaseResult is the audit of one pair of neighbouring batches.
type CaseResult struct {
	Case        string `json:"case"`
	Description string `json:"description"`
	// EmpiricalEpsilon is the lower confidence bound on ε at δ from this
	// case (at the per-case confidence, see Result.Confidence).
	EmpiricalEpsilon float64 `json:"empirical_epsilon"`
	// Test is the distinguishing test chosen on the first half;
	// SelectionEpsilon its bound there (not a valid audit result).
	Test             string       `json:"test"`
	SelectionEpsilon float64      `json:"selection_epsilon"`
	Counts           audit.Counts `json:"counts"`
	// PassRateD, PassRateDPrime are the fractions of releases whose PTR test
	// passed (rules with a test only).
	PassRateD      *float64 `json:"pass_rate_d,omitempty"`
	PassRateDPrime *float64 `json:"pass_rate_dprime,omitempty"`
	Seconds        float64  `json:"seconds"`
}

// Result is the audit of a rule.
type Result struct {
	Rule      string       `json:"rule"`
	Mechanism privacy.Spec `json:"mechanism"`
	Delta     float64      `json:"delta"`
	// ClaimedEpsilon is the accountant's one-step ε at Delta (RDP of the
	// reported mechanism, Balle et al. 2020 conversion), ClaimOrder its order.
	ClaimedEpsilon float64 `json:"claimed_epsilon"`
	ClaimOrder     float64 `json:"claim_order"`
	// EmpiricalEpsilon is the largest per-case bound and Case its case. With
	// probability ≥ Confidence every per-case bound holds simultaneously
	// (each case is evaluated at (1 − Confidence)/#cases).
	EmpiricalEpsilon float64      `json:"empirical_epsilon"`
	Case             string       `json:"case"`
	Confidence       float64      `json:"confidence"`
	Samples          int          `json:"samples"`
	Tests            string       `json:"tests"`
	Cases            []CaseResult `json:"cases"`
	Seconds          float64      `json:"seconds"`
	// Exceeds is true when the empirical ε is above the claim: the rule
	// leaks more than its accountant says (at the stated confidence).
	Exceeds bool `json:"exceeds_claim"`
	// ClaimedEpsilonPLD is the PLD accountant's certified one-step ε at
	// Delta when the mechanism has a proven privacy loss distribution
	// (privacy.HasPLD; nil otherwise), and ExceedsPLD whether the empirical
	// ε is above it.
	ClaimedEpsilonPLD *float64 `json:"claimed_epsilon_pld,omitempty"`
	ExceedsPLD        bool     `json:"exceeds_pld_claim,omitempty"`
}

// Rule audits the registered rule name configured by cfg (its secure
// release unless cfg.FloatNoise, as aggregate.New).
func Rule(name string, cfg aggregate.Config, opt Options) (*Result, error) {
	if _, err := aggregate.New(name, cfg); err != nil {
		return nil, err
	}
	return Run(name, func() (aggregate.Aggregator, error) { return aggregate.New(name, cfg) }, cfg, opt)
}

// Run audits the rule made by newAgg; cfg is the configuration the rule's
// claim refers to (its R, F, τ, b, δ₀ shape the worst-case batches).
//
// Method: for the rule it builds worst-case neighbouring batches D, D′
// (add/remove of one gradient) from the sensitivity analysis of the
// mechanism the rule reports — the Gaussian rules' add-one-gradient case,
// PTR's cases where the test is about to pass, where Δ = 0 and where the
// trimmed sum's local sensitivity sits at τ, the RGM's relative-sensitivity
// cases — draws N releases of each through the aggregate.Aggregator
// interface (in parallel, one aggregator instance per goroutine), chooses a
// distinguishing test on the first half of the releases and evaluates it on
// the second half, and converts the test's error rates into a lower
// confidence bound on ε at δ (privacy/audit).
//
// Tests are threshold events on a few statistics of the release: the
// projection on the difference of the two mean releases, the distances to
// each mean, every coordinate, and (Tests "all") the float32 granularity of
// the most-changed coordinate, which catches floating-point leaks of the
// kind Mironov (CCS 2012) showed for textbook Laplace noise.
func Run(name string, newAgg Factory, cfg aggregate.Config, opt Options) (*Result, error) {
	start := time.Now()
	if err := opt.defaults(); err != nil {
		return nil, err
	}
	mech, err := probe(newAgg, cfg, opt.Dim)
	if err != nil {
		return nil, fmt.Errorf("audit %s: %w", name, err)
	}
	build, ok := builders[mech.Spec().Kind]
	if !ok {
		return nil, fmt.Errorf("audit %s: no worst-case batches known for mechanism kind %q (known: %v)", name, mech.Spec().Kind, Kinds())
	}
	cases, err := build(cfg, mech, opt.Dim)
	if err != nil {
		return nil, fmt.Errorf("audit %s: %w", name, err)
	}
	if len(opt.Cases) > 0 {
		var kept []Case
		for _, c := range cases {
			for _, want := range opt.Cases {
				if c.Name == want {
					kept = append(kept, c)
				}
			}
		}
		if len(kept) == 0 {
			var names []string
			for _, c := range cases {
				names = append(names, c.Name)
			}
			return nil, fmt.Errorf("audit %s: %w: none of the cases %v exists (cases: %v)", name, ErrOptions, opt.Cases, names)
		}
		cases = kept
	}
	res := &Result{Rule: name, Mechanism: mech.Spec(), Delta: opt.Delta, Confidence: opt.Confidence, Samples: opt.Samples, Tests: opt.Tests}
	if res.ClaimedEpsilon, res.ClaimOrder, err = claim(mech, opt.Delta); err != nil {
		return nil, fmt.Errorf("audit %s: claimed ε: %w", name, err)
	}
	if privacy.HasPLD(mech) {
		eps, err := claimPLD(mech, opt.Delta)
		if err != nil {
			return nil, fmt.Errorf("audit %s: claimed ε (pld): %w", name, err)
		}
		res.ClaimedEpsilonPLD = &eps
	}
	alpha := (1 - opt.Confidence) / float64(len(cases))
	for ci, c := range cases {
		cr, err := runCase(newAgg, mech, c, ci, alpha, opt)
		if err != nil {
			return nil, fmt.Errorf("audit %s, case %s: %w", name, c.Name, err)
		}
		res.Cases = append(res.Cases, cr)
		if ci == 0 || cr.EmpiricalEpsilon > res.EmpiricalEpsilon {
			res.EmpiricalEpsilon, res.Case = cr.EmpiricalEpsilon, cr.Case
		}
	}
	res.Exceeds = res.EmpiricalEpsilon > res.ClaimedEpsilon
	if res.ClaimedEpsilonPLD != nil {
		res.ExceedsPLD = res.EmpiricalEpsilon > *res.ClaimedEpsilonPLD
	}
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

// probe aggregates an empty batch once to learn the mechanism the rule
// reports.
func probe(newAgg Factory, cfg aggregate.Config, dim int) (privacy.Mechanism, error) {
	a, err := newAgg()
	if err != nil {
		return nil, err
	}
	g := aggregate.Grads{G: []float32{}, Norms: []float64{}, P: dim, ClipNorm: cfg.ClipNorm}
	rep, err := a.Aggregate(g, rand.New(rand.NewPCG(1, 2)), make([]float32, dim))
	if err != nil {
		return nil, fmt.Errorf("probe release: %w", err)
	}
	if rep.Mechanism == nil {
		return nil, errors.New("the rule reports no privacy mechanism (not private: σ = 0?)")
	}
	return rep.Mechanism, nil
}

// claim is the accountant's ε at δ for one run of mech.
func claim(mech privacy.Mechanism, delta float64) (eps, order float64, err error) {
	acct, err := privacy.NewRDPAccountant(privacy.DefaultOrders())
	if err != nil {
		return 0, 0, err
	}
	if err := acct.Compose(mech, 1); err != nil {
		return 0, 0, err
	}
	r, err := acct.Epsilon(delta, privacy.DefaultConversion)
	if err != nil {
		return 0, 0, err
	}
	return r.Epsilon, r.Order, nil
}

// claimPLD is the PLD accountant's certified ε at δ for one run of mech.
func claimPLD(mech privacy.Mechanism, delta float64) (float64, error) {
	p, err := privacy.NewPLD(mech, privacy.DefaultPLDInterval)
	if err != nil {
		return 0, err
	}
	g, err := p.Epsilon(delta)
	if err != nil {
		return 0, err
	}
	return g.Epsilon, nil
}

// block is the number of releases drawn from one random stream; streams
// are keyed by (seed, case, side, block), so results do not depend on the
// number of workers.
const block = 4096

// sample draws n releases of batch g, in parallel, into a flat n×P slice,
// and returns the fraction of releases whose PTR test passed (−1 if the
// rule has no test).
func sample(newAgg Factory, mech privacy.Mechanism, g aggregate.Grads, n, workers int, seed uint64) ([]float32, float64, error) {
	p := g.P
	out := make([]float32, n*p)
	nb := (n + block - 1) / block
	var next atomic.Int64
	var passed, tested atomic.Int64
	errs := make([]error, workers)
	want := mech.Spec()
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			agg, err := newAgg()
			if err != nil {
				errs[w] = err
				return
			}
			local := aggregate.Grads{G: append([]float32(nil), g.G...), Norms: append([]float64(nil), g.Norms...), M: g.M, P: p, ClipNorm: g.ClipNorm}
			for {
				b := int(next.Add(1)) - 1
				if b >= nb {
					return
				}
				rng := rand.New(rand.NewPCG(seed, uint64(b)))
				var pass, test int64
				for i := b * block; i < min((b+1)*block, n); i++ {
					rep, err := agg.Aggregate(local, rng, out[i*p:(i+1)*p])
					if err != nil {
						errs[w] = err
						return
					}
					// The full spec comparison allocates: once per block.
					if rep.Mechanism == nil || (i == b*block && !sameSpec(rep.Mechanism.Spec(), want)) {
						errs[w] = fmt.Errorf("release %d reported mechanism %v, the first release %v", i, rep.Mechanism, want)
						return
					}
					if d, ok := rep.Diagnostics.(aggregate.PTRDiagnostics); ok && d.Branch != aggregate.NoPTRTest {
						test++
						if d.Branch == aggregate.PTRPassed {
							pass++
						}
					}
				}
				passed.Add(pass)
				tested.Add(test)
			}
		}(w)
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, 0, err
	}
	rate := -1.0
	if t := tested.Load(); t > 0 {
		rate = float64(passed.Load()) / float64(t)
	}
	return out, rate, nil
}

// sameSpec compares two specs (fmt prints maps in key order).
func sameSpec(a, b privacy.Spec) bool { return fmt.Sprint(a) == fmt.Sprint(b) }

// streamSeed derives the seed of (case, side).
func streamSeed(seed uint64, ci int, side string) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%d/%s", seed, ci, side)
	return h.Sum64()
}

func runCase(newAgg Factory, mech privacy.Mechanism, c Case, ci int, alpha float64, opt Options) (CaseResult, error) {
	start := time.Now()
	n, p := opt.Samples, opt.Dim
	if c.D.P != p || c.DPrime.P != p {
		return CaseResult{}, fmt.Errorf("case batches have dimension %d/%d, audit dimension %d", c.D.P, c.DPrime.P, p)
	}
	a, rateA, err := sample(newAgg, mech, c.D, n, opt.Workers, streamSeed(opt.Seed, ci, "D"))
	if err != nil {
		return CaseResult{}, fmt.Errorf("releases on D: %w", err)
	}
	b, rateB, err := sample(newAgg, mech, c.DPrime, n, opt.Workers, streamSeed(opt.Seed, ci, "D'"))
	if err != nil {
		return CaseResult{}, fmt.Errorf("releases on D′: %w", err)
	}
	for _, v := range append(a, b...) {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return CaseResult{}, errors.New("a release is not finite")
		}
	}
	h := n / 2
	selA, selB := a[:h*p], b[:h*p]
	evA, evB := a[h*p:2*h*p], b[h*p:2*h*p]
	stats := statistics(selA, selB, h, p, opt.Tests == TestsAll)
	t, err := choose(stats, selA, selB, h, p, opt.Delta, alpha, opt.Workers)
	if err != nil {
		return CaseResult{}, err
	}
	counts := evaluate(t, evA, evB, h, p)
	eps, err := audit.EmpiricalEpsilon(counts, opt.Delta, alpha)
	if err != nil {
		return CaseResult{}, err
	}
	cr := CaseResult{
		Case: c.Name, Description: c.Description, EmpiricalEpsilon: eps,
		Test: t.String(), SelectionEpsilon: t.selection, Counts: counts,
	}
	if rateA >= 0 {
		cr.PassRateD, cr.PassRateDPrime = &rateA, &rateB
	}
	cr.Seconds = time.Since(start).Seconds()
	return cr, nil
}
