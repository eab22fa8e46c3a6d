package privacy

import (
	"fmt"
	"math"
)

// The accountant's use of the tilted path (pld_tilt.go).
//
// A query first composes on the fast path (the canonical composition,
// cached). When the numerical charges of that answer — the round-off slack
// and the tail mass truncation moved to +∞ — exceed tiltChargeShare of δ
// and move ε by more than tiltTrigger·h (or make it +Inf), the history is recomposed on the tilted
// path with λ from the RDP accountant's optimal order at the same query, and
// the smaller of the two certified answers is reported (then the smaller of
// that and the RDP bound, pld_rdp.go). Ordinary queries never take the
// tilted path and cost what they did.

// tiltTrigger is the share of the interval h by which the fast path's
// numerical charges may move ε before the tilted path is tried.
const tiltTrigger = 0.1

// tiltChargeShare is the share of δ the fast path's numerical charges may
// take in any case.
const tiltChargeShare = 1e-2

// tiltCacheMaxMechs is the number of distinct mechanisms up to which the
// tilted path keeps its discretized bases (and their squaring chains)
// between queries; longer schedules rebuild them per query, so that
// memory stays bounded by the binary counter (O(log M) PLDs).
const tiltCacheMaxMechs = 8

// fastNeedsTiltEps reports whether the fast path's answer u for ε at δ is
// dominated by its numerical charges.
func fastNeedsTiltEps(p *PLD, delta float64) bool {
	for i, d := range p.dirs {
		if i == 1 && p.Symmetric() {
			break
		}
		u := d.upper.epsilonFor(delta, d.upper.slack, p.interval)
		if math.IsInf(u, 1) {
			return true
		}
		if d.upper.slack+d.upper.trunc <= tiltChargeShare*delta {
			continue
		}
		clean := d.upper.epsilonFor(delta, -d.upper.trunc, p.interval)
		if u-clean > tiltTrigger*p.interval {
			return true
		}
	}
	return false
}

// fastNeedsTiltDelta reports whether the fast path's δ at ε owes more than
// 1% to its numerical charges.
func fastNeedsTiltDelta(p *PLD, eps float64) bool {
	for i, d := range p.dirs {
		if i == 1 && p.Symmetric() {
			break
		}
		u := d.upper.deltaSum(eps, p.interval) + d.upper.slack
		if d.upper.slack+d.upper.trunc > 0.01*u {
			return true
		}
	}
	return false
}

// tiltOrder returns the order α* of the RDP bound for the query (ε at
// delta > 0, else δ at eps), or a Chernoff estimate log(1/δ)/ε + 1 from
// the fast answer guess when the history has no RDP curve.
func (a *PLDAccountant) tiltOrder(delta, eps, guess float64) float64 {
	if r := a.rdpShadow(); r != nil {
		var e EpsilonResult
		var err error
		if delta > 0 {
			e, err = r.Epsilon(delta, ConversionBBG)
		} else {
			e, err = r.Delta(eps, ConversionBBG)
		}
		if err == nil && e.Order > 1 && !math.IsInf(e.Order, 0) {
			return e.Order
		}
	}
	if delta > 0 && guess > 0 && !math.IsInf(guess, 0) {
		return 1 + math.Log(1/delta)/guess
	}
	if eps > 0 {
		return 1 + 1/eps
	}
	return 2
}

// tiltedComposed composes the history on the tilted path for a query at δ
// (tails scaled to δ) with tilt from order: each distinct mechanism's
// self-composition (repeated squaring), combined as a binary counter of
// balanced blocks in order of first use (at most ⌈log2 M⌉ + 1 PLDs alive).
func (a *PLDAccountant) tiltedComposed(delta, order float64) (*PLD, error) {
	n := a.Steps()
	if n == 0 {
		return nil, nil
	}
	t := pldTilt{lambda: tiltFor(order), tauTop: pow10Floor(delta * tiltTailShare)}
	tauBase := pow10Floor(delta * tiltTailShare / float64(n))
	key := fmt.Sprintf("%s|%x|%x|%x|%v", a.historyKey(), math.Float64bits(t.lambda), math.Float64bits(t.tauTop), math.Float64bits(tauBase), a.upperOnly)
	if a.tilted != nil && a.tilted.key == key {
		return a.tilted.pld, nil
	}
	keep := len(a.mechs) <= tiltCacheMaxMechs
	if a.tiltBases == nil && keep {
		a.tiltBases = map[string]*PLD{}
	}
	type block struct {
		p     *PLD
		level int
	}
	var stack []block
	for _, c := range a.mechs {
		if c.count == 0 {
			continue
		}
		sk, _ := specKey(c.spec)
		bkey := fmt.Sprintf("%s|%x|%x|%x|%x|%v", sk, math.Float64bits(a.interval), math.Float64bits(t.lambda), math.Float64bits(t.tauTop), math.Float64bits(tauBase), a.upperOnly)
		var base *PLD
		if keep {
			base = a.tiltBases[bkey]
		}
		if base == nil {
			var err error
			if base, err = newTiltedPLD(c.mech, a.interval, tauBase, t, !a.upperOnly); err != nil {
				return nil, fmt.Errorf("pld accountant: %w", err)
			}
			if keep {
				a.tiltBases[bkey] = base
			}
		}
		p, err := base.SelfCompose(int(c.count))
		if err != nil {
			return nil, fmt.Errorf("pld accountant: %w", err)
		}
		stack = append(stack, block{p: p})
		for len(stack) >= 2 && stack[len(stack)-1].level == stack[len(stack)-2].level {
			x, y := stack[len(stack)-2], stack[len(stack)-1]
			z, err := x.p.Compose(y.p)
			if err != nil {
				return nil, fmt.Errorf("pld accountant: %w", err)
			}
			stack = append(stack[:len(stack)-2], block{p: z, level: x.level + 1})
		}
	}
	acc := stack[len(stack)-1].p
	for i := len(stack) - 2; i >= 0; i-- {
		var err error
		if acc, err = stack[i].p.Compose(acc); err != nil {
			return nil, fmt.Errorf("pld accountant: %w", err)
		}
	}
	a.tilted = &tiltedAnswer{key: key, pld: acc}
	return acc, nil
}

// tiltedAnswer caches the last tilted composition.
type tiltedAnswer struct {
	key string
	pld *PLD
}

// pow10Floor returns the largest power of ten ≤ x (x > 0).
func pow10Floor(x float64) float64 {
	return math.Pow(10, math.Floor(math.Log10(x)))
}

// saddleTilt returns the λ > 0 at which the measure m tilted by e^{λl}
// has mean loss target (the saddle point of the Chernoff bound at target,
// where the tilted path's relative accuracy is best), by bisection on
// [lo, hi]; 0 when the tilted mean does not reach target there.
func saddleTilt(m pmf, h, target, lo, hi float64) float64 {
	mean := func(lam float64) float64 {
		mx := math.Inf(-1)
		for i, v := range m.p {
			if v > 0 {
				mx = math.Max(mx, math.Log(v)+lam*float64(m.lo+i)*h)
			}
		}
		var s, sl float64
		for i, v := range m.p {
			if v > 0 {
				l := float64(m.lo+i) * h
				w := math.Exp(math.Log(v) + lam*l - mx)
				s += w
				sl += w * l
			}
		}
		return sl / s
	}
	if mean(hi) < target || mean(lo) > target {
		return 0
	}
	for range 40 {
		mid := math.Sqrt(lo * hi)
		if mean(mid) < target {
			lo = mid
		} else {
			hi = mid
		}
	}
	return math.Sqrt(lo * hi)
}

// worseDir returns the upper estimate of the named direction.
func (p *PLD) worseDir(name string) pmf {
	if name == directionNames[1] {
		return p.dirs[1].upper
	}
	return p.dirs[0].upper
}

// tiltedEpsilon composes on the tilted path with λ from order, then, when
// the saddle point λ of the result at its own ε differs by more than one
// grid step, once more with that λ; it returns the smaller answer.
func (a *PLDAccountant) tiltedEpsilon(delta, order float64) (PLDGuarantee, *PLD, error) {
	tp, err := a.tiltedComposed(delta, order)
	if err != nil {
		return PLDGuarantee{}, nil, err
	}
	tg, err := tp.Epsilon(delta)
	if err != nil {
		return PLDGuarantee{}, nil, err
	}
	lam := tp.tilt.lambda
	if math.IsInf(tg.Epsilon, 0) {
		return tg, tp, nil
	}
	if s := saddleTilt(tp.worseDir(tg.Direction), tp.interval, tg.Epsilon, lam/16, lam*16); s > 0 && math.Abs(math.Log2(s/lam)) > 1.0/tiltQuantum {
		tp2, err := a.tiltedComposed(delta, 1+s*math.Exp2(0.5/tiltQuantum))
		if err != nil {
			return PLDGuarantee{}, nil, err
		}
		tg2, err := tp2.Epsilon(delta)
		if err != nil {
			return PLDGuarantee{}, nil, err
		}
		if tg2.Epsilon < tg.Epsilon {
			return tg2, tp2, nil
		}
	}
	return tg, tp, nil
}

// tightenEpsilon returns g or, when the fast path's numerics dominate it,
// the tilted path's answer if smaller. The optimistic estimate is then the
// tilted path's in either case (pld_tilt_lower.go; NaN for an upper-only
// accountant or when the tilted path fails): the fast path's subtracts a
// round-off slack that swamps δ here.
func (a *PLDAccountant) tightenEpsilon(p *PLD, g PLDGuarantee, delta float64) (PLDGuarantee, string, error) {
	if !fastNeedsTiltEps(p, delta) {
		return g, "", nil
	}
	tg, tp, err := a.tiltedEpsilon(delta, a.tiltOrder(delta, 0, g.Optimistic))
	if err != nil {
		// The tilted path could not compose (e.g. a tail it cannot cut
		// at the scaled threshold): the fast answer stands (certified).
		g.Optimistic = math.NaN()
		return g, fmt.Sprintf("pld connect-the-dots upper bound at interval %g; worse direction %s; no optimistic estimate (the fast path's round-off dominates it; tilted path: %v)", g.Interval, g.Direction, err), nil
	}
	if tg.Epsilon < g.Epsilon {
		return tg, tiltDetail(tp, tg), nil
	}
	g.Optimistic = tg.Optimistic
	return g, "", nil
}

func tiltDetail(tp *PLD, g PLDGuarantee) string {
	return fmt.Sprintf("pld tilted (λ = %.4g; per-entry radix-2 FFT bound, Higham Thm 24.2) upper bound at interval %g; worse direction %s", tp.tilt.lambda, g.Interval, g.Direction)
}

// tightenDelta is tightenEpsilon for δ at eps.
func (a *PLDAccountant) tightenDelta(p *PLD, g PLDGuarantee, eps float64) (PLDGuarantee, string, error) {
	if !fastNeedsTiltDelta(p, eps) {
		return g, "", nil
	}
	// Tails scaled to an estimate of the answer: the fast path's δ without
	// its numerical charges, or the RDP bound if smaller; once more with
	// the tilted answer when that is far smaller.
	ref := math.Inf(1)
	for i, d := range p.dirs {
		if i == 1 && p.Symmetric() {
			break
		}
		ref = math.Min(ref, math.Max(0, d.upper.deltaSum(eps, p.interval)-d.upper.trunc))
	}
	if r := a.rdpShadow(); r != nil {
		if e, err := r.Delta(eps, ConversionBBG); err == nil && e.Delta > 0 {
			ref = math.Min(ref, e.Delta)
		}
	}
	if !(ref > 1e-300) || math.IsInf(ref, 0) {
		return g, "", nil
	}
	tp, err := a.tiltedComposed(ref, a.tiltOrder(0, eps, 0))
	if err != nil {
		return g, "", nil // as in tightenEpsilon: the fast answer stands
	}
	tg, err := tp.Delta(eps)
	if err != nil {
		return g, "", nil
	}
	if tg.Delta < ref/10 && tg.Delta > 1e-300 {
		if tp2, err := a.tiltedComposed(tg.Delta, a.tiltOrder(0, eps, 0)); err != nil {
			return PLDGuarantee{}, "", err
		} else if tg2, err := tp2.Delta(eps); err != nil {
			return PLDGuarantee{}, "", err
		} else if tg2.Delta < tg.Delta {
			tp, tg, ref = tp2, tg2, tg.Delta
		}
	}
	lam := tp.tilt.lambda
	if s := saddleTilt(tp.worseDir(tg.Direction), tp.interval, eps, lam/16, lam*16); s > 0 && math.Abs(math.Log2(s/lam)) > 1.0/tiltQuantum {
		tp2, err := a.tiltedComposed(ref, 1+s*math.Exp2(0.5/tiltQuantum))
		if err != nil {
			return PLDGuarantee{}, "", err
		}
		if tg2, err := tp2.Delta(eps); err != nil {
			return PLDGuarantee{}, "", err
		} else if tg2.Delta < tg.Delta {
			tp, tg = tp2, tg2
		}
	}
	if tg.Delta < g.Delta {
		return tg, tiltDetail(tp, tg), nil
	}
	return g, "", nil
}
