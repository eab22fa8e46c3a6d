package privacy

import (
	"math"
	"strings"
	"testing"
)

// TestChooseAccountant: the one default rule, with its reasons.
func TestChooseAccountant(t *testing.T) {
	sub := func(sigma float64, b SubsampleBound) Mechanism {
		return PoissonSubsampled{Base: Gaussian{Sigma: sigma}, Q: 0.01, Bound: b}
	}
	for _, c := range []struct {
		name   string
		cfg    AccountantConfig
		ms     []Mechanism
		want   string
		reason string
	}{
		{"subsampled gaussian", AccountantConfig{}, []Mechanism{sub(1.1, "")}, KindPLD, "has a proven privacy loss distribution"},
		{"bound auto", AccountantConfig{}, []Mechanism{sub(1.1, SubsampleAuto)}, KindPLD, "has a proven"},
		{"gaussian", AccountantConfig{}, []Mechanism{Gaussian{Sigma: 1}}, KindPLD, "gaussian has a proven"},
		{"history", AccountantConfig{}, []Mechanism{Gaussian{Sigma: 1}, Laplace{B: 2}}, KindPLD, "every mechanism"},
		{"none", AccountantConfig{}, nil, KindPLD, "every mechanism"},
		{"rgm", AccountantConfig{}, []Mechanism{Gaussian{Sigma: 1}, RGM{Eta: 0.1, Gamma: 1, Dim: 10}}, KindRDP, "pld cannot account rgm"},
		{"σ = 1e-300", AccountantConfig{}, []Mechanism{sub(1e-300, "")}, KindRDP, "not representable"},
		{"grid too large", AccountantConfig{}, []Mechanism{sub(0.01, "")}, KindRDP, "points at interval 0.0001"},
		{"grid at a coarser interval", AccountantConfig{Interval: 0.1}, []Mechanism{sub(0.01, "")}, KindPLD, "has a proven"},
		{"orders", AccountantConfig{Orders: []float64{2, 3}}, []Mechanism{sub(1.1, "")}, KindRDP, "options of the rdp accountant given (orders)"},
		{"conversion", AccountantConfig{Conversion: ConversionBBG}, []Mechanism{sub(1.1, "")}, KindRDP, "conversion bbg"},
		{"allow unproven", AccountantConfig{AllowUnproven: true}, []Mechanism{sub(1.1, "")}, KindRDP, "allow-unproven"},
		{"black-box bound", AccountantConfig{}, []Mechanism{sub(1.1, SubsampleBlackBox)}, KindRDP, "subsampling bound blackbox"},
	} {
		got, why := ChooseAccountant(c.cfg, c.ms...)
		if got != c.want || !strings.Contains(why, c.reason) {
			t.Errorf("%s: %s (%q), want %s (%q)", c.name, got, why, c.want, c.reason)
		}
		if len(c.ms) == 1 && c.cfg.Interval == 0 && c.cfg.Orders == nil && c.cfg.Conversion == "" && !c.cfg.AllowUnproven {
			if d := DefaultAccountant(c.ms[0]); d != got {
				t.Errorf("%s: DefaultAccountant %s, ChooseAccountant %s", c.name, d, got)
			}
		}
		// The accountant picked accepts the mechanisms.
		for _, m := range c.ms {
			if err := CheckAccountant(got, m); err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
		}
	}
	if DefaultAccountant(nil) != KindRDP {
		t.Errorf("DefaultAccountant(nil) = %s", DefaultAccountant(nil))
	}
}

// TestSubsampledGaussianTinySigma: where the MTZ19 sums cannot be
// evaluated (σ² underflows), the RDP is the unsubsampled Gaussian's
// α/(2σ²), an upper bound (quasi-convexity): +Inf or at least the
// subsampled lower bound (1/(α−1))·log(q^α·e^{α(α−1)/(2σ²)}) = (α·log q)/(α−1) + α/(2σ²);
// never an error, NaN, 0 or −Inf.
func TestSubsampledGaussianTinySigma(t *testing.T) {
	for _, c := range []struct{ sigma, alpha float64 }{
		{1e-300, 1.5}, {1e-300, 2}, {1e-170, 1.1}, {1e-170, 32}, {1e-160, 2.5}, {1e-150, 1.1}, {1e-150, 2}, {1e-140, 3.5},
	} {
		v, err := SubsampledGaussian{Q: 0.01, Sigma: c.sigma}.RDP(c.alpha)
		if err != nil || !v.Valid {
			t.Fatalf("σ = %v, α = %v: %v, %v", c.sigma, c.alpha, v, err)
		}
		lb := c.alpha*math.Log(0.01)/(c.alpha-1) + c.alpha/(2*c.sigma*c.sigma)
		if math.IsNaN(v.Epsilon) || !(v.Epsilon >= lb || math.IsInf(v.Epsilon, 1)) {
			t.Errorf("σ = %v, α = %v: %v (%s), want ≥ %v", c.sigma, c.alpha, v.Epsilon, v.Bound, lb)
		}
		t.Logf("σ = %v, α = %v: %v (%s)", c.sigma, c.alpha, v.Epsilon, v.Bound)
	}
	// An ordinary σ keeps the MTZ19 series.
	if v, _ := (SubsampledGaussian{Q: 0.01, Sigma: 1.1}).RDP(2.5); v.Bound != "mtz19-fractional" {
		t.Errorf("σ = 1.1: bound %s", v.Bound)
	}
}
