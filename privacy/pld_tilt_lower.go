package privacy

import "math"

// The optimistic estimate on the tilted path (pld_tilt.go).
//
// The fast path's optimistic estimate subtracts its FFT round-off slack
// from δ: at the δ where the accountant takes the tilted path that slack
// swamps δ, and the estimate means nothing (e.g. 0.904 where the certified
// bound is 1.2973 and a PLD computed elsewhere gives 1.297). The tilted
// path therefore composes the optimistic discretization (every interval
// rounded down to its left end point, pld.go) with the same tilted
// convolutions, taking per entry a lower bound on the exact convolution of
// its inputs instead of an upper one:
//
//	c_k ≥ max((ĉ_k − E)·e^{ma+mb−λ l_k}·(1 − 6κ), (ĉ⁰_k − E⁰)(1 − 2u), 0),
//
// the tilted and the untilted certConvolve with their proven per-entry
// bounds E, E⁰ (Higham, Theorem 24.2) and the tilt factors' relative
// error κ, as in tiltedConvolve. Truncation only lowers δ(ε): the top tail
// of mass ≤ τ_top is rounded down to the highest kept point, the bottom
// tail dropped under the same tilted-weight rule as the upper estimate's.
// The composed measure is thus below the exact composition of the
// optimistic discretizations entry by entry, and the reported estimate
// lies below the true ε of the dominating pairs (up to the relative
// rounding u of a coarsening step, which adds two masses), by at most
// about h/2 per composition (the drift of the discretization, pld.go).

// composeTiltedLower is composeTilted for the optimistic estimate.
func composeTiltedLower(a, b pmf, h float64, t pldTilt) (pmf, error) {
	c, err := tiltedConvolveLower(a.p, b.p, a.lo, b.lo, h, t.lambda)
	if err != nil {
		return pmf{}, err
	}
	fa, fb := a.total()-a.inf, b.total()-b.inf
	out := pmf{
		lo:    a.lo + b.lo,
		p:     c,
		inf:   (a.inf*(fb+b.inf) + fa*b.inf) * (1 - 4*unitRoundoff),
		slack: a.slack + b.slack*a.total(),
	}
	out.truncateTiltedLower(h, t)
	return out, nil
}

// tiltedConvolveLower returns a pointwise lower bound on the exact
// convolution of the grid measures a (first index la) and b (lb) at
// interval h (see the comment at the top of this file).
func tiltedConvolveLower(a, b []float64, la, lb int, h, lam float64) ([]float64, error) {
	t, err := convolveTilted(a, b, la, lb, h, lam)
	if err != nil {
		return nil, err
	}
	if t.direct != nil {
		for i := range t.direct {
			t.direct[i] *= 1 - t.g
		}
		return t.direct, nil
	}
	c := make([]float64, len(a)+len(b)-1)
	for k := range c {
		v := 0.0
		if d := t.ct[k] - t.bound; d > 0 {
			v = d * math.Exp(t.m-lam*float64(la+lb+k)*h) * (1 - 6*t.kappa)
		}
		if d := (t.c0[k] - t.bound0) * (1 - 2*unitRoundoff); d > v {
			v = d
		}
		if !(v > 0) || math.IsInf(v, 0) {
			v = 0
		}
		c[k] = v
	}
	return c, nil
}

// truncateTiltedLower is truncateTilted for the optimistic estimate: the
// top tail of mass ≤ t.tauTop is rounded down to the highest kept point,
// the bottom tail whose tilted weight is ≤ tiltBottomShare of the total is
// dropped. Both only lower δ(ε).
func (m *pmf) truncateTiltedLower(h float64, t pldTilt) {
	p := m.p
	hi := len(p)
	var s float64
	for hi > 1 && s+p[hi-1] <= t.tauTop {
		s += p[hi-1]
		hi--
	}
	p[hi-1] += s * (1 - 2*unitRoundoff)
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
	if lo > 0 || hi < len(p) {
		m.p = append([]float64(nil), p[lo:hi]...)
	}
	m.lo += lo
}
