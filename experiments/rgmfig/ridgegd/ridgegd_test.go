package ridgegd

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// toyData draws n rows of d features (a few deliberately large) and ±1-ish
// targets; it exercises the algebra, it is not a stand-in for real data.
func toyData(t *testing.T, n, d int, seed uint64) *Data {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	x := make([]float64, n*d)
	y := make([]float64, n)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	for i := range y {
		y[i] = math.Copysign(1, rng.NormFloat64()) + 0.1*rng.NormFloat64()
	}
	data, err := NewData(x, y, d)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestGradientFiniteDifferences(t *testing.T) {
	data := toyData(t, 40, 5, 1)
	for _, shift := range [][]float64{nil, {1, -2, 0.5, 0, 3}} {
		r, err := NewRidge(data, 0.03, shift)
		if err != nil {
			t.Fatal(err)
		}
		q := r.Quadratic()
		theta := []float64{0.3, -0.1, 0.7, 1.2, -0.4}
		g := make([]float64, 5)
		q.Grad(theta, g)
		// Mean of per-example gradients equals the full gradient.
		mean := make([]float64, 5)
		gi := make([]float64, 5)
		for i := 0; i < data.N; i++ {
			r.ExampleGrad(i, theta, gi)
			for k := range mean {
				mean[k] += gi[k] / float64(data.N)
			}
		}
		for k := range g {
			h := 1e-5
			tp := append([]float64(nil), theta...)
			tm := append([]float64(nil), theta...)
			tp[k] += h
			tm[k] -= h
			fd := (r.Loss(tp) - r.Loss(tm)) / (2 * h)
			if math.Abs(fd-g[k]) > 1e-8 {
				t.Errorf("shift %v coord %d: gradient %v, finite difference %v", shift, k, g[k], fd)
			}
			if math.Abs(mean[k]-g[k]) > 1e-12 {
				t.Errorf("shift %v coord %d: mean example gradient %v vs %v", shift, k, mean[k], g[k])
			}
		}
		if lv, qv := r.Loss(theta), q.Value(theta); math.Abs(lv-qv) > 1e-12 {
			t.Errorf("Loss %v vs Quadratic.Value %v", lv, qv)
		}
	}
}

func TestClosedFormOptimum(t *testing.T) {
	data := toyData(t, 60, 4, 2)
	parts := []*Quadratic{}
	for j, shift := range [][]float64{nil, {2, 2, 2, 2}} {
		sub := data.Subset(seq(j*30, (j+1)*30))
		r, _ := NewRidge(sub, 0.03, shift)
		q := r.Quadratic()
		opt, err := q.Minimizer()
		if err != nil {
			t.Fatal(err)
		}
		g := make([]float64, 4)
		q.Grad(opt, g)
		if n := math.Sqrt(dot(g, g)); n > 1e-12 {
			t.Errorf("node %d: ‖∇f(θ*)‖ = %v", j, n)
		}
		parts = append(parts, q)
	}
	obj, err := NewObjective(parts)
	if err != nil {
		t.Fatal(err)
	}
	total := make([]float64, 4)
	g := make([]float64, 4)
	for _, p := range parts {
		p.Grad(obj.Theta, g)
		for k := range total {
			total[k] += g[k]
		}
	}
	if n := math.Sqrt(dot(total, total)); n > 1e-12 {
		t.Errorf("‖Σ∇f_j(θ*)‖ = %v", n)
	}
	theta := []float64{1, 0, -1, 0.5}
	if gap, diff := obj.Gap(theta), obj.Value(theta)-obj.FStar; math.Abs(gap-diff) > 1e-12 {
		t.Errorf("Gap %v vs f − f* = %v", gap, diff)
	}
}

func seq(a, b int) []int {
	s := make([]int, 0, b-a)
	for i := a; i < b; i++ {
		s = append(s, i)
	}
	return s
}

func TestNonPrivateGDConverges(t *testing.T) {
	data := toyData(t, 200, 6, 3)
	for _, kind := range []SplitKind{SplitRandom, SplitLabel, SplitBias} {
		nodes, err := Split(data, SplitConfig{Kind: kind, Nodes: 2, Warmup: 5, Bias: 3}, 0.03, rand.New(rand.NewPCG(1, 1)))
		if err != nil {
			t.Fatal(err)
		}
		res, err := Run(nodes, Config{Method: MethodNone, Iterations: 3000}, 1)
		if err != nil {
			t.Fatal(err)
		}
		if res.Gap[0] <= 0 || res.Gap[len(res.Gap)-1] > 1e-20 {
			t.Errorf("%s: gap from %v to %v", kind, res.Gap[0], res.Gap[len(res.Gap)-1])
		}
		for i := 1; i < len(res.Gap); i++ {
			if res.Gap[i] > res.Gap[i-1]*(1+1e-9)+1e-30 {
				t.Fatalf("%s: gap increased at step %d", kind, i)
			}
		}
	}
}

func TestClipNoiseFormula(t *testing.T) {
	data := toyData(t, 300, 4, 4)
	nodes, _ := Split(data, SplitConfig{Kind: SplitRandom, Nodes: 2}, 0.03, rand.New(rand.NewPCG(2, 2)))
	for _, tc := range []struct {
		noise  ClipNoise
		factor float64
		rdp    float64 // expected per-step RDP under replace-one, in units of ε
	}{
		{ClipNoiseEq82, 1, 2},
		{ClipNoiseEq82, 10, 2},
		{ClipNoiseReplaceOne, 0.1, 1},
	} {
		const eps, alpha = 0.1, 2.0
		res, err := Run(nodes, Config{Method: MethodClip, Iterations: 3, Epsilon: eps, Alpha: alpha, ClipFactor: tc.factor, ClipNoise: tc.noise}, 5)
		if err != nil {
			t.Fatal(err)
		}
		for j, nd := range nodes {
			q := nd.Quadratic()
			opt, _ := q.Minimizer()
			var cmax float64
			g := make([]float64, 4)
			for i := 0; i < nd.Data.N; i++ {
				nd.ExampleGrad(i, opt, g)
				cmax = math.Max(cmax, math.Sqrt(dot(g, g)))
			}
			c := tc.factor * cmax
			N := float64(nd.Data.N)
			want := math.Sqrt(alpha * c * c / (eps * N * N))
			if tc.noise == ClipNoiseReplaceOne {
				want *= math.Sqrt2
			}
			rep := res.Nodes[j]
			if math.Abs(rep.ClipThreshold-c) > 1e-12*c || math.Abs(rep.NoiseSigma-want) > 1e-12*want {
				t.Errorf("%+v node %d: c=%v σ=%v, want c=%v σ=%v", tc, j, rep.ClipThreshold, rep.NoiseSigma, c, want)
			}
			if math.Abs(rep.StepRDP.Epsilon-tc.rdp*eps) > 1e-12 {
				t.Errorf("%+v node %d: step RDP %v, want %v", tc, j, rep.StepRDP.Epsilon, tc.rdp*eps)
			}
		}
	}
}

// TestClippedMeanMatchesExamples checks the fused clipped-mean loop against
// explicit per-example clipping.
func TestClippedMeanMatchesExamples(t *testing.T) {
	data := toyData(t, 50, 3, 5)
	r, _ := NewRidge(data, 0.1, []float64{1, 0, -1})
	n := &node{ridge: r, c: 0.8, xx: make([]float64, data.N)}
	for i := range n.xx {
		x := data.Row(i)
		n.xx[i] = dot(x, x)
	}
	theta := []float64{0.5, -0.5, 2}
	got := make([]float64, 3)
	n.clippedMean(theta, got)
	want := make([]float64, 3)
	g := make([]float64, 3)
	for i := 0; i < data.N; i++ {
		r.ExampleGrad(i, theta, g)
		s := math.Min(1, n.c/math.Sqrt(dot(g, g)))
		for k := range want {
			want[k] += s * g[k] / float64(data.N)
		}
	}
	for k := range got {
		if math.Abs(got[k]-want[k]) > 1e-13 {
			t.Errorf("coord %d: %v vs %v", k, got[k], want[k])
		}
	}
}

func TestFeatureScoresByHand(t *testing.T) {
	data, _ := NewData([]float64{2, 0, 0, 3, 2, 3}, []float64{1, 1, 1}, 2)
	c := mat.NewSymDense(2, []float64{4, 0, 0, 1})
	p1, err := FeatureScores(data, c, ClipProp1)
	if err != nil {
		t.Fatal(err)
	}
	p3, _ := FeatureScores(data, c, ClipProp3)
	// x = (2,0): C⁻¹x = (0.5,0): (‖x‖²‖C⁻¹x‖²)^{1/4} = 1, (xᵀC⁻¹x)^{1/2} = 1.
	// x = (0,3): 3 and 3. x = (2,3): (13·9.25)^{1/4} and √10.
	want1 := []float64{1, 3, math.Pow(13*9.25, 0.25)}
	want3 := []float64{1, 3, math.Sqrt(10)}
	for i := range want1 {
		if math.Abs(p1[i]-want1[i]) > 1e-14 || math.Abs(p3[i]-want3[i]) > 1e-14 {
			t.Errorf("row %d: prop1 %v prop3 %v, want %v %v", i, p1[i], p3[i], want1[i], want3[i])
		}
	}
	cl, k, err := ClipFeatures(data, c, 2, ClipProp1)
	if err != nil || k != 2 {
		t.Fatalf("clipped %d rows, err %v", k, err)
	}
	if cl.X[0] != 2 || cl.X[1] != 0 {
		t.Errorf("unclipped row changed: %v", cl.X[:2])
	}
	if got := cl.X[3]; math.Abs(got-2) > 1e-14 {
		t.Errorf("row (0,3) clipped to %v, want (0,2)", cl.X[2:4])
	}
	if _, _, err := ClipFeatures(data, mat.NewSymDense(2, []float64{1, 2, 2, 1}), 1, ClipProp1); err == nil {
		t.Error("indefinite C accepted")
	}
}

// TestProposition1Bound checks ‖x̃‖² x̃ᵀÃ⁻²x̃ ≤ R_c⁴/ρ² after Proposition 1
// clipping whenever Ã ⪰ ρC.
func TestProposition1Bound(t *testing.T) {
	data := toyData(t, 500, 4, 6)
	c := mat.NewSymDense(4, []float64{2, 0.3, 0, 0, 0.3, 1, 0, 0, 0, 0, 0.5, 0.1, 0, 0, 0.1, 1.5})
	const rc = 1.5
	cl, k, err := ClipFeatures(data, c, rc, ClipProp1)
	if err != nil || k == 0 {
		t.Fatalf("clipped %d, %v", k, err)
	}
	r, _ := NewRidge(cl, 0.05, nil)
	at := r.Quadratic().A
	// Largest ρ with Ã ⪰ ρC: smallest generalized eigenvalue, found by bisection.
	lo, hi := 0.0, 10.0
	for i := 0; i < 100; i++ {
		mid := (lo + hi) / 2
		if _, ok, _ := PTRScores(cl, at, c, mid); ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	rho := lo * 0.999
	var ch mat.Cholesky
	ch.Factorize(at)
	var v mat.VecDense
	for i := 0; i < cl.N; i++ {
		x := cl.Row(i)
		ch.SolveVecTo(&v, mat.NewVecDense(4, append([]float64(nil), x...)))
		ainv := v.RawVector().Data
		if got := dot(x, x) * dot(ainv, ainv); got > math.Pow(rc, 4)/(rho*rho)*(1+1e-12) {
			t.Fatalf("row %d: ‖x̃‖²x̃ᵀÃ⁻²x̃ = %v > R_c⁴/ρ² = %v", i, got, math.Pow(rc, 4)/(rho*rho))
		}
	}
}

// TestRelativeSensitivityHolds checks Definition 2 with the rigorous
// constants on random neighbours and parameters.
func TestRelativeSensitivityHolds(t *testing.T) {
	data := toyData(t, 80, 3, 7)
	c := mat.NewSymDense(3, nil)
	r0, _ := NewRidge(data, 0.1, nil)
	c.CopySym(r0.Quadratic().A)
	const rc = 2.0
	cl, _, _ := ClipFeatures(data, c, rc, ClipProp1)
	r, _ := NewRidge(cl, 0.1, nil)
	q := r.Quadratic()
	const rho = 0.5
	if _, ok, _ := PTRScores(cl, q.A, c, rho); !ok {
		t.Fatal("Ã ⪰ ρC does not hold for the toy data")
	}
	s, err := RelativeSensitivity(cl, rc, rho, ConstantsRigorous)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(9, 9))
	g, g2 := make([]float64, 3), make([]float64, 3)
	worst := 0.0
	for trial := 0; trial < 2000; trial++ {
		// Neighbour: row 0 replaced by a clipped row scaled down, with a
		// target keeping ‖x y‖ ≤ max‖x_i y_i‖.
		nb := &Data{X: append([]float64(nil), cl.X...), Y: append([]float64(nil), cl.Y...), N: cl.N, D: 3}
		src := cl.Row(rng.IntN(cl.N))
		f := rng.Float64()
		for k := 0; k < 3; k++ {
			nb.X[k] = f * src[k]
		}
		nx := math.Sqrt(dot(nb.Row(0), nb.Row(0)))
		if nx > 0 {
			nb.Y[0] = (2*rng.Float64() - 1) * s.MaxXY / nx
		}
		rn, _ := NewRidge(nb, 0.1, nil)
		theta := []float64{rng.NormFloat64() * 3, rng.NormFloat64() * 3, rng.NormFloat64() * 3}
		q.Grad(theta, g)
		rn.Quadratic().Grad(theta, g2)
		var diff float64
		for k := range g {
			diff += (g[k] - g2[k]) * (g[k] - g2[k])
		}
		bound := s.Eta*s.Eta*dot(g, g) + s.RRel*s.RRel
		if diff > bound {
			t.Fatalf("Definition 2 violated: ‖Δ∇‖² = %v > %v", diff, bound)
		}
		worst = math.Max(worst, diff/bound)
	}
	t.Logf("η = %.4g, R_rel = %.4g, worst ratio ‖Δ∇‖²/bound = %.3g", s.Eta, s.RRel, worst)
}

func TestDeltaPlusByHand(t *testing.T) {
	for _, tc := range []struct {
		name string
		x    []float64
		d    int
		mu   float64
		c    []float64
		rho  float64
		want int
		ok   bool
	}{
		// Ã = 1, Ã − ρ = 0.5, scores 2,2,2,2: two are needed to reach n = 4.
		{"four ones", []float64{1, 1, 1, 1}, 1, 0, []float64{1}, 0.5, 2, true},
		// Ã = 1.5, Ã − ρ = 1, scores 4,1,1,0: the largest alone reaches 4.
		{"one large", []float64{2, 1, 1, 0}, 1, 0, []float64{1}, 0.5, 1, true},
		// Ã − ρC = 0 is not positive definite: Δ = 0.
		{"at rho", []float64{1, 1, 1, 1}, 1, 0, []float64{1}, 1, 0, false},
		// 2-D: Ã = diag(.5,.5), Ã − ρI = .25I, scores 4 each: Δ₊ = 1 (true Δ = 2).
		{"2d", []float64{1, 0, 0, 1, 1, 0, 0, 1}, 2, 0, []float64{1, 0, 0, 1}, 0.25, 1, true},
		// μ = 0.5 adds to Ã: Ã = 1.5, Ã − ρ = 1, scores 1 each: all 4 needed.
		{"regularized", []float64{1, 1, 1, 1}, 1, 0.5, []float64{1}, 0.5, 4, true},
	} {
		y := make([]float64, len(tc.x)/tc.d)
		data, _ := NewData(tc.x, y, tc.d)
		r, _ := NewRidge(data, tc.mu, nil)
		scores, ok, err := PTRScores(data, r.Quadratic().A, mat.NewSymDense(tc.d, tc.c), tc.rho)
		if err != nil || ok != tc.ok {
			t.Fatalf("%s: ok=%v err=%v", tc.name, ok, err)
		}
		got := 0
		if ok {
			got = DeltaPlus(scores, data.N)
		}
		if got != tc.want {
			t.Errorf("%s: Δ₊ = %d, want %d (scores %v)", tc.name, got, tc.want, scores)
		}
	}
}

// TestDeltaPlusLowerBound checks Δ₊ ≤ Δ by brute force over all removal sets
// of tiny datasets (removal to zero rows is the worst replacement, eq. (63)).
func TestDeltaPlusLowerBound(t *testing.T) {
	for seed := uint64(0); seed < 20; seed++ {
		data := toyData(t, 8, 2, 100+seed)
		c := mat.NewSymDense(2, []float64{1, 0.2, 0.2, 0.8})
		r, _ := NewRidge(data, 0.01, nil)
		at := r.Quadratic().A
		rho := 0.3
		scores, ok, _ := PTRScores(data, at, c, rho)
		if !ok {
			continue
		}
		dp := DeltaPlus(scores, data.N)
		delta := data.N + 1
		for mask := 1; mask < 1<<data.N; mask++ {
			m := mat.NewSymDense(2, nil)
			for p := 0; p < 2; p++ {
				for q := p; q < 2; q++ {
					m.SetSym(p, q, at.At(p, q)-rho*c.At(p, q))
				}
			}
			size := 0
			for i := 0; i < data.N; i++ {
				if mask&(1<<i) != 0 {
					size++
					x := data.Row(i)
					for p := 0; p < 2; p++ {
						for q := p; q < 2; q++ {
							m.SetSym(p, q, m.At(p, q)-x[p]*x[q]/float64(data.N))
						}
					}
				}
			}
			var e mat.EigenSym
			e.Factorize(m, false)
			if e.Values(nil)[0] < 0 && size < delta {
				delta = size
			}
		}
		if dp > delta {
			t.Errorf("seed %d: Δ₊ = %d > brute-force Δ = %d", seed, dp, delta)
		}
	}
}

func TestPTRTestDecision(t *testing.T) {
	data, _ := NewData([]float64{1, 1, 1, 1}, []float64{0, 0, 0, 0}, 1)
	r, _ := NewRidge(data, 0, nil)
	at := r.Quadratic().A
	c := mat.NewSymDense(1, []float64{1})
	// Δ₊ = 2; with ε = 100 the Laplace noise has scale 0.01.
	for _, tc := range []struct {
		delta float64
		pass  bool
	}{
		{math.Exp(-150), true}, // threshold 1.5
		{math.Exp(-250), false},
	} {
		res, err := PTRTest(data, at, c, 0.5, 100, tc.delta, rand.New(rand.NewPCG(1, 1)))
		if err != nil {
			t.Fatal(err)
		}
		if res.DeltaPlus != 2 || res.Passed != tc.pass || math.Abs(res.DeltaHat-2) > 0.2 {
			t.Errorf("δ=%v: %+v", tc.delta, res)
		}
	}
	if _, err := PTRTest(data, at, c, 0.5, 1, 0, rand.New(rand.NewPCG(1, 1))); err == nil {
		t.Error("δ = 0 accepted")
	}
}

func TestSplits(t *testing.T) {
	data := toyData(t, 101, 2, 8)
	rng := func() *rand.Rand { return rand.New(rand.NewPCG(3, 3)) }
	nodes, err := Split(data, SplitConfig{Kind: SplitRandom, Nodes: 3}, 0.1, rng())
	if err != nil || len(nodes) != 3 || nodes[0].Data.N+nodes[1].Data.N+nodes[2].Data.N != 101 {
		t.Fatalf("random split: %v", err)
	}
	nodes, _ = Split(data, SplitConfig{Kind: SplitLabel, Nodes: 2, Warmup: 10}, 0.1, rng())
	for j, nd := range nodes {
		wrong := 0
		for _, y := range nd.Data.Y {
			if (y > 0) != (j == 0) {
				wrong++
			}
		}
		if wrong > 10 {
			t.Errorf("label split node %d holds %d rows of the other label (warm-up 10)", j, wrong)
		}
	}
	nodes, _ = Split(data, SplitConfig{Kind: SplitBias, Nodes: 2, Bias: 4}, 0.1, rng())
	if nodes[0].Shift != nil || nodes[1].Shift[0] != 4 || nodes[1].Shift[1] != 4 {
		t.Errorf("bias shifts %v %v", nodes[0].Shift, nodes[1].Shift)
	}
	for _, bad := range []SplitConfig{
		{Kind: "nope", Nodes: 2},
		{Kind: SplitLabel, Nodes: 3},
		{Kind: SplitRandom, Nodes: 0},
		{Kind: SplitBias, Nodes: 1},
	} {
		if _, err := Split(data, bad, 0.1, rng()); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

func TestRunDeterministicAndRGM(t *testing.T) {
	data := toyData(t, 4000, 3, 9)
	nodes, _ := Split(data, SplitConfig{Kind: SplitRandom, Nodes: 2}, 0.5, rand.New(rand.NewPCG(4, 4)))
	cfg := Config{Method: MethodRGM, Iterations: 50, Epsilon: 1, Alpha: 2, Constants: ConstantsRigorous}
	a, err := Run(nodes, cfg, 11)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Run(nodes, cfg, 11)
	for i := range a.Gap {
		if a.Gap[i] != b.Gap[i] {
			t.Fatalf("same seed, different gap at %d", i)
		}
	}
	for _, nd := range a.Nodes {
		if nd.StepRDP == nil || !nd.StepRDP.Valid || math.Abs(nd.StepRDP.Epsilon-1) > 1e-12 || !nd.PTR.Passed {
			t.Errorf("node report %+v", nd)
		}
	}
	if _, err := Run(nodes, Config{Method: "nope", Iterations: 1, Epsilon: 1, Alpha: 2}, 1); err == nil {
		t.Error("unknown method accepted")
	}
	if _, err := Run(nodes, Config{Method: MethodRGM, Iterations: 1, Epsilon: 1e-9, Alpha: 2}, 1); err == nil {
		t.Error("unachievable ε accepted")
	}
}
