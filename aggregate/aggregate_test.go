package aggregate

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// batch builds Grads from rows, computing norms in float64.
func batch(rows [][]float32, R float64) Grads {
	g := Grads{M: len(rows), ClipNorm: R}
	if len(rows) > 0 {
		g.P = len(rows[0])
	}
	for _, r := range rows {
		g.G = append(g.G, r...)
		s := 0.0
		for _, v := range r {
			s += float64(v) * float64(v)
		}
		g.Norms = append(g.Norms, math.Sqrt(s))
	}
	return g
}

// randRows draws m rows of dimension p with norms uniform in (0, R].
func randRows(rng *rand.Rand, m, p int, R float64) [][]float32 {
	rows := make([][]float32, m)
	for i := range rows {
		v := make([]float64, p)
		s := 0.0
		for j := range v {
			v[j] = rng.NormFloat64()
			s += v[j] * v[j]
		}
		n := R * (1 - rng.Float64()) / math.Sqrt(s)
		rows[i] = make([]float32, p)
		for j := range v {
			rows[i][j] = float32(v[j] * n)
		}
	}
	return rows
}

func mustNew(t *testing.T, name string, cfg Config) Aggregator {
	t.Helper()
	a, err := New(name, cfg)
	if err != nil {
		t.Fatalf("New(%q): %v", name, err)
	}
	return a
}

func closeVec(t *testing.T, what string, got []float32, want []float64, tol float64) {
	t.Helper()
	for j := range want {
		if math.Abs(float64(got[j])-want[j]) > tol*(1+math.Abs(want[j])) {
			t.Fatalf("%s: coordinate %d = %v, want %v", what, j, got[j], want[j])
		}
	}
}

func TestTSumDropsLargestNorms(t *testing.T) {
	tie := [][]float32{{1, 0}, {0, 1}, {0.6, 0.8}, {0.1, 0}, {-1, 0}}
	cases := []struct {
		name string
		rows [][]float32
		f    int
	}{
		{"random F=3", randRows(rand.New(rand.NewPCG(1, 2)), 10, 4, 1), 3},
		{"random F=0", randRows(rand.New(rand.NewPCG(3, 4)), 7, 3, 1), 0},
		{"m = F", randRows(rand.New(rand.NewPCG(5, 6)), 4, 3, 1), 4},
		{"m < F", randRows(rand.New(rand.NewPCG(7, 8)), 2, 3, 1), 5},
		{"ties by index", tie, 2},
		{"empty batch", nil, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := batch(c.rows, 1)
			if g.P == 0 {
				g.P = 3
			}
			// Reference: row i is kept iff at least F rows rank above it
			// (larger norm, or equal norm and larger index).
			want := make([]float64, g.P)
			kept := 0
			for i := 0; i < g.M; i++ {
				above := 0
				for j := 0; j < g.M; j++ {
					if g.Norms[j] > g.Norms[i] || (g.Norms[j] == g.Norms[i] && j > i) {
						above++
					}
				}
				if above >= c.f {
					kept++
					for k := range want {
						want[k] += float64(g.G[i*g.P+k])
					}
				}
			}
			a := mustNew(t, "tsum", Config{F: c.f})
			out := make([]float32, g.P)
			rep, err := a.Aggregate(g, nil, out)
			if err != nil {
				t.Fatal(err)
			}
			closeVec(t, "TSUM", out, want, 1e-6)
			if rep.Trimmed != g.M-kept || rep.Diagnostics != (TrimDiagnostics{F: c.f}) || rep.Mechanism != nil {
				t.Fatalf("report %+v, want Trimmed %d, F %d, no mechanism", rep, g.M-kept, c.f)
			}
		})
	}
	// The tie case by hand: norms 1,1,1,0.1,1 → drop indices 4 and 2.
	g := batch(tie, 1)
	out := make([]float32, 2)
	if _, err := mustNew(t, "tsum", Config{F: 2}).Aggregate(g, nil, out); err != nil {
		t.Fatal(err)
	}
	closeVec(t, "ties", out, []float64{1.1, 1}, 1e-6)
}

// bruteTSum is TSUM_F of a multiset of 2-vectors, by sorting on (norm, order).
func bruteTSum(s [][2]float64, f int) [2]float64 {
	if len(s) <= f {
		return [2]float64{}
	}
	c := slices.Clone(s)
	slices.SortStableFunc(c, func(a, b [2]float64) int {
		na, nb := math.Hypot(a[0], a[1]), math.Hypot(b[0], b[1])
		switch {
		case na < nb:
			return -1
		case na > nb:
			return 1
		}
		return 0
	})
	var out [2]float64
	for _, x := range c[:len(c)-f] {
		out[0] += x[0]
		out[1] += x[1]
	}
	return out
}

// bruteLS is the local sensitivity of TSUM_F at s over one addition from
// universe or one removal.
func bruteLS(s, universe [][2]float64, f int) float64 {
	base := bruteTSum(s, f)
	best := 0.0
	diff := func(x [2]float64) float64 { return math.Hypot(x[0]-base[0], x[1]-base[1]) }
	for _, u := range universe {
		best = max(best, diff(bruteTSum(append(slices.Clone(s), u), f)))
	}
	for i := range s {
		t := slices.Delete(slices.Clone(s), i, i+1)
		best = max(best, diff(bruteTSum(t, f)))
	}
	return best
}

// bruteLSr is max LS over all datasets within r edits of s.
func bruteLSr(s, universe [][2]float64, f, r int) float64 {
	best := bruteLS(s, universe, f)
	if r == 0 {
		return best
	}
	for _, u := range universe {
		best = max(best, bruteLSr(append(slices.Clone(s), u), universe, f, r-1))
	}
	for i := range s {
		best = max(best, bruteLSr(slices.Delete(slices.Clone(s), i, i+1), universe, f, r-1))
	}
	return best
}

func TestSafetyMarginMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	const R = 1.0
	for trial := 0; trial < 60; trial++ {
		m := rng.IntN(5)
		f := rng.IntN(4)
		tau := 0.05 + 0.9*rng.Float64()
		s := make([][2]float64, m)
		for i := range s {
			a, n := 2*math.Pi*rng.Float64(), R*rng.Float64()
			s[i] = [2]float64{n * math.Cos(a), n * math.Sin(a)}
		}
		// Candidate additions: the data points' directions at norm R and
		// their opposites, plus a small point.
		universe := [][2]float64{{R, 0}, {-R, 0}, {0, 0.01}}
		for _, x := range s {
			n := math.Hypot(x[0], x[1])
			universe = append(universe, [2]float64{x[0] / n * R, x[1] / n * R}, [2]float64{-x[0] / n * R, -x[1] / n * R})
		}
		want := -1
		for r := 0; r <= f+1; r++ {
			if bruteLSr(s, universe, f, r) > tau+1e-12 {
				want = r
				break
			}
		}
		sorted := make([]float64, m)
		for i, x := range s {
			sorted[i] = math.Hypot(x[0], x[1])
		}
		slices.Sort(sorted)
		if got := SafetyMargin(sorted, f, tau, R); got != want {
			t.Fatalf("trial %d (m=%d F=%d τ=%.3f norms %v): Δ = %d, brute force %d", trial, m, f, tau, sorted, got, want)
		}
	}
}

// laplaceCDF is P(Lap(0, b) ≤ x).
func laplaceCDF(x, b float64) float64 {
	if x < 0 {
		return 0.5 * math.Exp(x/b)
	}
	return 1 - 0.5*math.Exp(-x/b)
}

func TestPTRBranchFrequencies(t *testing.T) {
	const R, tau = 1.0, 0.5
	// Norms chosen so that Δ = 2 with F = 4: LS^(0), LS^(1) ≤ τ < LS^(2).
	rows := [][]float32{{0.1}, {0.2}, {0.3}, {0.4}, {0.45}, {0.5}, {0.9}, {1}}
	g := batch(rows, R)
	cases := []struct {
		b, delta0 float64
		f, delta  int
	}{
		{1, 0.1, 4, 2},
		{2, 0.05, 4, 2},
		{0.5, 0.2, 4, 2},
		{1, 0.1, 0, 0},
		{1, 0.01, 8, 6}, // m = F: LS^(r) = ‖g_(1+r)‖, first > τ at r = 6
	}
	for _, c := range cases {
		a := mustNew(t, "ptr-tsum", Config{Sigma: 1, ClipNorm: R, Tau: tau, B: c.b, Delta0: c.delta0, F: c.f, FloatNoise: true})
		rng := rand.New(rand.NewPCG(uint64(c.f), 99))
		const n = 20000
		fails := 0
		out := make([]float32, 1)
		for i := 0; i < n; i++ {
			rep, err := a.Aggregate(g, rng, out)
			if err != nil {
				t.Fatal(err)
			}
			if ptrOf(rep).Delta != c.delta {
				t.Fatalf("b=%v F=%d: Δ = %d, want %d", c.b, c.f, ptrOf(rep).Delta, c.delta)
			}
			if (ptrOf(rep).Branch.String() == "+") != (ptrOf(rep).DeltaHat <= c.b*math.Log(1/(2*c.delta0))) {
				t.Fatalf("branch %q inconsistent with Δ̂ = %v", ptrOf(rep).Branch, ptrOf(rep).DeltaHat)
			}
			if ptrOf(rep).Branch.String() == "+" {
				fails++
			}
		}
		p := laplaceCDF(c.b*math.Log(1/(2*c.delta0))-float64(c.delta), c.b)
		se := math.Sqrt(p * (1 - p) / n)
		if got := float64(fails) / n; math.Abs(got-p) > 4.5*se+1e-9 {
			t.Errorf("b=%v δ0=%v F=%d: failure rate %.4f, Laplace tail %.4f (±%.4f)", c.b, c.delta0, c.f, got, p, se)
		}
	}
}

// sampleStd is the standard deviation of x around want (the noiseless value).
func sampleStd(x []float32, want []float64) float64 {
	s := 0.0
	for j, v := range x {
		d := float64(v) - want[j]
		s += d * d
	}
	return math.Sqrt(s / float64(len(x)))
}

func TestNoiseStandardDeviations(t *testing.T) {
	const P, R, tau, sigma = 20000, 2.0, 0.6, 1.3
	zero := make([][]float32, 10) // zero gradients: Δ = F, aggregate 0
	for i := range zero {
		zero[i] = make([]float32, P)
	}
	g := batch(zero, R)
	cases := []struct {
		name   string
		cfg    Config
		branch string
		std    float64
	}{
		{"sum", Config{Sigma: sigma, ClipNorm: R, FloatNoise: true}, "", sigma * R},
		{"tsum", Config{Sigma: sigma, ClipNorm: R, F: 3, FloatNoise: true}, "", sigma * R},
		// F = 0: Δ = 0, the test fails with probability 1−δ₀.
		{"ptr-tsum", Config{Sigma: sigma, ClipNorm: R, Tau: tau, B: 0.2, Delta0: 1e-6, F: 0, FloatNoise: true}, "+", sigma * R},
		// F = 8 with zero norms: Δ = 8 ≫ B, the test passes.
		{"ptr-tsum", Config{Sigma: sigma, ClipNorm: R, Tau: tau, B: 0.2, Delta0: 0.1, F: 8, FloatNoise: true}, "-", sigma * tau},
	}
	for _, c := range cases {
		a := mustNew(t, c.name, c.cfg)
		out := make([]float32, P)
		rep, err := a.Aggregate(g, rand.New(rand.NewPCG(5, 5)), out)
		if err != nil {
			t.Fatal(err)
		}
		if ptrOf(rep).Branch.String() != c.branch {
			t.Fatalf("%s: branch %q, want %q", c.name, ptrOf(rep).Branch, c.branch)
		}
		// Relative standard error of a sample std over P draws: 1/√(2P) ≈ 0.5%.
		if got := sampleStd(out, make([]float64, P)); math.Abs(got/c.std-1) > 0.03 {
			t.Errorf("%s %s: noise std %.4f, want %.4f", c.name, c.branch, got, c.std)
		}
	}
}

func TestPTRReleasesTheRightStatistic(t *testing.T) {
	// σ tiny so the release equals SUM or TSUM_F up to 1e-6.
	rows := [][]float32{{0.1, 0}, {0, 0.2}, {0.3, 0}, {0, -0.4}, {0.99, 0}}
	g := batch(rows, 1)
	for _, c := range []struct {
		f      int
		branch string
		want   []float64
	}{
		{0, "+", []float64{1.39, -0.2}}, // F = 0: Δ = 0, SUM
		{4, "-", []float64{0.1, 0}},     // Δ = 3 ≫ B: TSUM_4 = g_(1)
		{1, "+", []float64{1.39, -0.2}}, // LS^(0) = 0.99 > τ: Δ = 0
	} {
		a := mustNew(t, "ptr-tsum", Config{Sigma: 1e-7, ClipNorm: 1, Tau: 0.5, B: 0.01, Delta0: 0.1, F: c.f, FloatNoise: true})
		out := make([]float32, 2)
		rep, err := a.Aggregate(g, rand.New(rand.NewPCG(1, 1)), out)
		if err != nil {
			t.Fatal(err)
		}
		if ptrOf(rep).Branch.String() != c.branch {
			t.Fatalf("F=%d: branch %q, want %q (Δ=%d)", c.f, ptrOf(rep).Branch, c.branch, ptrOf(rep).Delta)
		}
		closeVec(t, "ptr release", out, c.want, 1e-5)
	}
}

func TestInvalidConfigs(t *testing.T) {
	ptr := Config{Sigma: 1, ClipNorm: 1, Tau: 0.5, B: 1, Delta0: 1e-8, F: 2, FloatNoise: true}
	with := func(f func(*Config)) Config { c := ptr; f(&c); return c }
	cases := []struct {
		name string
		cfg  Config
		msg  string
	}{
		{"nope", Config{}, "unknown rule"},
		{"sum", Config{Sigma: -1, ClipNorm: 1}, "σ"},
		{"sum", Config{Sigma: math.NaN(), ClipNorm: 1}, "σ"},
		{"sum", Config{Sigma: 1}, "clip norm"},
		{"tsum", Config{F: -1}, "F must be"},
		{"ptr-tsum", with(func(c *Config) { c.Sigma = 0 }), "σ > 0"},
		{"ptr-tsum", with(func(c *Config) { c.Tau = 1 }), "τ"},
		{"ptr-tsum", with(func(c *Config) { c.Tau = 0 }), "τ"},
		{"ptr-tsum", with(func(c *Config) { c.B = 0 }), "Laplace scale"},
		{"ptr-tsum", with(func(c *Config) { c.Delta0 = 1 }), "δ₀"},
	}
	for _, c := range cases {
		if _, err := New(c.name, c.cfg); err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("New(%q, %+v) error %v, want one mentioning %q", c.name, c.cfg, err, c.msg)
		}
	}
}

func TestInvalidGradients(t *testing.T) {
	good := batch([][]float32{{0.3, 0.4}, {0, 1}}, 1)
	nanNorm := good
	nanNorm.Norms = []float64{math.NaN(), 1}
	nanG := good
	nanG.G = []float32{float32(math.NaN()), 0, 0, 1}
	big := batch([][]float32{{3, 4}}, 1)
	// A norm above R by less than the old 1e-5 tolerance is an error too:
	// the rules' sensitivity is R exactly.
	barely := good
	barely.Norms = []float64{0.5, 1 + 1e-9}
	wrongR := good
	wrongR.ClipNorm = 2
	short := good
	short.G = good.G[:3]
	cases := []struct {
		name string
		g    Grads
		out  int
		msg  string
	}{
		{"nan norm", nanNorm, 2, "invalid norm"},
		{"nan gradient", nanG, 2, "NaN"},
		{"unclipped", big, 2, "clip before"},
		{"barely unclipped", barely, 2, "clip before"},
		{"clip mismatch", wrongR, 2, "calibrated"},
		{"short G", short, 2, "gradient matrix"},
		{"short out", good, 1, "output"},
	}
	for _, name := range []string{"sum", "tsum", "ptr-tsum"} {
		a := mustNew(t, name, Config{Sigma: 1, ClipNorm: 1, Tau: 0.5, B: 1, Delta0: 1e-8, F: 0, FloatNoise: true})
		for _, c := range cases {
			_, err := a.Aggregate(c.g, rand.New(rand.NewPCG(1, 1)), make([]float32, c.out))
			if err == nil || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("%s/%s: error %v, want one mentioning %q", name, c.name, err, c.msg)
			}
		}
		if _, err := a.Aggregate(good, nil, make([]float32, 2)); err == nil {
			t.Errorf("%s: nil rng accepted for a noisy rule", name)
		}
	}
}

func TestTrimmerAndDeterminism(t *testing.T) {
	rows := randRows(rand.New(rand.NewPCG(9, 9)), 20, 5, 1)
	g := batch(rows, 1)
	for _, name := range []string{"tsum", "ptr-tsum"} {
		cfg := Config{Sigma: 1.1, ClipNorm: 1, Tau: 0.5, B: 1, Delta0: 1e-8, F: 3, FloatNoise: true}
		a := mustNew(t, name, cfg)
		tr, ok := a.(Trimmer)
		if !ok || tr.TrimLevel() != 3 {
			t.Fatalf("%s: not a Trimmer at F = 3", name)
		}
		tr.SetTrimLevel(-4)
		if tr.TrimLevel() != 0 {
			t.Fatalf("%s: SetTrimLevel(-4) gave %d", name, tr.TrimLevel())
		}
		tr.SetTrimLevel(5)
		b := mustNew(t, name, cfg)
		b.(Trimmer).SetTrimLevel(5)
		o1, o2 := make([]float32, 5), make([]float32, 5)
		r1, err1 := a.Aggregate(g, rand.New(rand.NewPCG(3, 4)), o1)
		r2, err2 := b.Aggregate(g, rand.New(rand.NewPCG(3, 4)), o2)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if !slices.Equal(o1, o2) || r1.Diagnostics != r2.Diagnostics || r1.Diagnostics.Public() == nil || trimLevelOf(r1) != 5 {
			t.Fatalf("%s: not reproducible or F not applied: %v %v %+v", name, o1, o2, r1)
		}
	}
	if !slices.Contains(Names(), "ptr-tsum") || !slices.IsSorted(Names()) {
		t.Fatalf("Names() = %v", Names())
	}
}

// ptrOf returns ptr-tsum's diagnostics in rep (zero if it has none).
func ptrOf(rep Report) PTRDiagnostics {
	d, _ := rep.Diagnostics.(PTRDiagnostics)
	return d
}

// trimLevelOf returns the trim level F a tsum or ptr-tsum report states.
func trimLevelOf(rep Report) int {
	switch d := rep.Diagnostics.(type) {
	case PTRDiagnostics:
		return d.F
	case TrimDiagnostics:
		return d.F
	}
	return -1
}
