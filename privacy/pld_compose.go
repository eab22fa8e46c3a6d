package privacy

import "math"

// unitRoundoff is the unit roundoff u = 2^−53 of float64.
const unitRoundoff = 1.0 / (1 << 53)

// directConvMax is the largest len(a)·len(b) convolved directly (exact
// products, summation error only) instead of by FFT.
const directConvMax = 1 << 16

// norms returns the ℓ1 and ℓ2 norms of a. The ℓ2 sum is scaled by the
// largest |a_i|, so tiny or huge entries neither underflow nor overflow
// (each norm is then within γ_len relative of the exact one).
func norms(a []float64) (l1, l2 float64) {
	var mx float64
	for _, v := range a {
		l1 += math.Abs(v)
		mx = math.Max(mx, math.Abs(v))
	}
	if mx == 0 || math.IsInf(mx, 0) {
		return l1, mx
	}
	for _, v := range a {
		r := v / mx
		l2 += r * r
	}
	return l1, mx * math.Sqrt(l2)
}

// convolve returns a∗b (length len(a)+len(b)−1) with negative round-off
// clipped to 0, and a bound on the ℓ1 error: the round-off the fast path
// charges to δ (s of pld.go) for every convolution of an ordinary query.
//
// Small products are convolved directly (exact products, summation error
// only: each c_k is a sum of ≤ min(len) products, Higham 2002 Lemma 3.1,
// so ‖ĉ − c‖₁ ≤ γ_m‖a‖₁‖b‖₁, plus 2⁻¹⁰⁷⁴ per product that underflows).
// Larger ones use certConvolve (pld_fft.go): the radix-2 Cooley–Tukey FFT
// of Higham 2002, "Accuracy and Stability of Numerical Algorithms",
// Thm 24.2, at the next power of two n = 2^L, with twiddle error μ = 5u
// (fftTwiddleErr), η = μ + γ₄(√2 + μ) per stage and ρ = Lη/(1 − Lη); its
// bound E holds for ‖ĉ − c‖₂ over the m = len(a)+len(b)−1 entries, so
// ‖ĉ − c‖₁ ≤ √m·E (Cauchy–Schwarz), inflated by 1e-9 relative for the
// rounding of √m·E. Clipping a negative entry to 0 moves it towards the
// true, non-negative value, so the bound still holds. Validity, checked at
// run time by certConvolve: Lη < 1 (fftRel; every n ≤ 2^60) and ‖a‖₂,
// ‖b‖₂ ∈ [2⁻³⁰⁰, 2³⁰⁰], ‖a‖₁, ‖b‖₁ ≤ 2³⁰⁰ (no PLD gets outside: its masses
// sum to about 1 over at most a few million points). Outside them the
// bound is +Inf, so δ becomes +Inf — never a bound below the truth. No
// other FFT (gonum's mixed-radix one, whose radix-3/4/5 passes Thm 24.2
// does not cover, was used here before) enters a reported ε.
func convolve(a, b []float64) ([]float64, float64) {
	n := len(a) + len(b) - 1
	if len(a)*len(b) <= directConvMax {
		c := directConvolve(a, b)
		a1, _ := norms(a)
		b1, _ := norms(b)
		m := math.Min(float64(len(a)), float64(len(b))) + 1
		// Plus 2⁻¹⁰⁷⁴ per product for products that underflow.
		return c, 1.01*m*unitRoundoff*a1*b1 + float64(len(a)*len(b))*math.SmallestNonzeroFloat64
	}
	c, e2, err := certConvolve(a, b)
	if err != nil {
		// Outside Thm 24.2's checked conditions: no finite bound.
		return make([]float64, n), math.Inf(1)
	}
	for i, v := range c {
		if v < 0 {
			c[i] = 0
		}
	}
	return c, math.Sqrt(float64(n)) * e2 * (1 + 1e-9)
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
