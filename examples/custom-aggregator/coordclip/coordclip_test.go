package coordclip

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/privtrain/privtrain/aggregate"
	"github.com/privtrain/privtrain/privacy"
)

// grads builds a batch of m rows of dimension p with norms ≤ r.
func grads(rng *rand.Rand, m, p int, r float64) aggregate.Grads {
	g := aggregate.Grads{G: make([]float32, m*p), Norms: make([]float64, m), M: m, P: p, ClipNorm: r}
	for i := 0; i < m; i++ {
		row := g.G[i*p : (i+1)*p]
		var s float64
		for j := range row {
			// Heavy-tailed coordinates, so clipping to c matters.
			row[j] = float32(rng.NormFloat64() * math.Exp(2*rng.NormFloat64()))
			s += float64(row[j]) * float64(row[j])
		}
		scale := r * rng.Float64() / math.Sqrt(s)
		s = 0
		for j := range row {
			row[j] *= float32(scale)
			s += float64(row[j]) * float64(row[j])
		}
		g.Norms[i] = math.Sqrt(s)
	}
	return g
}

// drop returns g without row k (the add/remove neighbour).
func drop(g aggregate.Grads, k int) aggregate.Grads {
	h := g
	h.G = slices.Concat(g.G[:k*g.P], g.G[(k+1)*g.P:])
	h.Norms = slices.Concat(g.Norms[:k], g.Norms[k+1:])
	h.M--
	return h
}

// TestSensitivityBruteForce: for random batches and every removable row,
// the noiseless release moves by at most Δ = min(R, c√P), and the bound is
// attained to within rounding when one row saturates it.
func TestSensitivityBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		p       int
		r, c    float64
		wantMin bool // Δ = c√P < R
	}{
		{16, 1, 0.05, true},  // c√P = 0.2
		{16, 1, 0.5, false},  // c√P = 2: Δ = R
		{400, 3, 0.1, true},  // c√P = 2
		{400, 0.5, 1, false}, // Δ = R
	} {
		a, err := New(0, tc.r, tc.c)
		if err != nil {
			t.Fatal(err)
		}
		delta := a.Sensitivity(tc.p)
		if want := math.Min(tc.r*(1+normSlack), tc.c*math.Sqrt(float64(tc.p))); delta != want || (delta < tc.r) != tc.wantMin {
			t.Fatalf("Δ = %v, want %v", delta, want)
		}
		worst := 0.0
		for trial := 0; trial < 20; trial++ {
			g := grads(rng, 6, tc.p, tc.r)
			full := make([]float32, tc.p)
			if _, err := a.Aggregate(g, nil, full); err != nil {
				t.Fatal(err)
			}
			for k := 0; k < g.M; k++ {
				part := make([]float32, tc.p)
				if _, err := a.Aggregate(drop(g, k), nil, part); err != nil {
					t.Fatal(err)
				}
				var d2 float64
				for j := range full {
					d := float64(full[j]) - float64(part[j])
					d2 += d * d
				}
				worst = max(worst, math.Sqrt(d2))
			}
		}
		if worst > delta*(1+1e-5) {
			t.Errorf("P=%d R=%v c=%v: neighbours differ by %v > Δ = %v", tc.p, tc.r, tc.c, worst, delta)
		}
		// A row with every coordinate ±R/√P (norm R) attains the bound.
		g := aggregate.Grads{G: make([]float32, tc.p), Norms: []float64{tc.r}, M: 1, P: tc.p, ClipNorm: tc.r}
		for j := range g.G {
			g.G[j] = float32(tc.r / math.Sqrt(float64(tc.p)) * float64(1-2*(j%2)))
		}
		out := make([]float32, tc.p)
		if _, err := a.Aggregate(g, nil, out); err != nil {
			t.Fatal(err)
		}
		var n2 float64
		for _, v := range out {
			n2 += float64(v) * float64(v)
		}
		if got, want := math.Sqrt(n2), math.Min(tc.r, tc.c*math.Sqrt(float64(tc.p))); math.Abs(got-want) > 1e-5*want {
			t.Errorf("P=%d R=%v c=%v: saturating row moves the sum by %v, want Δ = %v", tc.p, tc.r, tc.c, got, want)
		}
	}
}

// TestNoiseAndReport: through the registry, the private rule's float
// release (Config.FloatNoise; TestSecureRelease checks the default) adds
// noise of standard deviation σΔ (checked on the empty batch: 40,000 draws, 1% band
// ≈ 7 standard errors) and reports the Gaussian mechanism with multiplier σ.
func TestNoiseAndReport(t *testing.T) {
	const p, sigma, r, c = 40000, 1.3, 2.0, 0.004 // Δ = c√P = 0.8
	a, err := aggregate.New(Name, aggregate.Config{Sigma: sigma, ClipNorm: r, Options: map[string]float64{OptionC: c}, FloatNoise: true})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]float32, p)
	rep, err := a.Aggregate(aggregate.Grads{M: 0, P: p, ClipNorm: r, Norms: []float64{}}, rand.New(rand.NewPCG(3, 4)), out)
	if err != nil {
		t.Fatal(err)
	}
	var s2 float64
	for _, v := range out {
		s2 += float64(v) * float64(v)
	}
	if std := math.Sqrt(s2 / p); math.Abs(std/(sigma*0.8)-1) > 0.01 {
		t.Errorf("noise std %v, want σΔ = %v", std, sigma*0.8)
	}
	if rep.Mechanism != (privacy.Gaussian{Sigma: sigma}) {
		t.Errorf("reported %v, want Gaussian{%v}", rep.Mechanism, sigma)
	}
}

func TestRejects(t *testing.T) {
	for _, tc := range []struct {
		cfg  aggregate.Config
		want string
	}{
		{aggregate.Config{Sigma: 1, ClipNorm: 1}, "required"},
		{aggregate.Config{Sigma: 1, ClipNorm: 1, Options: map[string]float64{OptionC: 0}}, "c must be"},
		{aggregate.Config{Sigma: 1, ClipNorm: 1, Options: map[string]float64{OptionC: 1, "cc": 2}}, "unknown option"},
	} {
		if _, err := aggregate.New(Name, tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err = %v, want %q", tc.cfg, err, tc.want)
		}
	}
	a, _ := New(1, 1, 0.1)
	g := aggregate.Grads{G: []float32{3, 4}, Norms: []float64{5}, M: 1, P: 2, ClipNorm: 1}
	if _, err := a.Aggregate(g, rand.New(rand.NewPCG(1, 1)), make([]float32, 2)); err == nil || !strings.Contains(err.Error(), "clip before") {
		t.Errorf("unclipped row: err = %v", err)
	}
	g = aggregate.Grads{G: []float32{0.3, 0.4}, Norms: []float64{0.5}, M: 1, P: 2, ClipNorm: 1}
	if _, err := a.Aggregate(g, nil, make([]float32, 2)); err == nil {
		t.Error("private rule without a random generator accepted")
	}
}

// TestSecureRelease: with the zero Config.FloatNoise (privtrain's default)
// the rule says
// it is floating-point safe, releases Σ clip_c(g_i) plus noise of standard
// deviation σΔ through the secure sum (residual checked on 40,000
// coordinates: mean within 5 standard errors, std within 1%) and reports
// the same Gaussian mechanism as the float release.
func TestSecureRelease(t *testing.T) {
	const p, m, sigma, r, c = 40000, 5, 1.3, 2.0, 0.004 // Δ = c√P = 0.8
	a, err := aggregate.New(Name, aggregate.Config{Sigma: sigma, ClipNorm: r, Options: map[string]float64{OptionC: c}})
	if err != nil {
		t.Fatal(err)
	}
	if !aggregate.IsSecure(a) {
		t.Fatal("secure rule does not say so")
	}
	if f, _ := aggregate.New(Name, aggregate.Config{Sigma: sigma, ClipNorm: r, Options: map[string]float64{OptionC: c}, FloatNoise: true}); aggregate.IsSecure(f) {
		t.Fatal("float rule says it is secure")
	}
	// σ = 0 (non-private, exact) works with the zero Config and adds no noise.
	if e, err := aggregate.New(Name, aggregate.Config{Options: map[string]float64{OptionC: c}}); err != nil || aggregate.IsSecure(e) {
		t.Fatalf("σ = 0 with the zero Config: err %v, secure %v", err, e != nil && aggregate.IsSecure(e))
	}
	g := grads(rand.New(rand.NewPCG(5, 6)), m, p, r)
	want := make([]float64, p)
	for i := 0; i < m; i++ {
		for j, v := range g.G[i*p : (i+1)*p] {
			want[j] += float64(max(-float32(c), min(float32(c), v)))
		}
	}
	out := make([]float32, p)
	rep, err := a.Aggregate(g, rand.New(rand.NewPCG(7, 8)), out)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Mechanism != (privacy.Gaussian{Sigma: sigma}) {
		t.Errorf("reported %v, want Gaussian{%v}", rep.Mechanism, sigma)
	}
	var s1, s2 float64
	for j, v := range out {
		d := float64(v) - want[j]
		s1 += d
		s2 += d * d
	}
	std := math.Sqrt(s2 / p)
	if mean := s1 / p; math.Abs(mean) > 5*sigma*0.8/math.Sqrt(p) {
		t.Errorf("residual mean %v: the release is not centred on the clipped sum", mean)
	}
	if math.Abs(std/(sigma*0.8)-1) > 0.01 {
		t.Errorf("noise std %v, want σΔ = %v", std, sigma*0.8)
	}
}
