package privacy

import (
	"math"

	"gonum.org/v1/gonum/dsp/fourier"
)

// unitRoundoff is the unit roundoff u = 2^−53 of float64.
const unitRoundoff = 1.0 / (1 << 53)

// directConvMax is the largest len(a)·len(b) convolved directly (exact
// products, summation error only) instead of by FFT.
const directConvMax = 1 << 16

// norms returns the ℓ1 and ℓ2 norms of a.
func norms(a []float64) (l1, l2 float64) {
	for _, v := range a {
		l1 += math.Abs(v)
		l2 += v * v
	}
	return l1, math.Sqrt(l2)
}

// fftErrorBound is an a-priori bound on ‖ĉ − a∗b‖₁ for the FFT convolution
// of length n. With γ = 8u per radix stage (Higham 2002, "Accuracy and
// Stability of Numerical Algorithms", §24.1, Theorem 24.2: the computed FFT
// of x has ℓ2 error ≤ γ·log2(n)·‖x‖₂ relative to the unitary transform),
// the errors of the two forward transforms, of the products (each bounded
// through ‖â‖_∞ ≤ ‖a‖₁/√n) and of the inverse transform add up to
// ‖ĉ − c‖₂ ≤ 3γ·log2(n)·max(‖a‖₂‖b‖₁, ‖a‖₁‖b‖₂), and ‖·‖₁ ≤ √n‖·‖₂; the
// final scaling adds 2u‖a‖₁‖b‖₁.
func fftErrorBound(n int, a, b []float64) float64 {
	a1, a2 := norms(a)
	b1, b2 := norms(b)
	lg := math.Ceil(math.Log2(float64(n)))
	return 3*8*unitRoundoff*lg*math.Sqrt(float64(n))*math.Max(a2*b1, a1*b2) + 2*unitRoundoff*a1*b1
}

// fastLen returns the smallest 2^i·3^j·5^k ≥ n (lengths gonum's FFT handles
// with radix 2, 3, 4 and 5 passes).
func fastLen(n int) int {
	if n <= 1 {
		return 1
	}
	best := math.MaxInt
	for p5 := 1; p5 < 2*n; p5 *= 5 {
		for p3 := p5; p3 < 2*n; p3 *= 3 {
			v := p3
			for v < n {
				v *= 2
			}
			if v < best && fftpackFactors(v) <= fftpackMaxFactors {
				best = v
			}
		}
	}
	return best
}

// fftpackMaxFactors is how many prime-power factors gonum's fftpack can
// hold (its work array keeps 13; a length with more panics inside
// Rffti).
const fftpackMaxFactors = 13

// fftpackFactors counts the factors fftpack splits v (a product of 2, 3
// and 5) into: fours first, then a two, threes and fives.
func fftpackFactors(v int) int {
	f, twos := 0, 0
	for v%2 == 0 {
		v /= 2
		twos++
	}
	f += twos/2 + twos%2
	for _, p := range []int{3, 5} {
		for v%p == 0 {
			v /= p
			f++
		}
	}
	return f
}

// convolve returns a∗b (length len(a)+len(b)−1) with negative round-off
// clipped to 0, and a bound on the ℓ1 error.
func convolve(a, b []float64) ([]float64, float64) {
	n := len(a) + len(b) - 1
	if len(a)*len(b) <= directConvMax {
		c := directConvolve(a, b)
		a1, _ := norms(a)
		b1, _ := norms(b)
		// Each c_k is a sum of ≤ min(len) products: γ_m‖a‖₁‖b‖₁ overall.
		m := math.Min(float64(len(a)), float64(len(b))) + 1
		return c, 1.01 * m * unitRoundoff * a1 * b1
	}
	size := fastLen(n)
	fft := fourier.NewFFT(size)
	buf := make([]float64, size)
	copy(buf, a)
	fa := fft.Coefficients(nil, buf)
	var fb []complex128
	if &a[0] == &b[0] && len(a) == len(b) {
		fb = fa
	} else {
		for i := range buf {
			buf[i] = 0
		}
		copy(buf, b)
		fb = fft.Coefficients(nil, buf)
	}
	prod := make([]complex128, len(fa))
	for i := range fa {
		prod[i] = fa[i] * fb[i]
	}
	out := fft.Sequence(buf, prod)
	c := make([]float64, n)
	inv := 1 / float64(size)
	for i := range c {
		if v := out[i] * inv; v > 0 {
			c[i] = v
		}
	}
	return c, fftErrorBound(size, a, b)
}

// composePMF returns the composition (convolution) of two grid measures,
// truncated. upper selects the truncation of the upper estimate (tails to
// +∞ and to the lowest kept point) or of the optimistic one (top tail down
// to the highest kept point, bottom tail dropped). The slack follows (★):
// s = s_a + s_b·|a| + convolution error.
func composePMF(a, b pmf, upper bool) pmf {
	c, cerr := convolve(a.p, b.p)
	fa, fb := a.total()-a.inf, b.total()-b.inf
	out := pmf{
		lo:    a.lo + b.lo,
		p:     c,
		inf:   a.inf*(fb+b.inf) + fa*b.inf,
		slack: a.slack + b.slack*a.total() + cerr,
		trunc: a.trunc + b.trunc,
	}
	out.trunc += out.truncate(upper, pldTailMass+cerr/64, pldTailMass+2*cerr)
	return out
}

// truncate removes a top tail of mass ≤ tauTop and a bottom tail of mass ≤
// tauBottom. Upper estimate: the top tail goes to +∞ (δ grows by at most
// tauTop), the bottom tail is rounded up to the lowest kept point (valid for
// any mass, since f_e is non-decreasing, and it raises δ by at most
// tauBottom). Optimistic estimate: the top tail is rounded down to the
// highest kept point and the bottom tail dropped. After an FFT the
// thresholds include a share of the convolution's error bound, so that the
// round-off floor (≈ u·max per entry) does not keep widening the support;
// any threshold is valid, the choice only trades tightness for size.
// It returns the top tail's mass.
func (m *pmf) truncate(upper bool, tauTop, tauBottom float64) float64 {
	p := m.p
	// Top.
	hi := len(p)
	var s float64
	for hi > 1 && s+p[hi-1] <= tauTop {
		s += p[hi-1]
		hi--
	}
	top := s
	if upper {
		m.inf += s
	} else {
		p[hi-1] += s
	}
	// Bottom.
	lo := 0
	s = 0
	for lo < hi-1 && s+p[lo] <= tauBottom {
		s += p[lo]
		lo++
	}
	if upper {
		p[lo] += s
	}
	if lo > 0 || hi < len(p) {
		m.p = append([]float64(nil), p[lo:hi]...)
	}
	m.lo += lo
	return top
}

// directConvolve is a∗b by direct summation (length len(a)+len(b)−1). With
// non-negative inputs every entry is a sum of non-negative products, so its
// relative round-off is at most γ_m, m = min(len(a), len(b)) (Higham,
// Accuracy and Stability, §3.1), which both convolve and tiltedConvolve use.
func directConvolve(a, b []float64) []float64 {
	c := make([]float64, len(a)+len(b)-1)
	for i, x := range a {
		if x == 0 {
			continue
		}
		for j, y := range b {
			c[i+j] += x * y
		}
	}
	return c
}
