package privacy

import "testing"

// benchEpsilon composes the history through a PLD accountant and queries
// ε at δ, reporting it and the process's CPU time per op (less sensitive
// to a loaded machine than wall time).
func benchEpsilon(b *testing.B, delta float64, compose func(a *PLDAccountant) error) {
	b.ReportAllocs()
	var eps float64
	t0 := cpuTime()
	defer func() { b.ReportMetric(float64(cpuTime()-t0)/float64(b.N), "cpu-ns/op") }()
	for i := 0; i < b.N; i++ {
		a, _ := NewPLDAccountant(0)
		if err := compose(a); err != nil {
			b.Fatal(err)
		}
		g, err := a.EpsilonFor(delta)
		if err != nil {
			b.Fatal(err)
		}
		eps = g.Epsilon
	}
	b.ReportMetric(eps, "ε")
}

// BenchmarkPLDAccountant20000 is 20,000 identical DP-SGD steps (σ = 1.1,
// q = 256/60000) at δ = 1e-8 (the issue's +Inf case on main).
func BenchmarkPLDAccountant20000(b *testing.B) {
	benchEpsilon(b, 1e-8, func(a *PLDAccountant) error {
		return a.Compose(SubsampledGaussian{Q: 256.0 / 60000, Sigma: 1.1}, 20000)
	})
}

// BenchmarkPLD1000Distinct is a schedule of 1,000 distinct mechanisms
// (σ from 0.8 to 2.0, q = 0.01, 10 steps each) at δ = 1e-5.
func BenchmarkPLD1000Distinct(b *testing.B) {
	benchEpsilon(b, 1e-5, func(a *PLDAccountant) error {
		for i := 0; i < 1000; i++ {
			if err := a.Compose(SubsampledGaussian{Q: 0.01, Sigma: 0.8 + 1.2*float64(i)/999}, 10); err != nil {
				return err
			}
		}
		return nil
	})
}

// BenchmarkPLDPDPPlan20 is what a 20-group PDP-SGD plan composes
// (optim/pdpsgd: group k is sampled at rate q·π_k with π_k = k/20, its own
// accountant composing the plan's rounds; here 5 rounds of 200 steps at
// σ = 1.0 … 1.4, q = 0.01) and queries each group's ε at δ = 1e-5.
func BenchmarkPLDPDPPlan20(b *testing.B) {
	b.ReportAllocs()
	var worst float64
	t0 := cpuTime()
	defer func() { b.ReportMetric(float64(cpuTime()-t0)/float64(b.N), "cpu-ns/op") }()
	for i := 0; i < b.N; i++ {
		worst = 0
		for k := 1; k <= 20; k++ {
			a, _ := NewPLDAccountant(0)
			a.DropOptimistic()
			for r := 0; r < 5; r++ {
				m := PoissonSubsampled{Base: Gaussian{Sigma: 1 + 0.1*float64(r)}, Q: 0.01 * float64(k) / 20}
				if err := a.Compose(m, 200); err != nil {
					b.Fatal(err)
				}
			}
			g, err := a.EpsilonFor(1e-5)
			if err != nil {
				b.Fatal(err)
			}
			worst = max(worst, g.Epsilon)
		}
	}
	b.ReportMetric(worst, "ε")
}

// BenchmarkPLDOrdinary is an ordinary query: 21,353 DP-SGD steps
// (σ = 1.1, q = 0.004266) at δ = 1e-5, answered by the fast path alone.
func BenchmarkPLDOrdinary(b *testing.B) {
	benchEpsilon(b, 1e-5, func(a *PLDAccountant) error {
		return a.Compose(SubsampledGaussian{Q: 0.004266, Sigma: 1.1}, 21353)
	})
}
