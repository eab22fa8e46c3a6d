package privacy

import (
	"errors"
	"fmt"
	"math"
	"sync"
)

// PLD is the discretized privacy loss distribution of a mechanism or of a
// composition, for the remove and the add direction, each as an upper
// estimate (certified: every δ(ε) and ε(δ) it reports is an upper bound, see
// the comment at the top of pld.go) and an optimistic estimate on the same
// grid (a lower bound up to floating point; it shows what the discretization
// costs). Reported guarantees take the worse of the two directions.
//
// A PLD is immutable; Compose and SelfCompose return new values.
type PLD struct {
	interval float64
	dirs     [2]*pldDirection // remove, add; the same pointer when symmetric
	// tilt, when set, composes on the tilted path (pld_tilt.go): upper
	// estimates only, pointwise bounds, no round-off slack.
	tilt *pldTilt
	// squares caches the repeated-squaring chain p^(2^k) of SelfCompose
	// (squares[0] = p itself is implicit): every self-composition of p
	// shares it, so SelfCompose(n) after SelfCompose(m ≥ n) costs
	// popcount(n) − 1 convolutions and gives bit for bit the same PLD.
	sqMu    sync.Mutex
	squares []*PLD
	// selfN and self cache the last SelfCompose(selfN) result.
	selfN int
	self  *PLD
}

// pldDirection is one direction's two estimates.
type pldDirection struct {
	upper, lower pmf
}

// NewPLD discretizes the dominating pairs of m at interval h (> 0; 0 means
// DefaultPLDInterval). It fails when m has no PLD (m does not implement
// PLDMechanism, or its base does not).
func NewPLD(m Mechanism, h float64) (*PLD, error) {
	if h == 0 {
		h = DefaultPLDInterval
	}
	if !(h > 0) || math.IsInf(h, 0) || h > 1 {
		return nil, fmt.Errorf("pld: discretization interval must be in (0, 1], got %v", h)
	}
	if m == nil {
		return nil, errors.New("pld: nil mechanism")
	}
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("pld: %w", err)
	}
	pm, ok := m.(PLDMechanism)
	if !ok {
		return nil, fmt.Errorf("pld: mechanism %q has no proven privacy loss distribution (only an RDP curve); use the RDP accountant", m.Spec().Kind)
	}
	rem, add, err := pm.lossPairs()
	if err != nil {
		return nil, fmt.Errorf("pld: %w", err)
	}
	out := &PLD{interval: h}
	d, err := newDirection(rem, h)
	if err != nil {
		return nil, fmt.Errorf("pld: %s remove direction: %w", m.Spec().Kind, err)
	}
	out.dirs[0] = d
	if add == rem {
		out.dirs[1] = d
	} else if out.dirs[1], err = newDirection(add, h); err != nil {
		return nil, fmt.Errorf("pld: %s add direction: %w", m.Spec().Kind, err)
	}
	return out, nil
}

func newDirection(lp lossPair, h float64) (*pldDirection, error) {
	u, l, err := discretize(lp, h)
	if err != nil {
		return nil, err
	}
	return &pldDirection{upper: u, lower: l}, nil
}

// Interval returns the discretization interval h.
func (p *PLD) Interval() float64 { return p.interval }

// Size returns the number of grid points of the larger direction.
func (p *PLD) Size() int {
	n := 0
	for _, d := range p.dirs {
		n = max(n, len(d.upper.p), len(d.lower.p))
	}
	return n
}

// Symmetric reports whether both directions share one distribution.
func (p *PLD) Symmetric() bool { return p.dirs[0] == p.dirs[1] }

func composeDir(a, b *pldDirection, h float64, t *pldTilt, parallel bool) (*pldDirection, error) {
	if t != nil {
		// The optimistic estimate (pld_tilt_lower.go), when both have one,
		// concurrently with the upper one as below.
		d := &pldDirection{}
		var lerr error
		var lwg sync.WaitGroup
		lower := func() { d.lower, lerr = composeTiltedLower(a.lower, b.lower, h, *t) }
		withLower := len(a.lower.p) > 0 && len(b.lower.p) > 0
		if withLower && parallel {
			lwg.Add(1)
			go func() {
				defer lwg.Done()
				lower()
			}()
		}
		u, err := composeTilted(a.upper, b.upper, h, *t)
		lwg.Wait()
		if withLower && !parallel && err == nil {
			lower()
		}
		if err != nil {
			return nil, err
		}
		if lerr != nil {
			return nil, lerr
		}
		d.upper = u
		return d, nil
	}
	d := &pldDirection{}
	var wg sync.WaitGroup
	if len(a.lower.p) > 0 && len(b.lower.p) > 0 {
		if parallel {
			wg.Add(1)
			go func() {
				defer wg.Done()
				d.lower = composePMF(a.lower, b.lower, false)
			}()
		} else {
			d.lower = composePMF(a.lower, b.lower, false)
		}
	}
	d.upper = composePMF(a.upper, b.upper, true)
	wg.Wait()
	return d, nil
}

// pldCoarsenPoints is the grid size above which Compose coarsens its
// inputs (interval doubled per level, see PLD.coarsen) instead of
// composing a larger grid: it bounds the memory of one composition
// (≈ 16 bytes per point in the FFT) for any number of steps.
const pldCoarsenPoints = 1 << 22

// pldChainBudget is the number of grid entries (all directions and
// estimates) up to which SelfCompose keeps its squaring chain.
const pldChainBudget = 1 << 24

// points returns the number of grid entries of p (all directions and
// estimates).
func (p *PLD) points() int {
	n := 0
	for i, d := range p.dirs {
		if i == 1 && p.Symmetric() {
			break
		}
		n += len(d.upper.p) + len(d.lower.p)
	}
	return n
}

// pldParallelPoints is the largest composed grid whose two convolutions
// run concurrently.
const pldParallelPoints = 1 << 20

// tiltCoarsenPoints is pldCoarsenPoints of the tilted path (two certified
// FFTs of complex length ≥ 2n per convolution): at 2^20 points a grid
// spans ≥ 100 nats at h = 1e-4, where coarsening to 2h costs ≤ 2e-6
// relative in ε.
const tiltCoarsenPoints = 1 << 20

// Compose returns the PLD of running p then o (the convolution of the two
// PLDs per direction). Their intervals must be equal or differ by a power
// of two (the finer one is coarsened); when the result would exceed
// pldCoarsenPoints grid points both are coarsened (interval doubled) until
// it does not. Both must be on the same path (tilt).
func (p *PLD) Compose(o *PLD) (*PLD, error) {
	if (p.tilt == nil) != (o.tilt == nil) || p.tilt != nil && *p.tilt != *o.tilt {
		return nil, fmt.Errorf("pld: cannot compose PLDs of different tilts")
	}
	for p.interval < o.interval {
		if 2*p.interval > o.interval {
			return nil, fmt.Errorf("pld: cannot compose intervals %v and %v", p.interval, o.interval)
		}
		p = p.coarsen()
	}
	for o.interval < p.interval {
		if 2*o.interval > p.interval {
			return nil, fmt.Errorf("pld: cannot compose intervals %v and %v", p.interval, o.interval)
		}
		o = o.coarsen()
	}
	limit := pldCoarsenPoints
	if p.tilt != nil {
		limit = tiltCoarsenPoints
	}
	for p.composedSize(o) > limit {
		p, o = p.coarsen(), o.coarsen()
	}
	// The two directions (or, when symmetric, the two estimates) are
	// composed concurrently below pldParallelPoints (at most two
	// convolutions at a time; larger ones one at a time, to bound the
	// peak memory). The result does not depend on the scheduling.
	out := &PLD{interval: p.interval, tilt: p.tilt}
	par := p.composedSize(o) <= pldParallelPoints
	if p.Symmetric() && o.Symmetric() {
		d, err := composeDir(p.dirs[0], o.dirs[0], p.interval, p.tilt, par)
		if err != nil {
			return nil, err
		}
		out.dirs[0], out.dirs[1] = d, d
		return out, nil
	}
	var err1 error
	var wg sync.WaitGroup
	second := func() { out.dirs[1], err1 = composeDir(p.dirs[1], o.dirs[1], p.interval, p.tilt, false) }
	if par {
		wg.Add(1)
		go func() {
			defer wg.Done()
			second()
		}()
	}
	d0, err0 := composeDir(p.dirs[0], o.dirs[0], p.interval, p.tilt, false)
	wg.Wait()
	if !par {
		second()
	}
	if err0 != nil {
		return nil, err0
	}
	if err1 != nil {
		return nil, err1
	}
	out.dirs[0] = d0
	return out, nil
}

// composedSize returns the largest grid of a direction of p∘o.
func (p *PLD) composedSize(o *PLD) int {
	n := 0
	for i := range p.dirs {
		n = max(n, len(p.dirs[i].upper.p)+len(o.dirs[i].upper.p)-1)
	}
	return n
}

// coarsen returns p on the grid of interval 2h: the upper estimate's
// masses move up to the next coarse point (l = i·h to ⌈i/2⌉·2h), the
// optimistic estimate's down (⌊i/2⌋·2h). Moving mass up only raises
// f_e(l) = (1 − e^{e−l})₊ (non-decreasing in l), so (★) of pld.go still
// holds with the same slack; moving it down keeps the optimistic
// estimate's reverse inequality. The cost is at most 2h in ε per
// coarsening of a factor.
func (p *PLD) coarsen() *PLD {
	out := &PLD{interval: 2 * p.interval, tilt: p.tilt}
	for i, d := range p.dirs {
		if i == 1 && p.Symmetric() {
			out.dirs[1] = out.dirs[0]
			break
		}
		nd := &pldDirection{upper: d.upper.coarsen(true)}
		if len(d.lower.p) > 0 {
			nd.lower = d.lower.coarsen(false)
		}
		out.dirs[i] = nd
	}
	return out
}

// coarsen moves grid index i to ⌈i/2⌉ (up) or ⌊i/2⌋ (down) at interval 2h.
func (m pmf) coarsen(up bool) pmf {
	idx := func(i int) int {
		if up {
			return ceilDiv2(i)
		}
		return floorDiv2(i)
	}
	lo := idx(m.lo)
	hi := idx(m.lo + len(m.p) - 1)
	out := pmf{lo: lo, p: make([]float64, hi-lo+1), inf: m.inf, slack: m.slack}
	for i, v := range m.p {
		out.p[idx(m.lo+i)-lo] += v
	}
	if up {
		// Each coarse entry is a sum of ≤ 2 non-negative terms.
		for i := range out.p {
			out.p[i] *= 1 + unitRoundoff
		}
	}
	return out
}

func floorDiv2(i int) int { return i >> 1 }
func ceilDiv2(i int) int  { return -((-i) >> 1) }

// SelfCompose returns the PLD of n ≥ 1 runs of p, by repeated squaring
// (O(log n) convolutions): the product, in increasing k, of the squares
// p^(2^k) for the set bits k of n. The squares are cached in p (see
// PLD.squares), so a later SelfCompose of p costs only the products. The
// result is a pure function of (p, n).
func (p *PLD) SelfCompose(n int) (*PLD, error) {
	if n < 1 {
		return nil, fmt.Errorf("pld: self-composition count must be ≥ 1, got %d", n)
	}
	p.sqMu.Lock()
	if p.selfN == n {
		defer p.sqMu.Unlock()
		return p.self, nil
	}
	p.sqMu.Unlock()
	var acc *PLD
	// cur is p^(2^k); the chain is cached in p.squares while its grids
	// total at most pldChainBudget entries (bounded memory for wide
	// grids: beyond, squares are computed, used and dropped).
	cur := p
	p.sqMu.Lock()
	cached := append([]*PLD(nil), p.squares...)
	p.sqMu.Unlock()
	pts := 0
	for _, s := range cached {
		pts += s.points()
	}
	caching := pts <= pldChainBudget
	for k := 0; n>>k != 0; k++ {
		if k > 0 {
			if k-1 < len(cached) {
				cur = cached[k-1]
			} else {
				next, err := cur.Compose(cur)
				if err != nil {
					return nil, err
				}
				cur = next
				if pts += cur.points(); caching && pts <= pldChainBudget {
					cached = append(cached, cur)
				} else {
					caching = false
				}
			}
		}
		if (n>>k)&1 == 0 {
			continue
		}
		if acc == nil {
			acc = cur
		} else {
			var err error
			if acc, err = acc.Compose(cur); err != nil {
				return nil, err
			}
		}
	}
	p.sqMu.Lock()
	p.selfN, p.self = n, acc
	if len(cached) > len(p.squares) {
		p.squares = cached
	}
	p.sqMu.Unlock()
	return acc, nil
}

// PLDGuarantee is an (ε, δ) statement from a PLD: the certified upper bound
// and the optimistic estimate of the queried quantity.
type PLDGuarantee struct {
	// Epsilon and Delta: the queried one is the certified upper bound.
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
	// Optimistic is the queried quantity from the optimistic estimate.
	Optimistic float64 `json:"optimistic"`
	// Interval is the discretization interval.
	Interval float64 `json:"interval"`
	// Direction is "remove" or "add": the direction giving the reported
	// (worse) upper bound.
	Direction string `json:"direction"`
}

var directionNames = [2]string{"remove", "add"}

// Epsilon returns the smallest ε ≥ 0 with δ(ε) ≤ delta (0 < delta < 1) for
// both directions, from the upper estimate (the guarantee) and from the
// optimistic one. +Inf when no finite ε reaches delta.
func (p *PLD) Epsilon(delta float64) (PLDGuarantee, error) {
	if !(delta > 0 && delta < 1) {
		return PLDGuarantee{}, fmt.Errorf("pld: δ must be in (0, 1), got %v", delta)
	}
	g := PLDGuarantee{Delta: delta, Interval: p.interval, Epsilon: math.Inf(-1), Optimistic: math.Inf(-1)}
	for i, d := range p.dirs {
		if i == 1 && p.Symmetric() {
			break
		}
		u := d.upper.epsilonFor(delta, d.upper.slack, p.interval)
		if math.IsNaN(u) {
			return PLDGuarantee{}, fmt.Errorf("pld: ε(δ = %g) of the %s direction is NaN: %w", delta, directionNames[i], ErrPLDRange)
		}
		l := math.NaN()
		if len(d.lower.p) > 0 {
			l = d.lower.epsilonFor(delta, -d.lower.slack, p.interval)
		}
		if u > g.Epsilon {
			g.Epsilon, g.Direction = u, directionNames[i]
		}
		g.Optimistic = math.Max(g.Optimistic, l)
	}
	return g, nil
}

// Delta returns δ(eps) (eps ≥ 0 finite) from the upper estimate (the
// guarantee, capped at 1) and from the optimistic one, the worse direction.
func (p *PLD) Delta(eps float64) (PLDGuarantee, error) {
	if !(eps >= 0) || math.IsInf(eps, 0) {
		return PLDGuarantee{}, fmt.Errorf("pld: ε must be finite and ≥ 0, got %v", eps)
	}
	g := PLDGuarantee{Epsilon: eps, Interval: p.interval, Delta: -1, Optimistic: 0}
	for i, d := range p.dirs {
		if i == 1 && p.Symmetric() {
			break
		}
		u := math.Min(1, d.upper.deltaSum(eps, p.interval)+d.upper.slack)
		if math.IsNaN(u) {
			return PLDGuarantee{}, fmt.Errorf("pld: δ(ε = %g) of the %s direction is NaN: %w", eps, directionNames[i], ErrPLDRange)
		}
		l := math.NaN()
		if len(d.lower.p) > 0 {
			l = math.Max(0, d.lower.deltaSum(eps, p.interval)-d.lower.slack)
		}
		if u > g.Delta {
			g.Delta, g.Direction = u, directionNames[i]
		}
		g.Optimistic = math.Max(g.Optimistic, l)
	}
	return g, nil
}
