package runner

import (
	"context"
	"math"
	"testing"

	"github.com/privtrain/privtrain/privacy"
)

func auditConfig(method string, sigma float64, steps int) TrainConfig {
	c := DefaultConfig()
	c.Method, c.Model, c.Dataset = method, "logreg", "mnist"
	c.Sigma, c.ClipNorm, c.LR, c.BatchSize, c.Steps = sigma, 1, 0.5, 600, steps
	c.TargetEpsilon, c.Corruption, c.CorruptionRatio, c.DynamicF = 0, "", 0, false
	c.Tau, c.LaplaceB, c.Delta0, c.TrimFraction = 0.5, 1, 1e-8, 0.1
	c.Out = "" // as AuditRun does: no run directory, the noise key stays in memory
	return c
}

// A DP-SGD run with little noise leaks a lot: the one-run audit must find
// it (power), and never exceed the accountant's claim.
func TestAuditRunDPSGD(t *testing.T) {
	cases := []struct {
		sigma float64
		floor float64
	}{{0.1, 1.2}}
	if !testing.Short() {
		cases = append(cases, struct{ sigma, floor float64 }{0.5, 0.2})
	}
	for _, c := range cases {
		res, err := AuditRun(context.Background(), auditConfig("dpsgd", c.sigma, 200), RunAuditOptions{Canaries: 1000})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("σ=%v: claimed %.3f, empirical %.3f (%s; final model %.3f, white box %.3f), %d canary rows",
			c.sigma, res.ClaimedEpsilon, res.EmpiricalEpsilon, res.Case, res.FinalModel.Epsilon, res.WhiteBox.Epsilon, res.CanaryRows)
		if res.EmpiricalEpsilon > res.ClaimedEpsilon {
			t.Errorf("σ=%v: empirical ε %.3f above the claim %.3f", c.sigma, res.EmpiricalEpsilon, res.ClaimedEpsilon)
		}
		if res.EmpiricalEpsilon < c.floor {
			t.Errorf("σ=%v: empirical ε %.3f below %.1f: the audit lost its power", c.sigma, res.EmpiricalEpsilon, c.floor)
		}
		// ≈ 500 included canaries × 200 steps × q = 0.01.
		want := float64(res.FinalModel.Included) * 200 * res.Q
		if math.Abs(float64(res.CanaryRows)-want) > 5*math.Sqrt(want) {
			t.Errorf("%d canary rows, want ≈ %.0f", res.CanaryRows, want)
		}
		if res.Steps != 200 || res.Samples != 1000 || res.Confidence != 0.95 {
			t.Errorf("result %+v does not describe the run", res)
		}
	}
}

func TestAuditRunPTR(t *testing.T) {
	res, err := AuditRun(context.Background(), auditConfig("tsgd-ptr", 0.5, 50), RunAuditOptions{Canaries: 200})
	if err != nil {
		t.Fatal(err)
	}
	if res.PTRTests != 50 || res.EmpiricalEpsilon > res.ClaimedEpsilon || res.ClaimedEpsilon <= 0 {
		t.Errorf("PTR run audit: %+v", res)
	}
}

func TestAuditRunRejects(t *testing.T) {
	bad := []struct {
		cfg TrainConfig
		opt RunAuditOptions
	}{
		{auditConfig("nonprivate", 0, 10), RunAuditOptions{}},
		{auditConfig("dpsgd", 1, 10), RunAuditOptions{Canaries: 1}},
		{auditConfig("dpsgd", 1, 10), RunAuditOptions{Canaries: 100, Guesses: []int{101}}},
		{auditConfig("dpsgd", 1, 10), RunAuditOptions{Canaries: 100000}},
		{auditConfig("dpsgd", 1, 10), RunAuditOptions{Norm: -1}},
	}
	for _, b := range bad {
		if _, err := AuditRun(context.Background(), b.cfg, b.opt); err == nil {
			t.Errorf("accepted %s with %+v", b.cfg.Method, b.opt)
		}
	}
}

// A planted accounting bug: the run trains with σ = 0.1 but its accountant
// claims σ = 10. The one-run audit must report an ε above that claim.
func TestAuditRunCatchesMisreportedNoise(t *testing.T) {
	cfg := auditConfig("dpsgd", 0.1, 200)
	j, err := buildJob(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	q := j.expected / float64(j.train.N)
	bogus, err := privacy.NewRDPAccountant(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := bogus.Compose(privacy.PoissonSubsampled{Base: privacy.Gaussian{Sigma: 10}, Q: q, Bound: privacy.SubsampleAuto}, 200); err != nil {
		t.Fatal(err)
	}
	j.acct = &privacy.RDPAccounting{Acc: bogus}
	res, err := auditJob(context.Background(), j, cfg, RunAuditOptions{Canaries: 1000, Norm: 1, Confidence: 0.95, Guesses: []int{20, 100, 500, 1000}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("claimed %.4f (bogus σ = 10), empirical %.3f (%s)", res.ClaimedEpsilon, res.EmpiricalEpsilon, res.Case)
	if !(res.EmpiricalEpsilon > res.ClaimedEpsilon) {
		t.Errorf("misreported noise not caught: empirical %.3f ≤ claimed %.3f", res.EmpiricalEpsilon, res.ClaimedEpsilon)
	}
}
