package privacy

import (
	"fmt"
	"math"
	"math/bits"
	"strings"
)

// pldBoundFactor and pldBoundMaxInterval set the interval of the grid on
// which EpsilonBound composes: pldBoundFactor·h, at most
// pldBoundMaxInterval (never below h).
const (
	pldBoundFactor      = 10
	pldBoundMaxInterval = 1e-3
)

// pldBoundPoints is the number of grid counts per doubling of the step
// count at which EpsilonBound composes (relative resolution 1/16).
const pldBoundPoints = 16

// boundAnswer is a cached EpsilonBound answer: the certified guarantee
// after the history's other mechanisms and count runs of mechanism mech.
type boundAnswer struct {
	key   string
	mech  int
	count int64
	delta float64
	limit int
	g     Guarantee
}

// boundGridCount returns n rounded up to the grid of pldBoundPoints counts
// per doubling: multiples of max(1, 2^⌊log2 n⌋/pldBoundPoints).
func boundGridCount(n int) int {
	if n <= pldBoundPoints {
		return n
	}
	step := 1 << (bits.Len(uint(n)) - 1) / pldBoundPoints
	return (n + step - 1) / step * step
}

// EpsilonBound returns a certified upper bound on ε(δ) of the history so
// far that is cheap enough to ask after every step (per-step metrics): the
// certified ε of the history followed by more runs of its last mechanism,
// up to a count c ≥ Steps() on a grid of pldBoundPoints counts per doubling
// (capped at limit when Steps() ≤ limit < c; limit ≤ 0: no cap). It bounds
// the ε so far because the true ε of a composition only grows with further
// mechanisms (the longer composition's output determines the shorter's:
// post-processing), and every upper estimate is certified (pld.go).
// Guarantee.Steps is c.
//
// Which estimate: the accountant's own (EpsilonFor's, interval h) when it
// costs nothing — c = Steps() with the composition cached, or c the count a
// MaxSteps answer confirmed (the budget's end) —, else the upper estimate
// on a coarser grid (interval pldBoundFactor·h, at most
// pldBoundMaxInterval; Guarantee.Interval says which), which is certified
// too but looser by up to ~1e-2 after 10⁴ steps.
//
// The answer at count c is cached until the history leaves the form
// (earlier mechanisms unchanged, last mechanism at most c): a run of n
// identical steps costs about pldBoundPoints·log2(n/pldBoundPoints)
// compositions, each a few convolutions of cached squares (see
// PLD.SelfCompose), instead of one per step.
func (a *PLDAccountant) EpsilonBound(delta float64, limit int) (Guarantee, error) {
	if !(delta > 0 && delta < 1) {
		return Guarantee{}, fmt.Errorf("pld accountant: δ must be in (0, 1), got %v", delta)
	}
	n := a.Steps()
	if n == 0 || len(a.history) == 0 {
		return a.EpsilonFor(delta)
	}
	last := a.history[len(a.history)-1].mech
	var kb strings.Builder
	fmt.Fprintf(&kb, "%x", math.Float64bits(a.interval))
	for i, c := range a.mechs {
		k, _ := specKey(c.spec)
		if i == last {
			fmt.Fprintf(&kb, "|%s×last", k)
		} else {
			fmt.Fprintf(&kb, "|%s×%d", k, c.count)
		}
	}
	key := kb.String()
	cnt := a.mechs[last].count
	if b := a.bound; b != nil && b.key == key && b.mech == last && b.delta == delta && b.limit == limit && cnt <= b.count {
		return b.g, nil
	}
	target := boundGridCount(n)
	if limit >= n && limit < target {
		target = limit
	}
	g, err := a.boundAt(last, target-n, delta)
	if err != nil {
		return Guarantee{}, err
	}
	a.bound = &boundAnswer{key: key, mech: last, count: cnt + int64(target-n), delta: delta, limit: limit, g: g}
	return g, nil
}

// boundAt returns the certified guarantee after extra more runs of
// mechanism last (see EpsilonBound for which estimate).
func (a *PLDAccountant) boundAt(last int, extra int, delta float64) (Guarantee, error) {
	a.rdpShadow() // built once here, cloned into w (min(PLD, RDP), pld_rdp.go)
	w := a.cloneP()
	if extra > 0 {
		if err := w.Compose(a.mechs[last].mech, extra); err != nil {
			return Guarantee{}, err
		}
	}
	if w.cache != nil || w.verified != nil && w.verified.key == w.historyKey() {
		return w.EpsilonFor(delta)
	}
	hb := math.Max(a.interval, math.Min(pldBoundFactor*a.interval, pldBoundMaxInterval))
	if a.boundCache == nil {
		a.boundCache = NewPLDCache()
	}
	c, err := NewPLDAccountant(hb)
	if err != nil {
		return Guarantee{}, err
	}
	c.upperOnly, c.shared = true, a.boundCache
	for _, h := range w.History() {
		m, err := FromSpec(h.Spec)
		if err != nil {
			return Guarantee{}, err
		}
		if err := c.Compose(m, h.Count); err != nil {
			return Guarantee{}, err
		}
	}
	// The coarse accountant's RDP shadow is w's (same history).
	if r := w.rdpShadow(); r != nil {
		c.rdp = r
	} else {
		c.rdpFailed = true
	}
	g, err := c.EpsilonFor(delta)
	if err != nil {
		return Guarantee{}, err
	}
	g.Optimistic = math.NaN()
	return g, nil
}
