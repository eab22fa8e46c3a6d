package ridgegd

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestClipThresholdRules checks both threshold rules against the
// per-example gradient norms computed here independently.
func TestClipThresholdRules(t *testing.T) {
	data := toyData(t, 300, 4, 21)
	nodes, _ := Split(data, SplitConfig{Kind: SplitRandom, Nodes: 2}, 0.03, rand.New(rand.NewPCG(5, 5)))
	for _, rule := range []ClipThreshold{"", ClipThresholdMax, ClipThresholdFrobenius} {
		res, err := Run(nodes, Config{Method: MethodClip, Iterations: 2, Epsilon: 0.1, Alpha: 2, ClipFactor: 10, ClipThreshold: rule}, 3)
		if err != nil {
			t.Fatal(err)
		}
		for j, nd := range nodes {
			opt, _ := nd.Quadratic().Minimizer()
			g := make([]float64, 4)
			var mx, sum float64
			for i := 0; i < nd.Data.N; i++ {
				nd.ExampleGrad(i, opt, g)
				n2 := g[0]*g[0] + g[1]*g[1] + g[2]*g[2] + g[3]*g[3]
				mx = math.Max(mx, n2)
				sum += n2
			}
			want := 10 * math.Sqrt(mx)
			if rule == ClipThresholdFrobenius {
				want = 10 * math.Sqrt(sum)
			}
			if got := res.Nodes[j].ClipThreshold; math.Abs(got-want) > 1e-12*want {
				t.Errorf("rule %q node %d: c = %v, want %v", rule, j, got, want)
			}
		}
	}
	if _, err := Run(nodes, Config{Method: MethodClip, Iterations: 1, Epsilon: 0.1, Alpha: 2, ClipFactor: 1, ClipThreshold: "median"}, 1); err == nil {
		t.Error("unknown threshold rule accepted")
	}
}

// TestAuthorsNoise checks the authors' RGM noise: no RDP claim, the
// guarantee marked unproven, and the released noise's empirical variance
// per coordinate equal to (α/ε)(η‖g‖ + R_rel)².
func TestAuthorsNoise(t *testing.T) {
	data := toyData(t, 4000, 3, 9)
	nodes, _ := Split(data, SplitConfig{Kind: SplitRandom, Nodes: 2}, 0.5, rand.New(rand.NewPCG(4, 4)))
	const eps, alpha = 0.5, 2.0
	cfg := Config{Method: MethodRGM, Iterations: 3, Epsilon: eps, Alpha: alpha, Constants: ConstantsPaper, RGMNoise: RGMNoiseAuthors}
	res, err := Run(nodes, cfg, 11)
	if err != nil {
		t.Fatal(err)
	}
	for j, nd := range res.Nodes {
		if nd.Mechanism != nil || nd.StepRDP != nil || nd.Guarantee != AuthorsNoiseGuarantee || nd.NoiseScale != 2 {
			t.Errorf("node %d report: mechanism %v step RDP %v guarantee %q scale %v", j, nd.Mechanism, nd.StepRDP, nd.Guarantee, nd.NoiseScale)
		}
	}
	// The release itself, many times at one θ.
	n := &node{ridge: nodes[0], quad: nodes[0].Quadratic(), rng: rand.New(rand.NewPCG(7, 7))}
	var rep NodeReport
	if err := setupRGM(n, &rep, cfg, rand.New(rand.NewPCG(8, 8))); err != nil {
		t.Fatal(err)
	}
	theta := []float64{0.2, -0.4, 1}
	exact := make([]float64, 3)
	n.quad.Grad(theta, exact)
	std := math.Sqrt(alpha/eps) * (rep.Sensitivity.Eta*math.Sqrt(dot(exact, exact)) + rep.Sensitivity.RRel)
	const m = 20000
	var ss float64
	g := make([]float64, 3)
	for i := 0; i < m; i++ {
		if err := n.release(MethodRGM, theta, g); err != nil {
			t.Fatal(err)
		}
		for k := range g {
			d := g[k] - exact[k]
			ss += d * d
		}
	}
	v := ss / (3 * m)
	// Sample variance of 60,000 normals: relative sd √(2/60000) ≈ 0.6%.
	if math.Abs(v/(std*std)-1) > 0.03 {
		t.Errorf("noise variance %v, want %v", v, std*std)
	}
	// Theorem 1's noise on the same node differs (and claims its RDP).
	cfg.RGMNoise = RGMNoiseTheorem1
	cfg.Epsilon = 5
	res, err = Run(nodes, cfg, 11)
	if err != nil {
		t.Fatal(err)
	}
	if res.Nodes[0].StepRDP == nil || res.Nodes[0].Guarantee != "" {
		t.Errorf("theorem1 report %+v", res.Nodes[0])
	}
	cfg.RGMNoise = "other"
	if _, err := Run(nodes, cfg, 1); err == nil {
		t.Error("unknown RGM noise accepted")
	}
}

// TestSplitLabelOffset checks the authors' label split: the rows and node
// sizes of the offset rule rebuilt here from the same permutation, and label composition close to the data's (not split by
// label).
func TestSplitLabelOffset(t *testing.T) {
	data := toyData(t, 2001, 2, 8)
	const w = 10
	rng := func() *rand.Rand { return rand.New(rand.NewPCG(3, 3)) }
	lab, err := Split(data, SplitConfig{Kind: SplitLabel, Nodes: 2, Warmup: w}, 0.1, rng())
	if err != nil {
		t.Fatal(err)
	}
	off, err := Split(data, SplitConfig{Kind: SplitLabelOffset, Nodes: 2, Warmup: w}, 0.1, rng())
	if err != nil {
		t.Fatal(err)
	}
	pos := 0
	for _, y := range data.Y {
		if y > 0 {
			pos++
		}
	}
	perm := rng().Perm(data.N)
	var want0 []int
	want0 = append(want0, perm[:w]...)
	for p := 2 * w; p < data.N; p++ {
		if data.Y[p] > 0 {
			want0 = append(want0, perm[p])
		}
	}
	if off[0].Data.N != len(want0) || off[1].Data.N != data.N-len(want0) {
		t.Fatalf("sizes: offset %d/%d, want %d/%d", off[0].Data.N, off[1].Data.N, len(want0), data.N-len(want0))
	}
	for r, i := range want0 {
		if off[0].Data.Y[r] != data.Y[i] || off[0].Data.X[2*r] != data.X[2*i] {
			t.Fatalf("node 0 row %d is not data row %d", r, i)
		}
	}
	frac := func(d *Data) float64 {
		c := 0
		for _, y := range d.Y {
			if y > 0 {
				c++
			}
		}
		return float64(c) / float64(d.N)
	}
	all := float64(pos) / float64(data.N)
	for j := range off {
		if math.Abs(frac(off[j].Data)-all) > 0.06 {
			t.Errorf("offset node %d: positive fraction %v, data %v", j, frac(off[j].Data), all)
		}
	}
	if frac(lab[0].Data) < 0.95 || frac(lab[1].Data) > 0.05 {
		t.Errorf("label split fractions %v %v", frac(lab[0].Data), frac(lab[1].Data))
	}
}
