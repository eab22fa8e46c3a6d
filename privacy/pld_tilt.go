package privacy

import (
	"fmt"
	"math"
)

// The tilted PLD path: certified PLD bounds at small δ.
//
// The default (fast) path charges the FFT round-off of every convolution to
// δ through an ℓ1 bound (convolve: √m times certConvolve's proven ℓ2
// bound, Higham Thm 24.2): ≈ u·√n·log n per convolution, far
// below an ordinary δ but above δ ≲ 1e-9 after many steps, where the PLD
// answer became +Inf or fell back to RDP. The accountant then recomposes
// the history on this path (pld_accountant.go decides; both answers are
// certified and the smaller is reported):
//
//   - Exponential tilting. Convolution commutes with tilting: with
//     ã_i = a_i·e^{λ l_i}, (a∗b)~ = ã∗b̃. Each convolution is computed on
//     tilted inputs by certConvolve (radix-2 FFT with the proven per-entry
//     bound of Higham's Theorem 24.2, pld_fft.go), and each entry k is
//     replaced by the un-tilted upper bound (ĉ_k + E)·e^{−λ l_k}: the
//     composed measure dominates the exact convolution of its inputs bin by
//     bin, so (★) of pld.go holds with no slack, and the round-off is part
//     of the measure whose δ(ε) is reported. The error of bin k is
//     ≈ u·log n·e^{K(λ) − λ l_k} (K the cumulant generating function of
//     the composition): relative to the Chernoff bound of the upper tail,
//     so δ(ε) in the tail the tilt looks at is accurate to ≈ 1e-13
//     relative. The same convolution untilted (error ≈ u·log n absolute
//     per entry) bounds the bulk and the lower tail, where e^{K(λ)−λl} is
//     large; each entry takes the smaller of the two upper bounds. λ is chosen from the optimal order α* of the RDP
//     conversion at the queried δ (λ = α* − 1, where the Chernoff bound
//     e^{K(λ)−λε} is tightest, since K(α−1) = (α−1)·D_α(P‖Q)), rounded
//     down to the grid 2^{k/4}. Each entry is also capped by the trivial
//     bound min(‖a‖₁‖b‖_∞, ‖a‖_∞‖b‖₁).
//   - Tails scaled to δ. A discretized mechanism moves its upper tail
//     beyond the point of mass τ_base = δ·tiltTailShare/N (N the steps of
//     the history) to +∞, and every convolution moves a top tail of mass
//     ≤ δ·tiltTailShare to +∞: all of it is in the reported δ (the atom
//     at +∞ is counted exactly), so the truncations cost at most a few
//     tiltTailShare of δ. A bottom tail is rounded up to the lowest kept
//     point (pessimistic for every ε, since f_ε is non-decreasing) while
//     its weight in the tilted measure, after the move, is at most
//     tiltBottomShare of the tilted total: it changes the Chernoff bound
//     at λ by that fraction, so δ(ε) near the queried ε by a comparably
//     small fraction.
//
// Validity: non-negative finite masses; the FFT length within Theorem
// 24.2's range (checked, fftRel); exp and log accurate to 2 ulps (the
// tilt factors' relative error bound κ below assumes it).

const (
	// tiltTailShare is the share of δ each top truncation may move to +∞.
	tiltTailShare = 1e-7
	// tiltBottomShare is the share of the tilted total a bottom
	// truncation may move.
	tiltBottomShare = 1e-9
	// tiltQuantum: λ is rounded down to the grid 2^{k/tiltQuantum}.
	tiltQuantum = 4
)

// pldTilt configures the tilted path of a PLD: the tilt λ > 0 and the
// absolute top-tail threshold.
type pldTilt struct {
	lambda float64
	tauTop float64
}

// tiltFor returns λ = α* − 1 rounded down to the grid 2^{k/tiltQuantum}
// (at least 2^{−8}).
func tiltFor(order float64) float64 {
	lam := order - 1
	if !(lam > 1.0/256) || math.IsInf(lam, 0) {
		return 1.0 / 256
	}
	k := math.Floor(math.Log2(lam) * tiltQuantum)
	return math.Exp2(k / tiltQuantum)
}

// tiltInput returns ã_i = exp(log a_i + λ l_i − m), m = max_i(log a_i +
// λ l_i) over a_i > 0 (so ã ≤ 1), m, and the largest magnitude of the
// terms of the exponents (for the relative error bound).
func tiltInput(a []float64, lo int, h, lam float64) ([]float64, float64, float64) {
	m := math.Inf(-1)
	for i, v := range a {
		if v > 0 {
			m = math.Max(m, math.Log(v)+lam*float64(lo+i)*h)
		}
	}
	out := make([]float64, len(a))
	var xmax float64
	for i, v := range a {
		if v > 0 {
			lv := math.Log(v)
			li := lam * float64(lo+i) * h
			out[i] = math.Exp(lv + li - m)
			xmax = math.Max(xmax, math.Abs(lv)+math.Abs(li))
		}
	}
	return out, m, xmax
}

// smallestNormal is the smallest positive normal float64: every tilted
// input that underflows (or becomes subnormal) is off by less than it.
const smallestNormal = 0x1p-1022

// tiltedConvolution holds what the upper (tiltedConvolve) and the lower
// (tiltedConvolveLower) bound of one convolution share: either the direct
// sum with its relative error g, or the certConvolve products of the
// tilted (ct, with ℓ∞ error bound) and the untilted inputs (c0, bound0),
// the tilt's log scale m = ma + mb and κ, the relative error of a tilt
// factor and of the un-tilt factor.
type tiltedConvolution struct {
	direct []float64
	g      float64

	ct, c0        []float64
	bound, bound0 float64
	m, kappa      float64
}

// convolveTilted computes the shared parts of a convolution of the grid
// measures a (first index la) and b (lb) at interval h tilted by λ:
// direct summation for small products (non-negative terms: each entry
// relative γ_m), else certConvolve of the inputs tilted by λ and of the
// inputs themselves.
func convolveTilted(a, b []float64, la, lb int, h, lam float64) (tiltedConvolution, error) {
	n := len(a) + len(b) - 1
	if len(a)*len(b) <= directConvMax {
		return tiltedConvolution{direct: directConvolve(a, b), g: 1.01 * float64(min(len(a), len(b))+2) * unitRoundoff}, nil
	}
	ta, ma, xa := tiltInput(a, la, h, lam)
	tb, mb, xb := tiltInput(b, lb, h, lam)
	ct, bound, err := certConvolve(ta, tb)
	if err != nil {
		return tiltedConvolution{}, err
	}
	// Inputs that underflowed: each term of an entry is off by < smallestNormal·max.
	_, tai := l1max(ta)
	_, tbi := l1max(tb)
	bound += float64(len(a)+len(b)) * smallestNormal * math.Max(1, math.Max(tai, tbi)) * 2
	// κ: relative error of a tilt factor (log, products and sums inside
	// the exponent: absolute ≤ 4u·(sum of magnitudes); exp: 2u) and of the
	// un-tilt factor.
	kappa := 4 * unitRoundoff * (math.Max(xa, xb) + math.Abs(ma) + math.Abs(mb) + math.Abs(lam)*float64(abs(la+lb)+n)*h + 4)
	// The untilted convolution bounds the bulk and the lower tail, where
	// the tilted one's error e^{K(λ)−λl}·E is large.
	c0, bound0, err := certConvolve(a, b)
	if err != nil {
		return tiltedConvolution{}, err
	}
	return tiltedConvolution{ct: ct, c0: c0, bound: bound, bound0: bound0, m: ma + mb, kappa: kappa}, nil
}

// tiltedConvolve returns a pointwise upper bound on the exact convolution
// of the grid measures a (first index la) and b (lb) at interval h
// (convolveTilted; each entry takes the smaller of the un-tilted tilted
// bound and the untilted one, and of the ℓ1·ℓ∞ cap).
func tiltedConvolve(a, b []float64, la, lb int, h, lam float64) ([]float64, error) {
	t, err := convolveTilted(a, b, la, lb, h, lam)
	if err != nil {
		return nil, err
	}
	if t.direct != nil {
		for i := range t.direct {
			t.direct[i] *= 1 + t.g
		}
		return t.direct, nil
	}
	n := len(a) + len(b) - 1
	a1, ai := l1max(a)
	b1, bi := l1max(b)
	capU := math.Min(a1*bi, ai*b1) * (1 + 4*float64(n)*unitRoundoff)
	c := make([]float64, n)
	for k := range c {
		// c_k = c̃_k·e^{ma + mb − λ l_k}: the exact tilted value is at most
		// (ĉ + E)(1 + κ)² (the inputs' relative errors), the un-tilt
		// factor is within (1 ± κ): 6κ covers both and the products.
		e := math.Exp(t.m - lam*float64(la+lb+k)*h)
		v := (t.ct[k] + t.bound) * e * (1 + 6*t.kappa)
		if v0 := (t.c0[k] + t.bound0) * (1 + 2*unitRoundoff); !(v <= v0) {
			v = v0
		}
		if !(v <= capU) {
			v = capU
		}
		c[k] = math.Max(v, 0)
	}
	return c, nil
}

// l1max returns Σ|a_i| and max|a_i|.
func l1max(a []float64) (s, m float64) {
	for _, v := range a {
		s += math.Abs(v)
		m = math.Max(m, math.Abs(v))
	}
	return s, m
}

func abs(i int) int {
	if i < 0 {
		return -i
	}
	return i
}

// composeTilted is composePMF's tilted counterpart for upper estimates:
// every entry an upper bound on the exact convolution of the inputs, the
// atom at +∞ composed exactly (inflated by 4u), the slack of (★)
// s = s_a + s_b·|a| (no convolution term), then truncateTilted.
func composeTilted(a, b pmf, h float64, t pldTilt) (pmf, error) {
	c, err := tiltedConvolve(a.p, b.p, a.lo, b.lo, h, t.lambda)
	if err != nil {
		return pmf{}, err
	}
	fa, fb := a.total()-a.inf, b.total()-b.inf
	out := pmf{
		lo:    a.lo + b.lo,
		p:     c,
		inf:   (a.inf*(fb+b.inf) + fa*b.inf) * (1 + 4*unitRoundoff),
		slack: a.slack + b.slack*a.total(),
	}
	out.truncateTilted(h, t)
	return out, nil
}

// truncateTilted moves a top tail of mass ≤ t.tauTop to +∞ and rounds a
// bottom tail up to the lowest kept point while that moved mass, weighted
// by e^{λ l} at its new place, is ≤ tiltBottomShare of Σ p_i e^{λ l_i}
// (see the comment at the top of this file). Both moves only raise δ(ε).
func (m *pmf) truncateTilted(h float64, t pldTilt) {
	p := m.p
	hi := len(p)
	var s float64
	for hi > 1 && s+p[hi-1] <= t.tauTop {
		s += p[hi-1]
		hi--
	}
	m.inf += s * (1 + 2*unitRoundoff)
	// Tilted weights relative to the top kept point.
	top := float64(m.lo+hi-1) * h
	var tot float64
	for i := 0; i < hi; i++ {
		tot += p[i] * math.Exp(t.lambda*(float64(m.lo+i)*h-top))
	}
	lo := 0
	s = 0
	for lo < hi-1 {
		ns := s + p[lo]
		if ns*math.Exp(t.lambda*(float64(m.lo+lo+1)*h-top)) > tiltBottomShare*tot {
			break
		}
		s = ns
		lo++
	}
	if lo > 0 {
		p[lo] += s * (1 + 2*unitRoundoff)
	}
	if lo > 0 || hi < len(p) {
		m.p = append([]float64(nil), p[lo:hi]...)
	}
	m.lo += lo
}

// newTiltedPLD returns the PLD of mechanism m on the tilted path:
// discretized at interval h with its upper tail beyond mass tauBase moved
// to +∞, composed with tilt t; with the optimistic estimate
// (pld_tilt_lower.go) when optimistic, else upper only.
func newTiltedPLD(m Mechanism, h, tauBase float64, t pldTilt, optimistic bool) (*PLD, error) {
	pm, ok := m.(PLDMechanism)
	if !ok {
		return nil, fmt.Errorf("pld: mechanism %q has no proven privacy loss distribution", m.Spec().Kind)
	}
	rem, add, err := pm.lossPairs()
	if err != nil {
		return nil, fmt.Errorf("pld: %w", err)
	}
	out := &PLD{interval: h, tilt: &t}
	for i, lp := range []lossPair{rem, add} {
		if i == 1 && add == rem {
			out.dirs[1] = out.dirs[0]
			break
		}
		u, l, err := discretizeTau(lp, h, tauBase)
		if err != nil {
			return nil, fmt.Errorf("pld: %s %s direction: %w", m.Spec().Kind, directionNames[i], err)
		}
		out.dirs[i] = &pldDirection{upper: u}
		if optimistic {
			out.dirs[i].lower = l
		}
	}
	return out, nil
}
