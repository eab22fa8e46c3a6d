package exactnoise

import (
	"math"
	"math/big"
	"sort"
	"testing"

	"github.com/privtrain/privtrain/randstream"
)

// phi is the standard normal CDF (float64: fine for a test's expected
// counts).
func phi(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

// roundedPMF is P(round(sX) = j) = Φ((j+½)/s) − Φ((j−½)/s), computed on
// the side of the upper tail that keeps the difference accurate.
func roundedPMF(s float64) func(int64) float64 {
	return func(j int64) float64 {
		a, b := (float64(j)-0.5)/s, (float64(j)+0.5)/s
		if a > 0 {
			return phi(-a) - phi(-b)
		}
		return phi(b) - phi(a)
	}
}

// The building blocks' probabilities: halfExp e^{−1/2}; expU and
// halfSquareExp at u-rands x whose first 20 digits are fixed (x uniform
// in an interval of width 2⁻²⁰, so the probabilities are e^{−x} and
// e^{−x²/2} within 2⁻²⁰).
func TestNormalBuildingBlocks(t *testing.T) {
	s := &bitSrc{r: randstream.FromSeed(11).Stream("blocks", 0)}
	var x, p, q urand
	const n = 200000
	k := 0
	for i := 0; i < n; i++ {
		if s.halfExp(&p, &q) {
			k++
		}
	}
	zWithin(t, "halfExp", k, n, math.Exp(-0.5))
	k = 0
	for i := 0; i < n; i++ {
		if s.bernExpHalf() {
			k++
		}
	}
	zWithin(t, "bernExpHalf", k, n, math.Exp(-0.5))
	for _, v := range []float64{0.03, 0.5, 0.77, 0.999} {
		X := uint64(v * (1 << 20))
		ke, kh := 0, 0
		for i := 0; i < n; i++ {
			x.reset()
			x.push(X, 20)
			if s.expU(&x, &p, &q) {
				ke++
			}
			x.reset()
			x.push(X, 20)
			if s.halfSquareExp(&x, &p, &q) {
				kh++
			}
		}
		xv := float64(X) / (1 << 20)
		zWithin(t, "expU", ke, n, math.Exp(-xv))
		zWithin(t, "halfSquareExp", kh, n, math.Exp(-xv*xv/2))
	}
}

// χ² against the exact pmf at small scales, where rounding shapes the
// distribution (s = 0.7: P(0) = 0.52, s = 3, s = 1.5), for the strip
// sampler (10⁶ draws) and Karney's Algorithm N (3·10⁵).
func TestRoundedNormalPMFSmall(t *testing.T) {
	r := randstream.FromSeed(12).Stream("rounded", 0)
	for _, c := range []struct {
		m uint64
		f uint
	}{{3152519739159347, 52}, {3, 0}, {3, 1}} {
		g, err := NewRoundedNormal(c.m, c.f)
		if err != nil {
			t.Fatal(err)
		}
		s, _ := g.ScaleFloat().Float64()
		cut := int64(math.Ceil(4 * s))
		chiSquarePMF(t, g.String(), func() int64 { return g.Sample(r) }, roundedPMF(s), cut, 1000000)
		// Karney's Algorithm N (sampleKarney), the independent exact sampler.
		src, sc := &bitSrc{r: r}, newNormalScratch()
		chiSquarePMF(t, g.String()+" (Karney)", func() int64 { return g.sampleKarney(src, sc) }, roundedPMF(s), cut, 300000)
	}
}

// At the production scale s ≈ 2¹⁴·√2 (σR/γ ∈ [2¹⁴, 2¹⁵)) on 10⁶ draws:
// χ² over 100 cells of about equal probability, the exact cell
// probabilities being differences of Φ at the half-integers; a
// Kolmogorov–Smirnov distance against F(j) = Φ((j+½)/s) (the 0.1% critical
// value of the continuous case, 1.95/√n, is conservative for a discrete
// law); and χ² of j mod 64 (the low bits a float sampler gets wrong) against
// its exact law (uniform within 1e-12 at this scale).
func TestRoundedNormalProductionScale(t *testing.T) {
	if testing.Short() {
		t.Skip("10⁶ draws")
	}
	g, err := NewRoundedNormal(0xb504f333f9de6485, 49)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := g.ScaleFloat().Float64()
	const n = 1000000
	v := make([]int64, n)
	g.Fill(randstream.FromSeed(13).Stream("rounded", 0), v)
	// cells: integer cut points at the normal quantiles of 1/100 steps.
	const cells = 100
	cuts := make([]int64, cells-1) // cell c = [cuts[c−1], cuts[c])
	for c := 1; c < cells; c++ {
		// Φ⁻¹ by bisection on phi.
		lo, hi := -10.0, 10.0
		for it := 0; it < 200; it++ {
			mid := (lo + hi) / 2
			if phi(mid) < float64(c)/cells {
				lo = mid
			} else {
				hi = mid
			}
		}
		cuts[c-1] = int64(math.Round(lo * s))
	}
	cdfBelow := func(j int64) float64 { return phi((float64(j) - 0.5) / s) } // P(Y < j)
	counts := make([]int, cells)
	for _, y := range v {
		counts[sort.Search(len(cuts), func(i int) bool { return cuts[i] > y })]++
	}
	var chi float64
	for c := 0; c < cells; c++ {
		pLo, pHi := 0.0, 1.0
		if c > 0 {
			pLo = cdfBelow(cuts[c-1])
		}
		if c < cells-1 {
			pHi = cdfBelow(cuts[c])
		}
		e := n * (pHi - pLo)
		chi += (float64(counts[c]) - e) * (float64(counts[c]) - e) / e
	}
	// 99 degrees of freedom: P(χ² > 170) < 1e-5.
	if chi > 170 {
		t.Errorf("χ² over %d cells = %.1f (> 170)", cells, chi)
	}
	sort.Slice(v, func(a, b int) bool { return v[a] < v[b] })
	var ks float64
	for i := 0; i < n; {
		j := i
		for j < n && v[j] == v[i] {
			j++
		}
		F := phi((float64(v[i]) + 0.5) / s)
		ks = max(ks, math.Abs(float64(j)/n-F), math.Abs(float64(i)/n-cdfBelow(v[i])))
		i = j
	}
	if crit := 1.95 / math.Sqrt(n); ks > crit {
		t.Errorf("KS distance %.2e > %.2e", ks, crit)
	}
	var mod [64]int
	for _, y := range v {
		mod[y&63]++
	}
	var chiMod float64
	for _, c := range mod {
		e := float64(n) / 64
		chiMod += (float64(c) - e) * (float64(c) - e) / e
	}
	// 63 degrees of freedom: P(χ² > 120) < 1e-5.
	if chiMod > 120 {
		t.Errorf("χ² of j mod 64 = %.1f (> 120)", chiMod)
	}
	t.Logf("s = %.3f: χ² (100 cells) = %.1f, KS = %.2e, χ² (mod 64) = %.1f", s, chi, ks, chiMod)
}

func TestRoundedNormalAtLeast(t *testing.T) {
	mk := func(v *big.Float) (*RoundedNormal, bool) {
		g, exact, err := RoundedNormalAtLeast(v)
		if err != nil {
			t.Fatal(err)
		}
		return g, exact
	}
	// Exact cases: at most 64 significant bits.
	for _, v := range []float64{0.75, 16384, 1.1 * 16384, 0.7, 23170.5} {
		g, exact := mk(new(big.Float).SetFloat64(v))
		if got, _ := g.ScaleFloat().Float64(); !exact || got != v {
			t.Errorf("s = %v: %v (exact %v)", v, got, exact)
		}
	}
	// 1.1 × 1.3 in 512 bits has 106 significant bits: s' is the next
	// 64-bit dyadic above, so s ≤ s' < s·(1 + 2⁻⁶³).
	v := new(big.Float).SetPrec(512).Mul(new(big.Float).SetFloat64(1.1), new(big.Float).SetFloat64(1.3*16384))
	g, exact := mk(v)
	sp := g.ScaleFloat()
	if exact || sp.Cmp(v) <= 0 {
		t.Fatalf("s' = %v for s = %v (exact %v)", sp, v, exact)
	}
	gap := new(big.Float).SetPrec(512).Sub(sp, v)
	bound := new(big.Float).SetPrec(512).SetMantExp(v, -63)
	if gap.Cmp(bound) >= 0 {
		t.Errorf("s' − s = %v ≥ 2⁻⁶³·s", gap)
	}
	for _, bad := range []float64{0, -1, math.Ldexp(1, 32)} {
		if _, _, err := RoundedNormalAtLeast(new(big.Float).SetFloat64(bad)); err == nil {
			t.Errorf("scale %v accepted", bad)
		}
	}
}

// BenchmarkRoundedNormal draws round(sX) at s ≈ 2¹⁴·√2 by Fill, one sample
// per op, beside BenchmarkRoundedNormalKarney (the same law by Karney's
// Algorithm N), BenchmarkGaussian (the discrete Gaussian at σ = 36045, the
// former secure noise) and BenchmarkNormFloat64 (the float path's
// sampler, float32(s·N)).
func BenchmarkRoundedNormal(b *testing.B) {
	g, err := NewRoundedNormal(0xb504f333f9de6485, 49)
	if err != nil {
		b.Fatal(err)
	}
	r := randstream.FromSeed(5).Stream("bench", 0)
	dst := make([]int64, 4096)
	cpu0 := processCPUSeconds()
	b.ResetTimer()
	for i := 0; i < b.N; i += len(dst) {
		g.Fill(r, dst[:min(len(dst), b.N-i)])
	}
	if cpu := processCPUSeconds() - cpu0; cpu > 0 {
		b.ReportMetric(1e9*cpu/float64(b.N), "cpu-ns/op")
	}
}

func BenchmarkRoundedNormalKarney(b *testing.B) {
	g, err := NewRoundedNormal(0xb504f333f9de6485, 49)
	if err != nil {
		b.Fatal(err)
	}
	s, sc := &bitSrc{r: randstream.FromSeed(5).Stream("bench", 0)}, newNormalScratch()
	cpu0 := processCPUSeconds()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		g.sampleKarney(s, sc)
	}
	if cpu := processCPUSeconds() - cpu0; cpu > 0 {
		b.ReportMetric(1e9*cpu/float64(b.N), "cpu-ns/op")
	}
}

func BenchmarkNormFloat64(b *testing.B) {
	r := randstream.FromSeed(5).Stream("bench", 0)
	dst := make([]float32, 4096)
	const s = 23170.475
	cpu0 := processCPUSeconds()
	b.ResetTimer()
	for i := 0; i < b.N; i += len(dst) {
		d := dst[:min(len(dst), b.N-i)]
		for j := range d {
			d[j] += float32(s * r.NormFloat64())
		}
	}
	if cpu := processCPUSeconds() - cpu0; cpu > 0 {
		b.ReportMetric(1e9*cpu/float64(b.N), "cpu-ns/op")
	}
}
