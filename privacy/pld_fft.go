package privacy

import (
	"fmt"
	"math"
	"math/bits"
)

// A radix-2 FFT whose round-off has a proven bound: every PLD convolution
// larger than directConvMax goes through certConvolve, on the fast path
// (convolve, pld_compose.go: ℓ1 charge √m·E to δ) and on the tilted path
// (pld_tilt.go: per-entry bound E). No other FFT produces a reported ε.
//
// Source: Higham 2002, "Accuracy and Stability of Numerical Algorithms",
// 2nd ed., §24.1, Theorem 24.2: the unnormalized DFT y = F x of length
// n = 2^L computed by the radix-2 Cooley–Tukey algorithm with computed
// twiddle factors ŵ satisfying |ŵ − ω| ≤ μ satisfies
//
//	‖ŷ − y‖₂ ≤ L·η/(1 − L·η)·‖y‖₂,  η = μ + γ₄(√2 + μ),  γ₄ = 4u/(1 − 4u),
//
// valid when L·η < 1 (checked). The same holds for the conjugate transform
// (conjugate twiddles). fftTwiddleErr is the μ assumed for the twiddles
// computed here (math.Sincos of an argument in [0, π/4], reflected by the
// exact symmetries of the unit circle); TestFFTTwiddleAccuracy checks every
// twiddle of n = 2^14 against a 200-bit series.
//
// Only radix-2 butterflies are used (no radix-3/4/5 passes, whose error
// Theorem 24.2 does not cover): lengths are padded to a power of two.

// fftTwiddleErr is μ of Theorem 24.2 for fftTwiddles (an assumption on
// math.Sincos, ≈ 2 ulps of the argument reduction and evaluation on
// [0, π/4], with a factor 2.5 to spare).
const fftTwiddleErr = 5 * unitRoundoff

// fftTwiddles returns ω^j = e^{−2πij/n} for j < n/2 (n a power of two ≥ 2).
// Only arguments in [0, π/4] are evaluated; the rest follow from
// e^{−iθ} symmetries that swap or negate the real and imaginary parts
// (exact in floating point).
func fftTwiddles(n int) []complex128 {
	w := make([]complex128, n/2)
	if n < 8 {
		for j := range w {
			s, c := math.Sincos(2 * math.Pi * float64(j) / float64(n))
			w[j] = complex(c, -s)
		}
		return w
	}
	o := n / 8
	for j := 0; j <= o; j++ {
		// θ = 2πj/n = (π/4)·(j/o) ∈ [0, π/4].
		s, c := math.Sincos(math.Pi / 4 * float64(j) / float64(o))
		w[j] = complex(c, -s)
		if j < o {
			w[2*o-j] = complex(s, -c) // θ' = π/2 − θ
		}
	}
	// θ ∈ (π/2, π): e^{−i(π/2+φ)} = (−sin φ) − i cos φ... from θ−π/2.
	for j := 2*o + 1; j < 4*o; j++ {
		v := w[j-2*o] // e^{−iφ}, φ = θ − π/2: cos φ, −sin φ
		w[j] = complex(imag(v), -real(v))
	}
	return w
}

// fftRadix2 transforms x in place: the unnormalized DFT (inverse = false:
// y_k = Σ x_j ω^{jk}) or its conjugate (inverse = true, no 1/n), by the
// iterative radix-2 decimation-in-time Cooley–Tukey algorithm (bit
// reversal, then L butterfly stages ŷ = a ± ŵ·b), the algorithm of
// Higham's Theorem 24.2. len(x) must be a power of two and w =
// fftTwiddles(len(x)).
//
// Two stages (half-sizes h and 2h) are done per pass over x: the same
// butterflies on the same values as one stage at a time, in an order that
// reads memory half as often. The conjugate transform is conj∘F∘conj,
// which rounds exactly like the algorithm with conjugate twiddles
// (fl(x − (−y)) = fl(x + y)). TestFFTStagedMatchesTextbook checks both
// claims bit for bit against the stage-by-stage loop.
func fftRadix2(x []complex128, w []complex128, inverse bool) {
	n := len(x)
	if n <= 1 {
		return
	}
	if inverse {
		conjAll(x)
		defer conjAll(x)
	}
	shift := 64 - uint(bits.Len(uint(n))-1)
	for i := range x {
		j := int(bits.Reverse64(uint64(i)) >> shift)
		if j > i {
			x[i], x[j] = x[j], x[i]
		}
	}
	half := 1
	if bits.Len(uint(n))%2 == 0 { // odd number of stages: one alone first
		for j := 0; j < n; j += 2 {
			b := w[0] * x[j+1]
			a := x[j]
			x[j] = a + b
			x[j+1] = a - b
		}
		half = 2
	}
	for ; half < n; half <<= 2 {
		h := half
		s1, s2 := n/(2*h), n/(4*h) // twiddle strides of the two stages
		for start := 0; start < n; start += 4 * h {
			x0 := x[start : start+h]
			x1 := x[start+h : start+2*h]
			x2 := x[start+2*h : start+3*h]
			x3 := x[start+3*h : start+4*h]
			for k := range x0 {
				t := w[k*s1]
				b := t * x1[k]
				a := x0[k]
				y0, y1 := a+b, a-b
				b = t * x3[k]
				a = x2[k]
				y2, y3 := a+b, a-b
				b = w[k*s2] * y2
				x0[k], x2[k] = y0+b, y0-b
				b = w[(k+h)*s2] * y3
				x1[k], x3[k] = y1+b, y1-b
			}
		}
	}
}

// conjAll conjugates x in place (exact).
func conjAll(x []complex128) {
	for i, v := range x {
		x[i] = complex(real(v), -imag(v))
	}
}

// fftRel returns ρ = L·η/(1 − L·η) of Theorem 24.2 for length n = 2^L,
// or an error when L·η ≥ 1 (never for n ≤ 2^60).
func fftRel(n int) (float64, error) {
	l := float64(bits.Len(uint(n)) - 1)
	g4 := 4 * unitRoundoff / (1 - 4*unitRoundoff)
	eta := fftTwiddleErr + g4*(math.Sqrt2+fftTwiddleErr)
	if !(l*eta < 1) {
		return 0, fmt.Errorf("pld: FFT length %d outside Theorem 24.2's range (L·η ≥ 1)", n)
	}
	return l * eta / (1 - l*eta), nil
}

// pow2Len returns the smallest power of two ≥ n.
func pow2Len(n int) int {
	if n <= 1 {
		return 1
	}
	return 1 << bits.Len(uint(n-1))
}

// certConvolve returns ĉ ≈ a∗b (length len(a)+len(b)−1, entries unclipped)
// and a bound E on the ℓ2 norm of its error, ‖ĉ − a∗b‖₂ ≤ E (so
// |ĉ_k − (a∗b)_k| ≤ E for every k), for non-negative finite a and b. It
// packs z = a + i·s·b (s a power of two balancing ‖a‖₂ and s‖b‖₂, exact
// scaling), computes Z = F z, separates A_k = (Z_k + conj Z_{−k})/2 and
// sB_k = (Z_k − conj Z_{−k})/(2i), multiplies and transforms back
// (c = Re F*(A·sB)/(n·s)).
//
// Error bound (every step with its ℓ2 bound; ‖·‖_∞ ≤ ‖·‖₂): with ρ of
// fftRel and ‖Z‖₂ = √n‖z‖₂ (Parseval), ‖Ẑ − Z‖₂ ≤ e = ρ√n‖z‖₂. The
// separation splits the error D = Ẑ − Z into D_A and D_B with
// ‖D_A‖₂² + ‖D_B‖₂² = ‖D‖₂² (parallelogram law), and adds one rounding
// per entry, so ‖Â − A‖₂ ≤ eA = (1+u)‖D_A‖₂ + u√n‖a‖₂ and likewise eB
// (with s‖b‖₂); both are ≤ ē = (1+u)e + u√n·max(‖a‖₂, s‖b‖₂). With
// ‖A‖_∞ ≤ ‖a‖₁ and ‖sB‖_∞ ≤ s‖b‖₁ (non-negative inputs) the products
// of the computed factors differ from A·sB by at most
// dL = eA·s‖b‖₁ + ‖a‖₁·eB + eA·eB
// ≤ (1+u)e·hypot(s‖b‖₁, ‖a‖₁) + u√n(‖a‖₂s‖b‖₁ + ‖a‖₁s‖b‖₂) + ē²
// (Cauchy–Schwarz on the first two terms). With
// ‖A·sB‖₂ ≤ P₂ = min(√n‖a‖₂·s‖b‖₁, ‖a‖₁·s√n‖b‖₂), the computed products
// (complex multiplication: relative √2γ₂, Higham Lemma 3.5) differ from
// A·sB by dP = dL(1+√2γ₂) + √2γ₂P₂; the inverse transform adds
// ρ√n(P₂ + dP); the division by n·s (a power of two) is exact, and taking
// real parts and the first m entries are contractions. So
// ‖ĉ − c‖₂ ≤ E = √n(ρ(P₂+dP) + dP)/(n·s) + √m·2⁻¹⁰⁷⁴ (the last term
// for a result that underflows when scaled), inflated by 1e-8 relative for
// the rounding of this formula and of the norms (relative γ_n ≤ 5e-10 for
// n ≤ 2²²). Underflow inside the transforms: the norms are checked to lie
// in [2⁻³⁰⁰, 2³⁰⁰] (an error otherwise), so ‖z‖₂ ≥ 2⁻³⁰⁰ and each of the
// ≤ 10·n·log₂n operations errs by ≤ 2⁻¹⁰⁷⁴ absolute, far below the 1e-8
// share of E ≥ ρ√n·P₂/(n·s) ≥ 2⁻⁷⁰⁰/(n·s) relative to the scaled data.
func certConvolve(a, b []float64) ([]float64, float64, error) {
	m := len(a) + len(b) - 1
	n := pow2Len(m)
	rho, err := fftRel(n)
	if err != nil {
		return nil, 0, err
	}
	a1, a2 := norms(a)
	b1, b2 := norms(b)
	if a2 == 0 || b2 == 0 {
		return make([]float64, m), 0, nil
	}
	const normMin, normMax = 0x1p-300, 0x1p300
	if !(a2 >= normMin && a2 <= normMax && b2 >= normMin && b2 <= normMax && a1 <= normMax && b1 <= normMax) {
		return nil, 0, fmt.Errorf("pld: convolution norms ‖a‖₂ = %g, ‖b‖₂ = %g outside [2⁻³⁰⁰, 2³⁰⁰], where the certified FFT bound holds", a2, b2)
	}
	if a2 < b2 { // so that s ≥ 1 below (convolution is commutative)
		a, b = b, a
		a1, a2, b1, b2 = b1, b2, a1, a2
	}
	// s = 2^k ≥ 1 with s‖b‖₂ ≈ ‖a‖₂: s·b_i is exact (no overflow, since
	// s·b_i < 2‖a‖₂, and scaling up never rounds).
	_, ea := math.Frexp(a2)
	_, eb := math.Frexp(b2)
	s := math.Ldexp(1, ea-eb)
	z := make([]complex128, n)
	for i, v := range a {
		z[i] = complex(v, 0)
	}
	for i, v := range b {
		z[i] = complex(real(z[i]), v*s)
	}
	w := fftTwiddles(n)
	fftRadix2(z, w, false)
	// Separate and multiply in place, k and n−k together (both read z_k
	// and z_{n−k}).
	for k := 0; k <= n/2; k++ {
		kc := (n - k) & (n - 1)
		zk, zn := z[k], z[kc]
		z[k] = separateMul(zk, zn)
		if kc != k {
			z[kc] = separateMul(zn, zk)
		}
	}
	fftRadix2(z, w, true)
	c := make([]float64, m)
	scale := 1 / (float64(n) * s)
	for i := range c {
		c[i] = real(z[i]) * scale
	}
	// The bound.
	u := unitRoundoff
	sn := math.Sqrt(float64(n))
	z2 := math.Hypot(a2, s*b2)
	e := rho * sn * z2
	eBar := (1+u)*e + u*sn*math.Max(a2, s*b2)
	g2 := math.Sqrt2 * 2 * u / (1 - 2*u)
	p2 := math.Min(sn*a2*s*b1, a1*s*sn*b2)
	dL := (1+u)*e*math.Hypot(s*b1, a1) + u*sn*(a2*s*b1+a1*s*b2) + eBar*eBar
	dP := dL*(1+g2) + g2*p2
	bound := (sn*(rho*(p2+dP)+dP)*scale + math.Sqrt(float64(m))*math.SmallestNonzeroFloat64) * (1 + 1e-8)
	return c, bound, nil
}

// separateMul returns A_k·sB_k of certConvolve from Z_k = zk and
// Z_{−k} = zc: A_k = (Z_k + conj Z_{−k})/2, sB_k = (Z_k − conj Z_{−k})/(2i).
func separateMul(zk, zc complex128) complex128 {
	zc = complex(real(zc), -imag(zc))
	ak := (zk + zc) * 0.5
	d := (zk - zc) * 0.5
	return ak * complex(imag(d), -real(d)) // d/i
}
