package privacy

import (
	"fmt"
	"math"
)

// Histories of many distinct mechanisms (per-step σ schedules, long PDP
// plans, --history files) are composed as a binary counter of balanced
// blocks instead of a left fold: in order of first use, each mechanism's
// self-composition is pushed as a block of level 0, and two blocks of
// equal level merge into one of the next level, so at most ⌈log2 M⌉ + 1
// PLDs are alive and the total work is that of a balanced tree (a left
// fold convolves the whole, wide, composition once per mechanism). The
// counter over every mechanism but the last is kept: a query after more
// steps of the last mechanism, or after a new one, folds only O(log M)
// blocks. Mechanisms other than the newest keep no discretized base (it is
// re-discretized when needed, baseOf), so memory does not grow with M;
// those are composed as upper estimates only (half the cost: the
// optimistic estimate is a diagnostic, and Optimistic is then NaN).
//
// The result is a pure function of the history (the same blocks in the
// same order), so a restored accountant answers bit for bit the same.
// Histories of at most pldTreeMechs distinct mechanisms keep the left fold
// (and its bits).

// pldTreeMechs is the number of distinct mechanisms above which the
// accountant composes as a binary counter.
const pldTreeMechs = 16

// pldBlock is a block of the binary counter.
type pldBlock struct {
	p     *PLD
	level int
}

// pldTree is the counter over mechs[0..n) at counts counts.
type pldTree struct {
	blocks []pldBlock
	counts []int64
}

// baseOf returns c's discretized base, re-discretizing a dropped one (kept
// only when c is the newest mechanism).
func (a *PLDAccountant) baseOf(c *pldComposed) (*PLD, error) {
	if c.base != nil {
		return c.base, nil
	}
	base, err := a.newBase(c.mech)
	if err != nil {
		return nil, err
	}
	base = base.upperOnly()
	if len(a.mechs) > 0 && a.mechs[len(a.mechs)-1] == c {
		c.base = base
	}
	return base, nil
}

// checkPLDRange checks what NewPLD would without discretizing: m has
// dominating pairs whose truncated loss range fits a grid at interval h.
func checkPLDRange(m Mechanism, h float64) error {
	pm, ok := m.(PLDMechanism)
	if !ok {
		return fmt.Errorf("pld: mechanism %q has no proven privacy loss distribution (only an RDP curve); use the RDP accountant", m.Spec().Kind)
	}
	rem, add, err := pm.lossPairs()
	if err != nil {
		return fmt.Errorf("pld: %w", err)
	}
	for _, lp := range []lossPair{rem, add} {
		if _, ok := lp.(profilePair); ok {
			continue
		}
		tlo, thi, err := truncation(lp, pldTailMass)
		if err != nil {
			return fmt.Errorf("pld: %s: %w", m.Spec().Kind, err)
		}
		if n := math.Ceil(thi/h) - math.Floor(tlo/h) + 1; !(n <= pldMaxPoints) {
			return fmt.Errorf("pld: the privacy loss range [%.4g, %.4g] needs more than %d points at interval %g; use a larger interval (%w)", tlo, thi, pldMaxPoints, h, ErrPLDRange)
		}
	}
	return nil
}

// pushBlock adds p to the counter, merging equal levels.
func pushBlock(blocks []pldBlock, p *PLD) ([]pldBlock, error) {
	blocks = append(blocks, pldBlock{p: p})
	for len(blocks) >= 2 && blocks[len(blocks)-1].level == blocks[len(blocks)-2].level {
		x, y := blocks[len(blocks)-2], blocks[len(blocks)-1]
		z, err := x.p.Compose(y.p)
		if err != nil {
			return nil, err
		}
		blocks = append(blocks[:len(blocks)-2], pldBlock{p: z, level: x.level + 1})
	}
	return blocks, nil
}

// composeTree composes the history as a binary counter (see above).
func (a *PLDAccountant) composeTree() (*PLD, error) {
	n := len(a.mechs) - 1 // the counter covers all but the last
	t := a.tree
	if t != nil {
		ok := len(t.counts) <= n
		for i := 0; ok && i < len(t.counts); i++ {
			ok = t.counts[i] == a.mechs[i].count
		}
		if !ok {
			t = nil
		}
	}
	if t == nil {
		t = &pldTree{}
	}
	blocks := append([]pldBlock(nil), t.blocks...)
	counts := append([]int64(nil), t.counts...)
	self := func(c *pldComposed) (*PLD, error) {
		base, err := a.baseOf(c)
		if err != nil {
			return nil, err
		}
		p, err := base.SelfCompose(int(c.count))
		if c != a.mechs[len(a.mechs)-1] {
			base.dropCaches()
		}
		return p, err
	}
	for i := len(counts); i < n; i++ {
		c := a.mechs[i]
		counts = append(counts, c.count)
		if c.count == 0 {
			continue
		}
		p, err := self(c)
		if err != nil {
			return nil, fmt.Errorf("pld accountant: %w", err)
		}
		if blocks, err = pushBlock(blocks, p); err != nil {
			return nil, fmt.Errorf("pld accountant: %w", err)
		}
	}
	a.tree = &pldTree{blocks: blocks, counts: counts}
	var acc *PLD
	if last := a.mechs[n]; last.count > 0 {
		p, err := self(last)
		if err != nil {
			return nil, fmt.Errorf("pld accountant: %w", err)
		}
		acc = p
	}
	for i := len(blocks) - 1; i >= 0; i-- {
		if acc == nil {
			acc = blocks[i].p
			continue
		}
		var err error
		if acc, err = blocks[i].p.Compose(acc); err != nil {
			return nil, fmt.Errorf("pld accountant: %w", err)
		}
	}
	return acc, nil
}

// dropCaches releases p's squaring chain and last self-composition.
func (p *PLD) dropCaches() {
	p.sqMu.Lock()
	p.squares, p.self, p.selfN = nil, nil, 0
	p.sqMu.Unlock()
}
