package optim

import (
	"strings"
	"testing"
	"time"

	"github.com/privtrain/privtrain/aggregate"
	"github.com/privtrain/privtrain/privacy"
	"github.com/privtrain/privtrain/randstream"
)

// TestMakePrivatePTRTarget: with a target ε, MakePrivate calibrates ptr-tsum's
// σ on the PTR mechanism: Steps Poisson-subsampled PTR{σ, τ/R, b, δ₀} steps
// meet the target on a fresh accountant of the same kind (recomputed here,
// independently of the calibration), σ − CalibrationTolerance does not, the
// rule plans exactly PTR{σ, …} and the trainer's accountant charges it. The
// default accountant of the PTR step is the PLD one (its PLD is proven,
// docs/ptr-pld.md); RDP is the paper's.
func TestMakePrivatePTRTarget(t *testing.T) {
	const (
		q, steps, target, delta = 0.2, 20, 2.0, 1e-5
		r, tau, b, delta0       = 1.0, 0.5, 4.0, 1e-8
	)
	for _, tc := range []struct {
		accountant string // "" = the default
		wantKind   string
	}{
		{privacy.KindRDP, privacy.KindRDP},
		{"", privacy.KindPLD},
	} {
		t.Run(tc.wantKind, func(t *testing.T) {
			if testing.Short() && tc.wantKind == privacy.KindPLD {
				t.Skip("PTR on the PLD: a coarse-grid search and a few certified evaluations of seconds each")
			}
			t0 := time.Now()
			p, err := MakePrivate(tinyModel(t), tinyData(25), PrivateConfig{
				ClipNorm: r, BatchSize: 5, TargetEpsilon: target, Steps: steps, Delta: delta, LR: 0.1,
				Rule: "ptr-tsum", Tau: tau, LaplaceB: b, Delta0: delta0, TrimLevel: 1,
				Accountant: tc.accountant, Key: randstream.FromSeed(3),
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("σ = %.6f in %v", p.Sigma, time.Since(t0))
			if p.Q != q || p.Accountant.Kind() != tc.wantKind || !p.Secure {
				t.Fatalf("q = %v, accountant %s, secure %v", p.Q, p.Accountant.Kind(), p.Secure)
			}
			mech := func(s float64) privacy.Mechanism {
				return privacy.PTR{Sigma1: s, Tau: tau / r, B: b, Delta0: delta0}
			}
			if got, err := aggregate.PlannedMechanism(p.Aggregator); err != nil || got != mech(p.Sigma) {
				t.Fatalf("rule plans %v (%v), want %v", got, err, mech(p.Sigma))
			}
			eps := func(s float64) float64 {
				a, err := privacy.NewAccountant(tc.wantKind, privacy.AccountantConfig{})
				if err != nil {
					t.Fatal(err)
				}
				if err := a.Compose(privacy.PoissonSubsampled{Base: mech(s), Q: q}, steps); err != nil {
					t.Fatal(err)
				}
				g, err := a.EpsilonFor(delta)
				if err != nil {
					t.Fatal(err)
				}
				return g.Epsilon
			}
			at, below := eps(p.Sigma), eps(p.Sigma-privacy.CalibrationTolerance)
			t.Logf("ε(σ) = %.6f, ε(σ − %g) = %.6f, target %v", at, privacy.CalibrationTolerance, below, target)
			if !(at <= target) || !(below > target) {
				t.Errorf("σ = %v is not the smallest meeting ε = %v: ε(σ) = %v, ε(σ − tol) = %v", p.Sigma, target, at, below)
			}
			if _, err := p.Train(steps); err != nil {
				t.Fatal(err)
			}
			g, err := p.Epsilon()
			if err != nil || g.Epsilon != at {
				t.Errorf("after %d steps the trainer reports ε = %v (%v), want the recomputed %v", steps, g.Epsilon, err, at)
			}
		})
	}
}

// TestMakePrivatePTRTargetRejects: an invalid PTR setting is reported as
// such before the σ search, and a target below the test's own cost (its
// Laplace part does not shrink with σ) as unreachable.
func TestMakePrivatePTRTargetRejects(t *testing.T) {
	base := PrivateConfig{ClipNorm: 1, BatchSize: 5, TargetEpsilon: 2, Steps: 20, Delta: 1e-5, LR: 0.1,
		Rule: "ptr-tsum", Tau: 0.5, LaplaceB: 4, Delta0: 1e-8, Accountant: privacy.KindRDP, Key: randstream.FromSeed(3)}
	for _, tc := range []struct {
		name   string
		mutate func(*PrivateConfig)
		want   string
	}{
		{"tau", func(c *PrivateConfig) { c.Tau = 1 }, "0 < τ < R"},
		{"b", func(c *PrivateConfig) { c.LaplaceB = 0 }, "ptr-tsum"},
		{"test cost", func(c *PrivateConfig) { c.LaplaceB, c.TargetEpsilon = 0.05, 0.5 }, "unreachable"},
	} {
		cfg := base
		tc.mutate(&cfg)
		if _, err := MakePrivate(tinyModel(t), tinyData(25), cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want mention of %q", tc.name, err, tc.want)
		}
	}
}
