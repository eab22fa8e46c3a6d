package aggregate

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/privtrain/privtrain/privacy"
	"github.com/privtrain/privtrain/randstream"
)

// attackEvents are the events of the precision attack test. The first is
// Mironov's (and the audit's): a float32 y = 0.3 + float32(σN) with
// |y| < 0.25 is a multiple of 2⁻²⁵ that is typically not one of 2⁻²³, while
// under D′ the sum 1.3 makes every such y a multiple of 2⁻²³.
var attackEvents = []struct {
	name string
	in   func(y float32) bool
}{
	{"|y|<0.25 and y not a multiple of 2^-23", func(y float32) bool {
		v := float64(y) * (1 << 23)
		return math.Abs(float64(y)) < 0.25 && v != math.Trunc(v)
	}},
	{"|y|<0.25", func(y float32) bool { return math.Abs(float64(y)) < 0.25 }},
	{"y<-1", func(y float32) bool { return y < -1 }},
	{"|y|<0.25 and y/2^-12 even", func(y float32) bool {
		v := float64(y) * (1 << 12)
		return math.Abs(float64(y)) < 0.25 && v == math.Trunc(v) && math.Mod(v, 2) == 0
	}},
}

// countEvents releases rule sum of the one-dimensional dataset rows n times
// (on two goroutines with separate streams) and counts each attack event.
func countEvents(t *testing.T, secure bool, rows []float32, n int) []int {
	t.Helper()
	const workers = 2
	counts := make([][]int, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			counts[w] = make([]int, len(attackEvents))
			agg, err := New("sum", Config{Sigma: 1.1, ClipNorm: 1, FloatNoise: !secure})
			if err != nil {
				errs[w] = err
				return
			}
			norms := make([]float64, len(rows))
			for i, v := range rows {
				norms[i] = math.Abs(float64(v))
			}
			g := Grads{G: rows, Norms: norms, M: len(rows), P: 1, ClipNorm: 1}
			out := make([]float32, 1)
			rng := randstream.FromSeed(7).Stream(fmt.Sprintf("attack-%v-%d-%d", secure, len(rows), w), 0)
			for i := w; i < n; i += workers {
				if _, err := agg.Aggregate(g, rng, out); err != nil {
					errs[w] = err
					return
				}
				for e, ev := range attackEvents {
					if ev.in(out[0]) {
						counts[w][e]++
					}
				}
			}
		}(w)
	}
	wg.Wait()
	total := make([]int, len(attackEvents))
	for w := range counts {
		if errs[w] != nil {
			t.Fatal(errs[w])
		}
		for e := range total {
			total[e] += counts[w][e]
		}
	}
	return total
}

// empiricalEpsilon is a high-confidence lower bound on the ε that the event
// frequencies c1/n, c2/n (D, D′) certify at δ: log((p₁ − δ)/p₂) with p₁
// lowered and p₂ raised by 5 binomial standard errors (+5/n).
func empiricalEpsilon(c1, c2, n int, delta float64) float64 {
	se := func(c int) float64 {
		p := float64(c) / float64(n)
		return 5*math.Sqrt(p*(1-p)/float64(n)) + 5/float64(n)
	}
	lo := float64(c1)/float64(n) - se(c1) - delta
	hi := float64(c2)/float64(n) + se(c2)
	if lo <= 0 {
		return 0
	}
	return math.Log(lo / hi)
}

// TestPrecisionAttack reproduces the floating-point attack of Mironov (CCS
// 2012) as the audit ran it: rule sum, σ = 1.1, R = 1, D = {0.3u} versus
// D′ = {0.3u, 1.0u} in dimension 1, 10⁶ releases of each (10⁵ with -short).
// The float release leaks — the event "|y| < 0.25 and y not a multiple of
// 2⁻²³" is frequent under D and impossible under D′ — while for the secure
// release (Config.Secure) every event's frequencies agree within the claimed
// (ε, δ) of one step, δ = 1e-3.
func TestPrecisionAttack(t *testing.T) {
	n := 1000000
	if testing.Short() {
		n = 100000
	}
	const delta = 1e-3
	d, dPrime := []float32{0.3}, []float32{0.3, 1.0}

	floatD, floatD2 := countEvents(t, false, d, n), countEvents(t, false, dPrime, n)
	t.Logf("float release, %d runs each: event counts D %v, D′ %v", n, floatD, floatD2)
	if floatD[0] < n/20 || floatD2[0] != 0 {
		t.Fatalf("the attack no longer shows the float leak (counts %d vs %d): the test has lost its reference", floatD[0], floatD2[0])
	}
	gauss := privacy.Gaussian{Sigma: 1.1}
	claimedFloat := oneStepEpsilon(t, gauss, delta)
	if e := empiricalEpsilon(floatD[0], floatD2[0], n, delta); e <= claimedFloat {
		t.Fatalf("float release: empirical ε %v does not exceed the claimed %v", e, claimedFloat)
	} else {
		t.Logf("float release: empirical ε ≥ %.2f at δ = %g where %.2f is claimed", e, delta, claimedFloat)
	}

	agg, err := New("sum", Config{Sigma: 1.1, ClipNorm: 1})
	if err != nil {
		t.Fatal(err)
	}
	claimed := oneStepEpsilon(t, agg.(Planned).Mechanism(), delta)
	secD, secD2 := countEvents(t, true, d, n), countEvents(t, true, dPrime, n)
	t.Logf("secure release, %d runs each: event counts D %v, D′ %v; claimed ε %.3f", n, secD, secD2, claimed)
	for e, ev := range attackEvents {
		worst := 0.0
		for _, dir := range [][2]int{{secD[e], secD2[e]}, {secD2[e], secD[e]}} {
			emp := empiricalEpsilon(dir[0], dir[1], n, delta)
			worst = math.Max(worst, emp)
			if emp > claimed {
				t.Errorf("secure release, event %q: counts %d vs %d certify ε ≥ %v > claimed %v", ev.name, dir[0], dir[1], emp, claimed)
			}
		}
		t.Logf("secure release, event %q: empirical ε ≥ %.2f (claimed %.2f)", ev.name, worst, claimed)
	}
	if secD[1] < n/20 || secD2[1] < n/100 {
		t.Errorf("secure release: event |y|<0.25 too rare (%d, %d): the comparison is vacuous", secD[1], secD2[1])
	}
}

func oneStepEpsilon(t *testing.T, m privacy.Mechanism, delta float64) float64 {
	t.Helper()
	a, err := privacy.NewRDPAccountant(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Compose(m, 1); err != nil {
		t.Fatal(err)
	}
	r, err := a.Epsilon(delta, privacy.ConversionBBG)
	if err != nil {
		t.Fatal(err)
	}
	return r.Epsilon
}

// The secure grid and noise: γ = 2^(⌊log₂ σR⌋−14), the noise scale
// s = σR/γ exactly (σ, R with short mantissas) or the next 64-bit dyadic
// above (within 2⁻⁶³ relative), the reported mechanism exactly the float
// path's privacy.Gaussian{σ}, every release a multiple of γ, and the release
// unbiased: the mean of many releases is the exact sum of the truncated rows.
func TestSecureSumGridAndNoise(t *testing.T) {
	cases := []struct{ sigma, r float64 }{{1.1, 1}, {0.7, 3}, {5, 0.1}}
	for _, c := range cases {
		agg, err := New("sum", Config{Sigma: c.sigma, ClipNorm: c.r})
		if err != nil {
			t.Fatal(err)
		}
		sec := agg.(*Sum).sec
		wantExp := int(math.Floor(math.Log2(c.sigma*c.r))) - 14
		if sec.exp != wantExp || sec.gamma != math.Ldexp(1, wantExp) {
			t.Errorf("σ=%v R=%v: grid 2^%d, want 2^%d", c.sigma, c.r, sec.exp, wantExp)
		}
		exact := new(big.Float).SetPrec(512).Mul(new(big.Float).SetFloat64(c.sigma), new(big.Float).SetFloat64(c.r))
		exact.SetMantExp(exact, -sec.exp) // σR/γ
		got := sec.noise.ScaleFloat()
		gap := new(big.Float).SetPrec(512).Sub(got, exact)
		if gap.Sign() < 0 || gap.Cmp(new(big.Float).SetMantExp(exact, -63)) >= 0 {
			t.Errorf("σ=%v R=%v: noise scale %v, σR/γ = %v", c.sigma, c.r, got, exact)
		}
		if m := agg.(Planned).Mechanism(); m != (privacy.Gaussian{Sigma: c.sigma}) {
			t.Errorf("σ=%v: mechanism %#v, want privacy.Gaussian{σ}", c.sigma, m)
		}
		noiseSD, _ := got.Float64()
		// Three rows in dimension 4; the exact integer sum of the truncated
		// rows is computed independently here.
		rows := []float32{0.3, -0.2, 0.1, 0, 0.25, 0.25, -0.5, 0.1, -0.01, 0.002, 0, 0.3}
		for i := range rows {
			rows[i] *= float32(c.r)
		}
		g := Grads{G: rows, M: 3, P: 4, ClipNorm: c.r}
		for i := 0; i < 3; i++ {
			g.Norms = append(g.Norms, rowNorm(rows[i*4:(i+1)*4]))
		}
		want := make([]float64, 4)
		for i := 0; i < 3; i++ {
			for j := 0; j < 4; j++ {
				want[j] += math.Trunc(float64(rows[i*4+j]) / sec.gamma)
			}
		}
		rng := randstream.FromSeed(3).Stream("grid", 0)
		out := make([]float32, 4)
		const reps = 20000
		mean := make([]float64, 4)
		for k := 0; k < reps; k++ {
			if _, err := agg.Aggregate(g, rng, out); err != nil {
				t.Fatal(err)
			}
			for j, v := range out {
				q := float64(v) / sec.gamma
				if q != math.Trunc(q) {
					t.Fatalf("release %v is not a multiple of γ = %v", v, sec.gamma)
				}
				mean[j] += q / reps
			}
		}
		sd := noiseSD / math.Sqrt(reps)
		for j := range mean {
			if math.Abs(mean[j]-want[j]) > 5*sd {
				t.Errorf("σ=%v R=%v coord %d: mean release %v grid steps, exact truncated sum %v (±%v)", c.sigma, c.r, j, mean[j], want[j], 5*sd)
			}
		}
	}
}

func rowNorm(r []float32) float64 {
	var s float64
	for _, v := range r {
		s += float64(v) * float64(v)
	}
	return math.Sqrt(s)
}

// A row whose norm exceeds R slightly (as the clipping tolerance allows) is
// shrunk until its exact grid norm is within R/γ.
func TestSecureRowsWithinClipNorm(t *testing.T) {
	agg, err := New("sum", Config{Sigma: 1, ClipNorm: 1})
	if err != nil {
		t.Fatal(err)
	}
	sec := agg.(*Sum).sec
	over := []float32{0.6, 0.8 * (1 + 1e-4)} // norm 1 + 6.4e-5: above R/γ even after truncation
	g := Grads{G: over, Norms: []float64{rowNorm(over)}, M: 1, P: 2, ClipNorm: 1}
	if err := sec.prepare(g); err != nil {
		t.Fatal(err)
	}
	if sec.sumsq[0] > sec.rowMax || sec.mult[0] >= 1 {
		t.Fatalf("row not shrunk: ‖n‖² = %d > %d (mult %v)", sec.sumsq[0], sec.rowMax, sec.mult[0])
	}
	if r := math.Sqrt(float64(sec.rowMax)) * sec.gamma; r > 1 || r < 1-1e-4 {
		t.Fatalf("⌊R'²⌋ gives R = %v", r)
	}
}

// The exact PTR test: B is b·log(1/(2δ₀)) rounded up (within 1e-8), the
// mechanism is exactly the float path's PTRMechanism(cfg), only the bit is
// released (DeltaHat 0), and the branches follow Δ.
func TestSecurePTR(t *testing.T) {
	// 40 rows of norm 0.1 (< τ) and F = 30: Δ = F = 30 > B ≈ 18.4, so the
	// test passes except with probability ≈ ½e^{−11.6}; with 40 rows of norm
	// 0.9 > τ, Δ = 0 and it fails except with probability ≤ δ₀.
	mk := func(norm float32) Grads {
		g := Grads{M: 40, P: 2, ClipNorm: 1}
		for i := 0; i < 40; i++ {
			g.G = append(g.G, norm, 0)
			g.Norms = append(g.Norms, float64(norm))
		}
		return g
	}
	cfg := Config{Sigma: 1.1, ClipNorm: 1, Tau: 0.5, B: 1, Delta0: 1e-8, F: 30}
	agg, err := New("ptr-tsum", cfg)
	if err != nil {
		t.Fatal(err)
	}
	if m := agg.(Planned).Mechanism(); m != privacy.Mechanism(PTRMechanism(cfg)) {
		t.Fatalf("mechanism %#v, want %#v", m, PTRMechanism(cfg))
	}
	if B, want := agg.(*PTRTSum).Threshold(), math.Log(1/(2*cfg.Delta0)); B < want || B > want*(1+1e-8) {
		t.Fatalf("threshold %v, b·log(1/(2δ₀)) = %v", B, want)
	}
	rng := randstream.FromSeed(9).Stream("ptr", 0)
	out := make([]float32, 2)
	for _, c := range []struct {
		norm   float32
		delta  int
		branch string
	}{{0.1, 30, "-"}, {0.9, 0, "+"}} {
		for k := 0; k < 200; k++ {
			rep, err := agg.Aggregate(mk(c.norm), rng, out)
			if err != nil {
				t.Fatal(err)
			}
			if ptrOf(rep).Delta != c.delta || ptrOf(rep).Branch.String() != c.branch || ptrOf(rep).DeltaHat != 0 {
				t.Fatalf("norm %v: Δ %d Δ̂ %v branch %q, want Δ %d branch %q", c.norm, ptrOf(rep).Delta, ptrOf(rep).DeltaHat, ptrOf(rep).Branch, c.delta, c.branch)
			}
			if c.branch == "-" && rep.Trimmed != 30 {
				t.Fatalf("passed test trimmed %d, want 30", rep.Trimmed)
			}
		}
	}
}

func TestSecureConfigErrors(t *testing.T) {
	for _, c := range []struct {
		rule string
		cfg  Config
		want string
	}{
		// The rule's own validation comes first: krum has no noisy mode
		// at all, secure or float.
		{"krum", Config{Sigma: 1, ClipNorm: 1}, "only σ = 0"},
		{"centered-clip", Config{Sigma: 1, ClipNorm: 1, Radius: 1, Reference: "zero"}, "no secure-noise mode"},
		{"ptr-tsum", Config{Sigma: 1, ClipNorm: 1, Tau: 0.5, B: -1, Delta0: 1e-8}, "scale"},
	} {
		if _, err := New(c.rule, c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %+v: got %v, want an error containing %q", c.rule, c.cfg, err, c.want)
		}
	}
}

// BenchmarkSecureRules runs sum and ptr-tsum on BenchmarkRules' batch
// (256 × 26,010) in float and secure mode.
func BenchmarkSecureRules(b *testing.B) {
	const m, p = 256, 26010
	g := batch(randRows(rand.New(rand.NewPCG(1, 1)), m, p, 1), 1)
	for _, name := range []string{"sum", "ptr-tsum"} {
		for _, secure := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/secure=%v", name, secure), func(b *testing.B) {
				a, err := New(name, Config{Sigma: 1.1, ClipNorm: 1, Tau: 0.5, B: 1, Delta0: 1e-8, F: 64, FloatNoise: !secure})
				if err != nil {
					b.Fatal(err)
				}
				out := make([]float32, p)
				rng := randstream.FromSeed(2).Stream("bench", 0)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if _, err := a.Aggregate(g, rng, out); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkSecurePrepare is the secure release's exact integer sum and
// squared norms of an MNIST DP step's clipped rows (256 × 26,010).
func BenchmarkSecurePrepare(b *testing.B) {
	const m, p = 256, 26010
	g := batch(randRows(rand.New(rand.NewPCG(1, 1)), m, p, 1), 1)
	sec, err := newSecure(PTROptions{Sigma: 1.1, ClipNorm: 1}, false)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(4 * m * p))
	for range b.N {
		if err := sec.prepare(g); err != nil {
			b.Fatal(err)
		}
	}
}

// Secure tsum releases the exact integer sum of the rows kept by exact grid
// norm: with F = 1 of three rows, the mean release over many draws equals
// the independently computed sum of the two smallest truncated rows, and a
// tie in grid norm is broken by index.
func TestSecureTSumKeepsSmallestRows(t *testing.T) {
	agg, err := New("tsum", Config{Sigma: 1, ClipNorm: 1, F: 1})
	if err != nil {
		t.Fatal(err)
	}
	sec := agg.(*TSum).sec
	rows := []float32{0.5, 0.5, 0.9, 0.1, 0.5, -0.5} // rows 0 and 2 tie; row 1 is the largest
	g := Grads{G: rows, M: 3, P: 2, ClipNorm: 1}
	for i := 0; i < 3; i++ {
		g.Norms = append(g.Norms, rowNorm(rows[2*i:2*i+2]))
	}
	want := make([]float64, 2)
	for _, i := range []int{0, 2} {
		for j := 0; j < 2; j++ {
			want[j] += math.Trunc(float64(rows[2*i+j]) / sec.gamma)
		}
	}
	rng := randstream.FromSeed(11).Stream("tsum", 0)
	out := make([]float32, 2)
	const reps = 20000
	mean := make([]float64, 2)
	for k := 0; k < reps; k++ {
		rep, err := agg.Aggregate(g, rng, out)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Trimmed != 1 {
			t.Fatalf("trimmed %d, want 1", rep.Trimmed)
		}
		for j, v := range out {
			mean[j] += float64(v) / sec.gamma / reps
		}
	}
	noiseSD, _ := sec.noise.ScaleFloat().Float64()
	sd := noiseSD / math.Sqrt(reps)
	for j := range mean {
		if math.Abs(mean[j]-want[j]) > 5*sd {
			t.Errorf("coord %d: mean %v grid steps, want %v ± %v", j, mean[j], want[j], 5*sd)
		}
	}
}

// The secure PTR test's pass frequency is P[Lap(b) > B − Δ] with B the
// certified threshold (here Δ = F = 19 and 16 around B ≈ 17.7, so both
// branches are frequent): 20,000 tests per margin within 5 binomial
// standard deviations of the exact probability.
func TestSecurePTRPassRate(t *testing.T) {
	for _, f := range []int{19, 16} {
		cfg := Config{Sigma: 1.1, ClipNorm: 1, Tau: 0.5, B: 1, Delta0: 1e-8, F: f}
		agg, err := New("ptr-tsum", cfg)
		if err != nil {
			t.Fatal(err)
		}
		g := Grads{M: 40, P: 2, ClipNorm: 1}
		for i := 0; i < 40; i++ {
			g.G = append(g.G, 0.1, 0)
			g.Norms = append(g.Norms, 0.1)
		}
		B := agg.(*PTRTSum).Threshold()
		want := 0.5 * math.Exp(-(B-float64(f))/cfg.B)
		if float64(f) > B {
			want = 1 - 0.5*math.Exp((B-float64(f))/cfg.B)
		}
		rng := randstream.FromSeed(17).Stream("ptr-rate", uint64(f))
		out := make([]float32, 2)
		const n = 20000
		passed := 0
		for k := 0; k < n; k++ {
			rep, err := agg.Aggregate(g, rng, out)
			if err != nil {
				t.Fatal(err)
			}
			if ptrOf(rep).Delta != f {
				t.Fatalf("Δ = %d, want %d", ptrOf(rep).Delta, f)
			}
			if ptrOf(rep).Branch == PTRPassed {
				passed++
			}
		}
		sd := math.Sqrt(n * want * (1 - want))
		if math.Abs(float64(passed)-n*want) > 5*sd {
			t.Errorf("Δ = %d, B = %v: %d of %d passed, want %.0f ± %.0f", f, B, passed, n, n*want, 5*sd)
		}
	}
}

// The secure release of every private rule reports exactly the float
// path's mechanism (so the accountant, its PLD and every step count are
// the same), for σ and R with long mantissas too.
func TestSecureMechanismIsFloatMechanism(t *testing.T) {
	for _, c := range []struct {
		rule string
		cfg  Config
	}{
		{"sum", Config{Sigma: 1.1, ClipNorm: 1, FloatNoise: true}},
		{"sum", Config{Sigma: 0.7, ClipNorm: 0.1, FloatNoise: true}},
		{"tsum", Config{Sigma: 1.1, ClipNorm: 1, F: 3, FloatNoise: true}},
		{"ptr-tsum", Config{Sigma: 1.1, ClipNorm: 1, Tau: 0.5, B: 1, Delta0: 1e-8, F: 64, FloatNoise: true}},
		{"ptr-tsum", Config{Sigma: 0.7, ClipNorm: 3, Tau: 0.3, B: 2, Delta0: 1e-6, F: 10, FloatNoise: true}},
	} {
		fl, err := New(c.rule, c.cfg)
		if err != nil {
			t.Fatal(err)
		}
		sc := c.cfg
		sc.FloatNoise = false
		se, err := New(c.rule, sc)
		if err != nil {
			t.Fatal(err)
		}
		if a, b := fl.(Planned).Mechanism(), se.(Planned).Mechanism(); a != b {
			t.Errorf("%s %+v: float mechanism %#v, secure %#v", c.rule, c.cfg, a, b)
		}
	}
}

// A fixed key yields fixed secure release bits (integer rows, integer
// noise, one IEEE conversion): the hash below must be the same on every
// machine and at every PRIVTRAIN_ASM level; a change of the release must
// say so in its commit.
func TestSecureReleaseGolden(t *testing.T) {
	const m, p = 24, 5000
	// Rows from integers only (an LCG), scaled by powers of two: the same
	// float32 values on every machine, norms between 0.16 and 0.65.
	rows := make([][]float32, m)
	x := uint64(12345)
	for i := range rows {
		rows[i] = make([]float32, p)
		for j := range rows[i] {
			x = x*6364136223846793005 + 1442695040888963407
			rows[i][j] = float32(int64(x>>53)-1024) * float32(math.Ldexp(1, -16-i%3))
		}
	}
	g := batch(rows, 1)
	h := sha256.New()
	for _, rule := range []string{"sum", "tsum", "ptr-tsum"} {
		agg, err := New(rule, Config{Sigma: 1.1, ClipNorm: 1, Tau: 0.5, B: 1, Delta0: 1e-3, F: 8})
		if err != nil {
			t.Fatal(err)
		}
		out := make([]float32, p)
		rng := randstream.FromSeed(99).Stream("golden-"+rule, 0)
		for step := 0; step < 3; step++ {
			if _, err := agg.Aggregate(g, rng, out); err != nil {
				t.Fatal(err)
			}
			for _, v := range out {
				h.Write(binary.LittleEndian.AppendUint32(nil, math.Float32bits(v)))
			}
		}
	}
	const want = "84d385b110da0866f99a3737b7419f3400cee7a817a50d25b12ea45e62afa587"
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		t.Errorf("hash of the secure releases %s, want %s", got, want)
	}
}
