package aggregate

import (
	"github.com/privtrain/privtrain/privacy"

	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// attacked returns 17 honest gradients near mu (spread 0.05) followed by 3
// attackers at scale·(1, −1, 1, …).
func attacked(mu []float64, scale float64) Grads {
	rng := rand.New(rand.NewPCG(21, 22))
	var rows [][]float32
	for i := 0; i < 17; i++ {
		r := make([]float32, len(mu))
		for j := range r {
			r[j] = float32(mu[j] + 0.05*rng.NormFloat64())
		}
		rows = append(rows, r)
	}
	for i := 0; i < 3; i++ {
		r := make([]float32, len(mu))
		for j := range r {
			r[j] = float32(scale * float64(1-2*(j%2)))
		}
		rows = append(rows, r)
	}
	return batch(rows, 0)
}

func TestRobustRulesResistOutliers(t *testing.T) {
	mu := []float64{0.5, -0.3, 0.2, 0.1, -0.4, 0.25}
	rules := []struct {
		name string
		cfg  Config
	}{
		{"tsum", Config{F: 3}}, // a trimmed sum: compared as TSUM/(m−F)
		{"coord-median", Config{}},
		{"coord-trimmed-mean", Config{TrimFraction: 0.2}},
		{"krum", Config{F: 3}},
		{"multi-krum", Config{F: 3}},
		{"geomed", Config{}},
		{"centered-clip", Config{Radius: 0.1, Iters: 60, Reference: "zero"}},
	}
	for _, scale := range []float64{1e3, 1e6} {
		g := attacked(mu, scale)
		out := make([]float32, g.P)
		if _, err := mustNew(t, "sum", Config{}).Aggregate(g, nil, out); err != nil {
			t.Fatal(err)
		}
		if d := dist(out, float64(g.M), mu); d < 0.1*scale {
			t.Fatalf("attack too weak: plain mean only %v from μ", d)
		}
		for _, r := range rules {
			if _, err := mustNew(t, r.name, r.cfg).Aggregate(g, nil, out); err != nil {
				t.Fatalf("%s: %v", r.name, err)
			}
			// The honest sample mean is within ≈ 0.05·√(6/17) ≈ 0.03 of μ.
			n := float64(g.M)
			if r.name == "tsum" {
				n -= 3
			}
			if d := dist(out, n, mu); d > 0.1 {
				t.Errorf("%s, attack scale %g: released mean %v from μ", r.name, scale, d)
			}
		}
	}
}

// dist is ‖out/m − mu‖.
func dist(out []float32, m float64, mu []float64) float64 {
	s := 0.0
	for j := range mu {
		d := float64(out[j])/m - mu[j]
		s += d * d
	}
	return math.Sqrt(s)
}

func TestCoordinateRulesMatchSorting(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	for _, m := range []int{1, 2, 5, 8, 33} {
		rows := make([][]float32, m)
		for i := range rows {
			rows[i] = make([]float32, 70) // > colBlock: exercises two blocks
			for j := range rows[i] {
				rows[i][j] = float32(rng.IntN(7)) // many ties
			}
		}
		g := batch(rows, 0)
		med, tm := make([]float32, g.P), make([]float32, g.P)
		if _, err := mustNew(t, "coord-median", Config{}).Aggregate(g, nil, med); err != nil {
			t.Fatal(err)
		}
		rep, err := mustNew(t, "coord-trimmed-mean", Config{TrimFraction: 0.3}).Aggregate(g, nil, tm)
		if err != nil {
			t.Fatal(err)
		}
		k := int(0.3 * float64(m))
		if rep.Trimmed != 2*k {
			t.Fatalf("m=%d: trimmed %d, want %d", m, rep.Trimmed, 2*k)
		}
		for j := 0; j < g.P; j++ {
			col := make([]float64, m)
			for i := range col {
				col[i] = float64(rows[i][j])
			}
			slices.Sort(col)
			wantMed := (col[(m-1)/2] + col[m/2]) / 2 * float64(m)
			s := 0.0
			for _, v := range col[k : m-k] {
				s += v
			}
			wantTM := s / float64(m-2*k) * float64(m)
			if math.Abs(float64(med[j])-wantMed) > 1e-4 || math.Abs(float64(tm[j])-wantTM) > 1e-4 {
				t.Fatalf("m=%d coord %d: median %v (want %v), trimmed mean %v (want %v)", m, j, med[j], wantMed, tm[j], wantTM)
			}
		}
	}
}

func TestNth(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	for trial := 0; trial < 300; trial++ {
		n := 1 + rng.IntN(40)
		a := make([]float32, n)
		for i := range a {
			a[i] = float32(rng.IntN(5 + trial%20))
		}
		want := slices.Clone(a)
		slices.Sort(want)
		k := rng.IntN(n)
		nth(a, k)
		if a[k] != want[k] {
			t.Fatalf("nth(%d) = %v, want %v", k, a[k], want[k])
		}
		for i := range a {
			if (i < k && a[i] > a[k]) || (i > k && a[i] < a[k]) {
				t.Fatalf("not partitioned around %d: %v", k, a)
			}
		}
	}
}

func TestKrumMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 52))
	for trial := 0; trial < 20; trial++ {
		m, f := 3+rng.IntN(8), rng.IntN(3)
		rows := randRows(rng, m, 4, 1)
		g := batch(rows, 0)
		// Brute force: score_i = Σ of the k smallest squared distances.
		k := min(max(m-f-2, 1), m-1)
		scores := make([]float64, m)
		for i := range rows {
			var ds []float64
			for j := range rows {
				if j != i {
					s := 0.0
					for c := range rows[i] {
						x := float64(rows[i][c]) - float64(rows[j][c])
						s += x * x
					}
					ds = append(ds, s)
				}
			}
			slices.Sort(ds)
			for _, v := range ds[:k] {
				scores[i] += v
			}
		}
		order := make([]int, m)
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int {
			if scores[a] < scores[b] {
				return -1
			} else if scores[a] > scores[b] {
				return 1
			}
			return 0
		})
		for _, s := range []int{1, 0} { // krum, multi-krum default m−f
			name, sel := "krum", 1
			if s == 0 {
				name, sel = "multi-krum", max(m-f, 1)
			}
			want := make([]float64, 4)
			for _, i := range order[:sel] {
				for c := range want {
					want[c] += float64(rows[i][c]) * float64(m) / float64(sel)
				}
			}
			out := make([]float32, 4)
			rep, err := mustNew(t, name, Config{F: f}).Aggregate(g, nil, out)
			if err != nil {
				t.Fatal(err)
			}
			closeVec(t, name, out, want, 1e-5)
			if rep.Trimmed != m-sel {
				t.Fatalf("%s: trimmed %d, want %d", name, rep.Trimmed, m-sel)
			}
		}
	}
}

func TestGeoMedOptimality(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 62))
	rows := randRows(rng, 15, 5, 1)
	g := batch(rows, 0)
	out := make([]float32, 5)
	if _, err := mustNew(t, "geomed", Config{Tol: 1e-9, MaxIter: 5000}).Aggregate(g, nil, out); err != nil {
		t.Fatal(err)
	}
	// The gradient of Σ‖g_i − z‖ vanishes at the geometric median.
	z := make([]float64, 5)
	for j := range z {
		z[j] = float64(out[j]) / 15
	}
	grad := make([]float64, 5)
	for _, r := range rows {
		n := 0.0
		for j := range z {
			n += (float64(r[j]) - z[j]) * (float64(r[j]) - z[j])
		}
		n = math.Sqrt(n)
		for j := range z {
			grad[j] += (z[j] - float64(r[j])) / n
		}
	}
	if n := math.Hypot(math.Hypot(grad[0], grad[1]), math.Hypot(math.Hypot(grad[2], grad[3]), grad[4])); n > 1e-4 {
		t.Errorf("subgradient norm at the returned point %v, want ≈ 0", n)
	}
}

func TestCenteredClipPrivate(t *testing.T) {
	const P, R, sigma = 20000, 1.0, 0.8
	rows := make([][]float32, 4)
	for i := range rows {
		rows[i] = make([]float32, P)
	}
	g := batch(rows, R)
	// Zero reference: S = min(max(R, 0), 0 + ρ) = ρ = 0.3.
	a := mustNew(t, "centered-clip", Config{Sigma: sigma, ClipNorm: R, Radius: 0.3, Reference: "zero", FloatNoise: true})
	out := make([]float32, P)
	rep, err := a.Aggregate(g, rand.New(rand.NewPCG(1, 2)), out)
	if err != nil {
		t.Fatal(err)
	}
	if got := sampleStd(out, make([]float64, P)); math.Abs(got/(sigma*0.3)-1) > 0.03 || rep.Mechanism == nil {
		t.Errorf("zero reference: noise std %v, want %v (mechanism %v)", got, sigma*0.3, rep.Mechanism)
	}
	// Previous reference over ExpectedBatch 4: v₀ = prev/4; with zero
	// gradients the release is 4·v₀ − Σ clip(v₀, ρ) and S = min(max(R, ‖v₀‖), ‖v₀‖+ρ).
	b := mustNew(t, "centered-clip", Config{Sigma: sigma, ClipNorm: R, Radius: 0.3, ExpectedBatch: 4, FloatNoise: true})
	prev := make([]float32, P)
	if _, err := b.Aggregate(g, rand.New(rand.NewPCG(3, 4)), prev); err != nil {
		t.Fatal(err)
	}
	v0 := make([]float64, P)
	n0 := 0.0
	for j := range v0 {
		v0[j] = float64(prev[j]) / 4
		n0 += v0[j] * v0[j]
	}
	n0 = math.Sqrt(n0)
	want := make([]float64, P)
	c := math.Min(1, 0.3/n0)
	for j := range want {
		want[j] = 4*v0[j] - 4*c*v0[j]
	}
	if _, err := b.Aggregate(g, rand.New(rand.NewPCG(5, 6)), out); err != nil {
		t.Fatal(err)
	}
	sens := math.Min(math.Max(R, n0), n0+0.3)
	if got := sampleStd(out, want); math.Abs(got/(sigma*sens)-1) > 0.03 {
		t.Errorf("previous reference: noise std %v, want %v", got, sigma*sens)
	}
}

func TestRobustInvalidConfigs(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		msg  string
	}{
		{"coord-median", Config{Sigma: 1, ClipNorm: 1}, "only σ = 0"},
		{"coord-trimmed-mean", Config{Sigma: 1, ClipNorm: 1}, "only σ = 0"},
		{"coord-trimmed-mean", Config{TrimFraction: 0.5}, "β"},
		{"krum", Config{Sigma: 1, ClipNorm: 1}, "only σ = 0"},
		{"multi-krum", Config{Select: -1}, "selected"},
		{"geomed", Config{Sigma: 1, ClipNorm: 1}, "only σ = 0"},
		{"geomed", Config{Smoothing: -1}, "ν"},
		{"geomed", Config{MaxIter: -1}, "iterations"},
		{"centered-clip", Config{}, "radius"},
		{"centered-clip", Config{Radius: 1, Reference: "mean"}, "reference"},
		{"centered-clip", Config{Radius: 1, Sigma: 1, ClipNorm: 1, Iters: 3, Reference: "zero"}, "only 1 iteration"},
		{"centered-clip", Config{Radius: 1, Sigma: 1, ClipNorm: 1}, "ExpectedBatch"},
	}
	for _, c := range cases {
		if _, err := New(c.name, c.cfg); err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("New(%q, %+v): error %v, want %q", c.name, c.cfg, err, c.msg)
		}
	}
	// Every rule rejects malformed batches and accepts an empty one.
	for _, name := range Names() {
		cfg := Config{Sigma: 1, ClipNorm: 1, Tau: 0.5, B: 1, Delta0: 1e-8, Radius: 1, Reference: "zero", FloatNoise: true}
		if name == "rgm-sum" {
			m, err := privacy.CalibrateRGM(1, 2, 1e-3, 1, 3)
			if err != nil {
				t.Fatal(err)
			}
			cfg.RGM = m
		}
		if _, err := New(name, cfg); err != nil {
			cfg = Config{Radius: 1}
		}
		a := mustNew(t, name, cfg)
		if _, err := a.Aggregate(Grads{G: []float32{1}, Norms: []float64{1}, M: 1, P: 2, ClipNorm: 1}, rand.New(rand.NewPCG(1, 1)), make([]float32, 2)); err == nil {
			t.Errorf("%s: malformed batch accepted", name)
		}
		if _, err := a.Aggregate(Grads{P: 3, ClipNorm: 1}, rand.New(rand.NewPCG(1, 1)), make([]float32, 3)); err != nil {
			t.Errorf("%s: empty batch: %v", name, err)
		}
	}
}
