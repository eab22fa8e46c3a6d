package privacy

import (
	"errors"
	"math"
	"testing"
)

// exactEpsilon inverts a hockey-stick curve δ(ε) (non-increasing in ε) by
// bisection: the exact ε at δ of one run of the pair.
func exactEpsilon(hs func(float64) float64, delta, hi float64) float64 {
	lo := 0.0
	if hs(0) <= delta {
		return 0
	}
	for hs(hi) > delta {
		hi *= 2
	}
	for range 200 {
		mid := (lo + hi) / 2
		if hs(mid) > delta {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// Losses that no grid represents (σ or b → 0: the loss scale overflows or
// leaves the grid) are refused with ErrPLDRange — never ε = 0 or −Inf as
// main reported before (σ = 1e-300, q = 0.01 gave ε = 0; σ = 1e-170, q = 1
// gave −Inf).
func TestPLDUnrepresentableRefused(t *testing.T) {
	for _, c := range []struct {
		name string
		m    Mechanism
		h    float64
	}{
		{"subsampled σ=1e-300 q=0.01", SubsampledGaussian{Q: 0.01, Sigma: 1e-300}, 0},
		{"poisson-subsampled σ=1e-300 q=0.01", PoissonSubsampled{Base: Gaussian{Sigma: 1e-300}, Q: 0.01}, 0},
		{"poisson-subsampled σ=1e-170 q=1", PoissonSubsampled{Base: Gaussian{Sigma: 1e-170}, Q: 1}, 0},
		{"gaussian σ=1e-170", Gaussian{Sigma: 1e-170}, 0},
		{"gaussian σ=1e-4 (μ = 5e7)", Gaussian{Sigma: 1e-4}, 1},
		{"subsampled σ=1e-4 q=0.5", SubsampledGaussian{Q: 0.5, Sigma: 1e-4}, 1},
		{"gaussian σ=1e-3 at h=1e-4 (grid too large)", Gaussian{Sigma: 1e-3}, 0},
		{"laplace b=1e-300", Laplace{B: 1e-300}, 0},
		{"laplace b=1e-8", Laplace{B: 1e-8}, 1},
		{"subsampled laplace b=1e-300", PoissonSubsampled{Base: Laplace{B: 1e-300}, Q: 0.01}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := NewPLD(c.m, c.h); !errors.Is(err, ErrPLDRange) {
				t.Errorf("NewPLD: err %v, want ErrPLDRange", err)
			}
			a, _ := NewPLDAccountant(c.h)
			if err := a.Compose(c.m, 10); !errors.Is(err, ErrPLDRange) {
				t.Errorf("Compose: err %v, want ErrPLDRange", err)
			}
			if a.Steps() != 0 {
				t.Errorf("refused Compose left %d steps", a.Steps())
			}
		})
	}
}

// Near the representable limit the bound is accepted and never below a
// known valid lower bound: the exact ε of one run (Balle & Wang 2018,
// Theorem 8; ZDW22 Theorem 11 for subsampling; the Laplace profile), which
// bounds the composition of n ≥ 1 runs from below.
func TestPLDSmallNoiseNotBelowTruth(t *testing.T) {
	for _, c := range []struct {
		name  string
		m     Mechanism
		pair  lossPair
		h     float64
		steps int
		delta float64
	}{
		{"gaussian σ=3e-4 (μ = 5.6e6)", Gaussian{Sigma: 3e-4}, gaussianPair{sigma: 3e-4}, 1, 1, 1e-5},
		{"gaussian σ=0.01", Gaussian{Sigma: 0.01}, gaussianPair{sigma: 0.01}, 0.01, 3, 1e-5},
		{"subsampled σ=0.01 q=0.01", SubsampledGaussian{Q: 0.01, Sigma: 0.01}, subsampledPair{base: gaussianPair{sigma: 0.01}, q: 0.01, remove: true}, 0.05, 10, 1e-5},
		{"subsampled σ=0.05 q=0.01 δ=1e-10", SubsampledGaussian{Q: 0.01, Sigma: 0.05}, subsampledPair{base: gaussianPair{sigma: 0.05}, q: 0.01, remove: true}, 1e-3, 10, 1e-10},
		{"laplace b=1e-6", Laplace{B: 1e-6}, laplacePair{b: 1e-6}, 1, 1, 1e-5},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, _ := NewPLDAccountant(c.h)
			if err := a.Compose(c.m, c.steps); err != nil {
				t.Fatal(err)
			}
			g, err := a.EpsilonFor(c.delta)
			if err != nil {
				t.Fatal(err)
			}
			lb := exactEpsilon(c.pair.hockeyStick, c.delta, 1)
			if !(g.Epsilon >= lb) || math.IsNaN(g.Epsilon) || lb <= 0 {
				t.Errorf("ε %v (%s) below the exact one-run ε %v", g.Epsilon, g.Bound, lb)
			}
		})
	}
}

// Where the PLD bound is above the RDP bound (here: a coarse interval),
// EpsilonFor reports the RDP bound of the same history and says so;
// elsewhere the PLD bound, never above RDP. At small δ the PLD bound comes
// from the tilted path (before it, the fast path's +Inf made these three
// cases report RDP's 2.0406, 2.3273 and 1.8045).
func TestPLDReportsMinWithRDP(t *testing.T) {
	m := SubsampledGaussian{Q: 0.004266, Sigma: 1.1}
	for _, c := range []struct {
		steps     int
		delta     float64
		h         float64
		wantBound string
	}{
		{100, 1e-12, 0, BoundPLD},  // 1.2973 (fast path alone: +Inf)
		{1000, 1e-12, 0, BoundPLD}, // 1.6512
		{1500, 1e-9, 0, BoundPLD},  // 1.2116
		{1000, 1e-5, 0, BoundPLD},  // the usual regime: the PLD is tighter
		{200, 1e-7, 0, BoundPLD},
		{1000, 1e-5, 0.5, BoundRDP}, // interval 0.5: the discretization costs more than RDP
	} {
		a, _ := NewPLDAccountant(c.h)
		if err := a.Compose(m, c.steps); err != nil {
			t.Fatal(err)
		}
		g, err := a.EpsilonFor(c.delta)
		if err != nil {
			t.Fatal(err)
		}
		r, _ := NewRDPAccountant(nil)
		r.Compose(m, c.steps)
		e, _ := r.Epsilon(c.delta, ConversionBBG)
		if math.IsInf(g.Epsilon, 0) || g.Epsilon > e.Epsilon || g.Bound != c.wantBound || g.Accountant != KindPLD {
			t.Errorf("%d steps δ=%g: ε %v bound %q (%s), RDP %v; want bound %q", c.steps, c.delta, g.Epsilon, g.Bound, g.Detail, e.Epsilon, c.wantBound)
		}
		if c.wantBound == BoundRDP && g.Epsilon != e.Epsilon {
			t.Errorf("%d steps δ=%g: ε %v, want the RDP bound %v", c.steps, c.delta, g.Epsilon, e.Epsilon)
		}
		// DeltaFor at the reported ε stays ≤ δ (same min rule).
		gd, err := a.DeltaFor(g.Epsilon)
		// (The tilted path answers ε and δ with tilts and tails chosen for
		// each query: both are certified, and agree to 1e-4 relative.)
		if err != nil || !(gd.Delta <= c.delta*(1+1e-4)) {
			t.Errorf("%d steps: δ(%v) = %v (%s), err %v; want ≤ %g", c.steps, g.Epsilon, gd.Delta, gd.Bound, err, c.delta)
		}
		// A clone and a JSON round trip answer the same.
		b := a.cloneP()
		gb, _ := b.EpsilonFor(c.delta)
		data, _ := a.MarshalJSON()
		var u PLDAccountant
		if err := u.UnmarshalJSON(data); err != nil {
			t.Fatal(err)
		}
		gu, _ := u.EpsilonFor(c.delta)
		if gb != g || gu.Epsilon != g.Epsilon || gu.Bound != g.Bound {
			t.Errorf("clone %v / restored %v, want %v", gb.Epsilon, gu.Epsilon, g.Epsilon)
		}
	}
}

// ε(δ) is finite and non-decreasing in the number of steps on a fine grid
// of lengths at small δ (main: 1.684 at 1,396 steps, 1.810 at 1,397, +Inf
// at 1,500 for δ = 1e-9).
func TestPLDEpsilonMonotoneSmallDelta(t *testing.T) {
	m := SubsampledGaussian{Q: 0.004266, Sigma: 1.1}
	stride := 1
	if testing.Short() {
		stride = 7
	}
	for _, delta := range []float64{1e-9, 1e-12} {
		cache := NewPLDCache()
		prev := 0.0
		for n := 1390; n <= 1510; n += stride {
			a, _ := NewPLDAccountant(0)
			a.DropOptimistic() // certified ε only (bit for bit the same)
			a.ShareCache(cache)
			if err := a.Compose(m, n); err != nil {
				t.Fatal(err)
			}
			g, err := a.EpsilonFor(delta)
			if err != nil {
				t.Fatal(err)
			}
			if math.IsInf(g.Epsilon, 0) || math.IsNaN(g.Epsilon) || g.Epsilon < prev {
				t.Errorf("δ=%g, %d steps: ε %v (%s) after %v", delta, n, g.Epsilon, g.Bound, prev)
			}
			prev = g.Epsilon
		}
	}
}

// MaxSteps counts the steps the reported bound allows: at δ = 1e-9 that is
// at least the RDP accountant's answer (main: 1,396 from the PLD alone), and
// the reported ε after them is within the target.
func TestPLDMaxStepsSmallDelta(t *testing.T) {
	m := SubsampledGaussian{Q: 0.004266, Sigma: 1.1}
	const target, delta, limit = 3.0, 1e-9, 20000
	a, _ := NewPLDAccountant(0)
	n, err := a.MaxSteps(m, target, delta, limit)
	if err != nil {
		t.Fatal(err)
	}
	r, _ := NewRDPAccounting("", AccountantOptions{})
	nr, err := r.MaxSteps(m, target, delta, limit)
	if err != nil {
		t.Fatal(err)
	}
	if n < nr || nr < 5000 {
		t.Errorf("MaxSteps %d, RDP %d", n, nr)
	}
	if err := a.Compose(m, n); err != nil {
		t.Fatal(err)
	}
	g, err := a.EpsilonFor(delta)
	if err != nil || !(g.Epsilon <= target) {
		t.Errorf("after %d steps ε %v (%s), err %v; want ≤ %v", n, g.Epsilon, g.Bound, err, target)
	}
}

// The per-step ε of the metrics (EpsilonBound) is finite, non-decreasing
// step by step at small δ and at most the RDP bound.
func TestPLDEpsilonBoundMonotoneSmallDelta(t *testing.T) {
	m := SubsampledGaussian{Q: 0.004266, Sigma: 1.1}
	const delta = 1e-9
	a, _ := NewPLDAccountant(0)
	if err := a.Compose(m, 1380); err != nil {
		t.Fatal(err)
	}
	prev := 0.0
	for n := 1381; n <= 1520; n++ {
		if err := a.Compose(m, 1); err != nil {
			t.Fatal(err)
		}
		g, err := a.EpsilonBound(delta, 0)
		if err != nil {
			t.Fatal(err)
		}
		if math.IsInf(g.Epsilon, 0) || g.Epsilon < prev {
			t.Errorf("%d steps: per-step ε %v (%s) after %v", n, g.Epsilon, g.Bound, prev)
		}
		prev = g.Epsilon
		if n%35 == 0 {
			// Both are certified bounds; the per-step one (at g.Steps ≥ n
			// steps) is min(PLD, RDP) there, so at most the RDP bound.
			r, _ := NewRDPAccountant(nil)
			r.Compose(m, g.Steps)
			e, _ := r.Epsilon(delta, ConversionBBG)
			if g.Steps < n || g.Epsilon > e.Epsilon {
				t.Errorf("%d steps: per-step ε %v at %d steps above RDP %v", n, g.Epsilon, g.Steps, e.Epsilon)
			}
		}
	}
}
