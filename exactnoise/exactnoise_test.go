package exactnoise

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/privtrain/privtrain/randstream"
)

// zWithin fails when the count of an event deviates from its binomial mean
// by more than 5 standard deviations.
func zWithin(t *testing.T, name string, count, n int, p float64) {
	t.Helper()
	mean, sd := float64(n)*p, math.Sqrt(float64(n)*p*(1-p))
	if math.Abs(float64(count)-mean) > 5*sd+1e-9 {
		t.Errorf("%s: %d of %d, want %.1f ± %.1f (5σ)", name, count, n, mean, 5*sd)
	}
}

func TestBernoulliExp(t *testing.T) {
	r := randstream.FromSeed(1).Stream("bern", 0)
	const n = 100000
	for _, c := range []struct{ num, den uint64 }{{0, 1}, {1, 3}, {1, 1}, {5, 2}, {7, 3}, {3, 1000}} {
		k := 0
		for i := 0; i < n; i++ {
			if BernoulliExp(r, c.num, c.den) {
				k++
			}
		}
		zWithin(t, "BernoulliExp", k, n, math.Exp(-float64(c.num)/float64(c.den)))
	}
	// The big-integer path agrees with the closed form too.
	k := 0
	num, den := new(big.Int).Lsh(big.NewInt(3), 70), new(big.Int).Lsh(big.NewInt(4), 70) // 3/4
	for i := 0; i < n; i++ {
		if (&bitSrc{r: r}).bernExpBig(num, den) {
			k++
		}
	}
	zWithin(t, "bernoulliExpBig", k, n, math.Exp(-0.75))
}

// chiSquarePMF compares sample counts with a pmf over [-cut, cut] (tails
// pooled) by a χ² statistic; with ≤ 60 cells, χ² > 130 has probability
// < 1e-6 under the null.
func chiSquarePMF(t *testing.T, name string, sample func() int64, pmf func(int64) float64, cut int64, n int) {
	t.Helper()
	counts := map[int64]int{}
	for i := 0; i < n; i++ {
		z := sample()
		if z > cut {
			z = cut + 1
		} else if z < -cut {
			z = -cut - 1
		}
		counts[z]++
	}
	var chi, inside float64
	for z := -cut; z <= cut; z++ {
		p := pmf(z)
		inside += p
		e := p * float64(n)
		chi += (float64(counts[z]) - e) * (float64(counts[z]) - e) / e
	}
	tail := (1 - inside) * float64(n)
	obs := float64(counts[cut+1] + counts[-cut-1])
	if tail > 5 {
		chi += (obs - tail) * (obs - tail) / tail
	}
	if chi > 130 {
		t.Errorf("%s: χ² = %.1f over %d cells", name, chi, 2*cut+2)
	}
}

func TestDiscreteLaplacePMF(t *testing.T) {
	r := randstream.FromSeed(2).Stream("lap", 0)
	for _, b := range []float64{1, 2.5, 0.75} {
		l, err := NewLaplace(b)
		if err != nil {
			t.Fatal(err)
		}
		if l.Scale() != b {
			t.Fatalf("scale %v written as %d/%d", b, l.T, l.S)
		}
		rr := math.Exp(-1 / b)
		pmf := func(z int64) float64 { return (1 - rr) / (1 + rr) * math.Pow(rr, math.Abs(float64(z))) }
		chiSquarePMF(t, "laplace", func() int64 { return l.Sample(r) }, pmf, 12, 200000)
	}
	for _, bad := range []float64{0, -1, math.Inf(1), math.NaN()} {
		if _, err := NewLaplace(bad); err == nil {
			t.Errorf("NewLaplace(%v) accepted", bad)
		}
	}
}

func TestDiscreteGaussianPMF(t *testing.T) {
	r := randstream.FromSeed(3).Stream("gauss", 0)
	for _, s2 := range []uint64{1, 2, 7, 30} {
		g, err := NewGaussian(s2)
		if err != nil {
			t.Fatal(err)
		}
		var norm float64
		for z := -200; z <= 200; z++ {
			norm += math.Exp(-float64(z*z) / (2 * float64(s2)))
		}
		pmf := func(z int64) float64 { return math.Exp(-float64(z*z)/(2*float64(s2))) / norm }
		chiSquarePMF(t, "gaussian", func() int64 { return g.Sample(r) }, pmf, int64(3*math.Sqrt(float64(s2)))+1, 200000)
		// Fill draws the same law (one bit buffer across samples).
		buf := make([]int64, 200000)
		g.Fill(r, buf)
		k := 0
		chiSquarePMF(t, "gaussian-fill", func() int64 { k++; return buf[k-1] }, pmf, int64(3*math.Sqrt(float64(s2)))+1, len(buf))
	}
}

// For large σ² (up to 2⁶², all on the 64/128-bit path) the variance of
// N_Z(0, σ²) is σ² up to e^{−Ω(σ²)} (CKS20 Corollary 9), and the mean 0;
// 4·10⁴ samples test both to a few percent.
func TestDiscreteGaussianMoments(t *testing.T) {
	r := randstream.FromSeed(4).Stream("moments", 0)
	for _, s2 := range []uint64{1 << 20, 1 << 29, 1 << 40, 1 << 62} {
		g, err := NewGaussian(s2)
		if err != nil {
			t.Fatal(err)
		}
		const n = 40000
		var s, ss float64
		for i := 0; i < n; i++ {
			z := float64(g.Sample(r))
			s += z
			ss += z * z
		}
		sd := math.Sqrt(float64(s2))
		mean, vr := s/n, ss/n
		if math.Abs(mean) > 5*sd/math.Sqrt(n) || math.Abs(vr/float64(s2)-1) > 5*math.Sqrt(2.0/n) {
			t.Errorf("σ² = %d: mean %v, variance %v", s2, mean, vr)
		}
	}
	if _, err := NewGaussian(0); err == nil {
		t.Error("NewGaussian(0) accepted")
	}
}

func TestIsqrt(t *testing.T) {
	for _, x := range []uint64{0, 1, 2, 3, 4, 15, 16, 17, 1<<62 - 1, 1 << 62, 999999999999} {
		s := isqrt(x)
		if s*s > x || (s+1)*(s+1) <= x {
			t.Errorf("isqrt(%d) = %d", x, s)
		}
	}
}

// BenchmarkGaussian draws N_Z(0, σ²) with σ = 36045 (the grid scale of
// aggregate's secure release, σ_Z ≈ 2¹⁴–2¹⁵) by Fill, one sample per op;
// cpu-ns/op is process CPU time (meaningful on a loaded machine).
func BenchmarkGaussian(b *testing.B) {
	benchGaussian(b, 36045*36045, func(g *Gaussian, r *rand.Rand, dst []int64) { g.Fill(r, dst) })
}

// BenchmarkGaussianRef is BenchmarkGaussian for the big-integer reference
// (ref_test.go), which returns the same samples.
func BenchmarkGaussianRef(b *testing.B) {
	benchGaussian(b, 36045*36045, func(g *Gaussian, r *rand.Rand, dst []int64) {
		f := ref{&bitSrc{r: r}}
		for i := range dst {
			dst[i] = f.gaussian(g.Sigma2)
		}
	})
}

// BenchmarkGaussianHugeSigma is BenchmarkGaussian for σ² = 2⁶⁰ (still on
// the 64/128-bit path).
func BenchmarkGaussianHugeSigma(b *testing.B) {
	benchGaussian(b, 1<<60, func(g *Gaussian, r *rand.Rand, dst []int64) { g.Fill(r, dst) })
}

func benchGaussian(b *testing.B, s2 uint64, fill func(*Gaussian, *rand.Rand, []int64)) {
	r := randstream.FromSeed(5).Stream("bench", 0)
	g, err := NewGaussian(s2)
	if err != nil {
		b.Fatal(err)
	}
	dst := make([]int64, 1024)
	cpu0 := processCPUSeconds()
	b.ResetTimer()
	for i := 0; i < b.N; i += len(dst) {
		fill(g, r, dst[:min(len(dst), b.N-i)])
	}
	if cpu := processCPUSeconds() - cpu0; cpu > 0 {
		b.ReportMetric(1e9*cpu/float64(b.N), "cpu-ns/op")
	}
}

// BenchmarkBern and BenchmarkBernBig: one Bernoulli(n/d) trial, 64-digit
// words (bern) against digit by digit in math/big (bernBig), same bits.
func BenchmarkBern(b *testing.B) {
	s := &bitSrc{r: randstream.FromSeed(6).Stream("bench", 0)}
	k := 0
	for i := 0; i < b.N; i++ {
		if s.bern(uint64(i)%1000003, 1000003) {
			k++
		}
	}
	_ = k
}

func BenchmarkBernBig(b *testing.B) {
	s := &bitSrc{r: randstream.FromSeed(6).Stream("bench", 0)}
	d := big.NewInt(1000003)
	n := new(big.Int)
	k := 0
	for i := 0; i < b.N; i++ {
		if s.bernBig(n.SetInt64(int64(i%1000003)), d) {
			k++
		}
	}
	_ = k
}

// BenchmarkAccept and BenchmarkAcceptBig: the Gaussian acceptance test at
// |y| ≈ σ for σ = 36045, 128-bit fast path against math/big.
func BenchmarkAccept(b *testing.B) {
	benchAccept(b, (*Gaussian).accept)
}

func BenchmarkAcceptBig(b *testing.B) {
	benchAccept(b, (*Gaussian).acceptBig)
}

func benchAccept(b *testing.B, f func(*Gaussian, *bitSrc, uint64, uint64) bool) {
	g, _ := NewGaussian(36045 * 36045)
	s := &bitSrc{r: randstream.FromSeed(7).Stream("bench", 0)}
	k := 0
	for i := 0; i < b.N; i++ {
		x := 36045 + uint64(i%1024)
		if f(g, s, x, x/g.t) {
			k++
		}
	}
	_ = k
}

// BenchmarkLaplace and BenchmarkLaplaceRef: the PTR test's discrete Laplace
// (scale K·b = 1024), fast code against the big-integer reference (same
// samples).
func BenchmarkLaplace(b *testing.B) {
	l, _ := NewLaplace(1024)
	s := &bitSrc{r: randstream.FromSeed(8).Stream("bench", 0)}
	lem := newLemire(l.T)
	var sum int64
	for i := 0; i < b.N; i++ {
		sum += l.sample(s, lem)
	}
	_ = sum
}

func BenchmarkLaplaceRef(b *testing.B) {
	l, _ := NewLaplace(1024)
	f := ref{&bitSrc{r: randstream.FromSeed(8).Stream("bench", 0)}}
	t, sc := new(big.Int).SetUint64(l.T), new(big.Int).SetUint64(l.S)
	var sum int64
	for i := 0; i < b.N; i++ {
		sum += f.laplace(t, sc).Int64()
	}
	_ = sum
}
