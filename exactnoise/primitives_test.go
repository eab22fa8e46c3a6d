package exactnoise

import (
	"math"
	"testing"

	"github.com/privtrain/privtrain/randstream"
)

// The fast code is checked against the big-integer reference (ref_test.go)
// bit for bit, but the reference follows the same algorithms; the laws
// themselves are checked here against closed forms.

// factorialChain: P(K = k) = 1/(k−1)! − 1/k! for k ≥ 2 (χ² over k = 2..8
// and K ≥ 9 pooled, which is reached only through q = 0 and the trials
// past 8; K ≥ 9 has probability 1/8! ≈ 2.5e-5, so it is also forced below).
func TestFactorialChainLaw(t *testing.T) {
	s := &bitSrc{r: randstream.FromSeed(11).Stream("chain", 0)}
	const n = 400000
	counts := make([]int, 10)
	for i := 0; i < n; i++ {
		k := s.factorialChain()
		if k < 2 {
			t.Fatalf("K = %d", k)
		}
		counts[min(k, 9)]++
	}
	fact := func(k int) float64 { return math.Gamma(float64(k) + 1) }
	var chi float64
	for k := 2; k <= 8; k++ {
		p := 1/fact(k-1) - 1/fact(k)
		e := p * n
		chi += (float64(counts[k]) - e) * (float64(counts[k]) - e) / e
	}
	// 7 cells (K ≥ 9 has expectation 10, checked separately): χ² > 40 has
	// probability < 1e-6.
	if !(chi <= 40) {
		t.Errorf("factorialChain: χ² = %.1f, counts %v", chi, counts[2:])
	}
	zWithin(t, "K ≥ 9", counts[9], n, 1/fact(8))
}

// bern(n, d) has probability n/d, including terminating binary
// expansions, tiny and near-one ratios, and d near 2⁶⁴ (where 2r carries).
func TestBernLaw(t *testing.T) {
	s := &bitSrc{r: randstream.FromSeed(12).Stream("bern", 0)}
	const n = 100000
	for _, c := range []struct{ num, den uint64 }{
		{1, 2}, {3, 4}, {1, 3}, {2, 3}, {5, 1 << 10}, {999, 1000}, {1, 1000},
		{1 << 63, 1<<64 - 1}, {1<<64 - 2, 1<<64 - 1}, {3 << 61, 1<<63 + 1},
	} {
		k := 0
		for i := 0; i < n; i++ {
			if s.bern(c.num, c.den) {
				k++
			}
		}
		zWithin(t, "bern", k, n, float64(c.num)/float64(c.den))
	}
}

// below(t) is uniform: χ² over the t values (t = 7, 1000), and over 16
// equal classes of 40320 = 8! (the factorial chain's range).
func TestBelowUniform(t *testing.T) {
	s := &bitSrc{r: randstream.FromSeed(13).Stream("below", 0)}
	for _, c := range []struct{ t, cells uint64 }{{7, 7}, {1000, 1000}, {40320, 16}, {1<<40 + 7, 16}} {
		const n = 200000
		lem := newLemire(c.t)
		counts := make([]float64, c.cells)
		for i := 0; i < n; i++ {
			v := s.below(lem)
			if v >= c.t {
				t.Fatalf("below(%d) = %d", c.t, v)
			}
			counts[v*c.cells/c.t]++ // equal classes: cells divides t, or t ≫ cells
		}
		var chi float64
		e := float64(n) / float64(c.cells)
		for _, o := range counts {
			chi += (o - e) * (o - e) / e
		}
		// χ² with c−1 degrees of freedom: mean c−1, sd √(2(c−1)); 6 sd.
		if df := float64(c.cells - 1); !(chi <= df+6*math.Sqrt(2*df)+10) {
			t.Errorf("below(%d): χ² = %.1f over %d cells", c.t, chi, c.cells)
		}
	}
}

// At the secure release's scale (σ = 36045) the sampler's law matches
// N_Z(0, σ²) in 24 classes of width σ/4 over ±3σ and the two tails; the tail
// classes include proposals whose acceptance test leaves the 128-bit fast
// path (|y| ≳ 4.3σ).
func TestDiscreteGaussianPMFLargeSigma(t *testing.T) {
	const sd = 36045
	g, err := NewGaussian(sd * sd)
	if err != nil {
		t.Fatal(err)
	}
	const n = 200000
	buf := make([]int64, n)
	g.Fill(randstream.FromSeed(14).Stream("gauss-large", 0), buf)
	// Class c covers [c·w, (c+1)·w) for c = −12..11, w = σ/4, plus both tails.
	const w = sd / 4
	class := func(z int64) int {
		c := int(math.Floor(float64(z) / w))
		return min(max(c, -13), 12) + 13
	}
	counts := make([]float64, 26)
	for _, z := range buf {
		counts[class(z)]++
	}
	// Class probabilities by summing the pmf (Poisson summation makes the
	// normalization √(2π)σ to within e^{−2π²σ²}).
	probs := make([]float64, 26)
	norm := math.Sqrt(2*math.Pi) * sd
	for z := int64(-20 * sd); z <= 20*sd; z++ {
		probs[class(z)] += math.Exp(-float64(z)*float64(z)/(2*sd*sd)) / norm
	}
	var chi float64
	for c := range counts {
		e := probs[c] * n
		chi += (counts[c] - e) * (counts[c] - e) / e
	}
	// 25 degrees of freedom: χ² > 80 has probability < 1e-6.
	if !(chi <= 80) {
		t.Errorf("σ = %d: χ² = %.1f over %d classes", sd, chi, len(counts))
	}
}
