package privacy

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
)

// PLDAccountant composes privacy loss distributions (see PLD): any sequence
// of mechanisms that have one (PLDMechanism), each with a count.
//
// Like the RDPAccountant, it keeps the distinct mechanisms (by Spec) in
// order of first use with their total counts, and the ordered history. A
// query composes, per distinct mechanism, its discretized PLD with itself
// count times (repeated squaring) and convolves these in order of first use:
// a pure function of the history, so an accountant restored from its JSON
// answers bit for bit what the original would, also after further steps.
// The composed PLD is cached until the next Compose.
//
// Only mechanisms with a proven PLD are accepted; PTRDiscrete and RGM are refused
// (account them with the RDP accountant).
//
// A PLDAccountant is not safe for concurrent use.
//
// Its PLDs are discretized privacy loss distributions of the dominating
// pairs of Gaussian, Laplace, PTR (the envelope pair of docs/ptr-pld.md,
// discretized from its privacy profile) and Poisson-subsampled mechanisms
// (PLDMechanism), per adjacency direction, with a certified connect-the-dots
// upper estimate and an optimistic one, composed by FFT and repeated
// squaring (pld.go states the proof and the floating-point assumptions).
// Squaring chains, prefix compositions and shared step PLDs (PLDCache) make
// repeated queries cheap, bit for bit equal to fresh ones.
type PLDAccountant struct {
	interval float64
	mechs    []*pldComposed
	index    map[string]int
	history  []historyEntry
	cache    *PLD
	// prefix[i] caches the canonical composition of mechs[0..i] at the
	// counts prefixCount[0..i] (nil while every count so far is 0): a
	// query after composing only the last mechanism re-composes that
	// mechanism alone. The PLDs are immutable and shared with clones.
	prefix      []*PLD
	prefixCount []int64
	// upperOnly drops the optimistic estimates (internal searches that only
	// need the upper bound).
	upperOnly bool
	// shared, if not nil, shares discretized PLDs with other accountants
	// (see PLDCache).
	shared *PLDCache
	// bound caches the last EpsilonBound answer, boundCache the coarse
	// PLDs it composes.
	bound      *boundAnswer
	boundCache *PLDCache
	// version counts Compose calls; maxSteps caches the last MaxSteps
	// answer for this version (a budget plan and the trainer's first
	// budget check ask the same question).
	version  int
	maxSteps *maxStepsAnswer
	// verified is the composed PLD MaxSteps confirmed, keyed by its
	// history (historyKey): when training reaches that history, the final
	// query reuses it instead of composing again.
	verified *verifiedPLD
	// rdp is the RDP accountant of the same history (see pld_rdp.go), built
	// on the first query; rdpFailed when some mechanism has no proven RDP
	// curve.
	rdp       *RDPAccountant
	rdpFailed bool
	// tilted caches the last tilted-path composition, tiltBases its
	// discretized mechanisms (pld_accountant_tilt.go).
	tilted    *tiltedAnswer
	tiltBases map[string]*PLD
	// tree is the binary counter of many-mechanism histories
	// (pld_accountant_tree.go); immutable, shared with clones.
	tree *pldTree
}

type verifiedPLD struct {
	key string
	pld *PLD
}

// historyKey identifies the canonical composition: the interval and the
// distinct mechanisms in order of first use with their counts.
func (a *PLDAccountant) historyKey() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%x", math.Float64bits(a.interval))
	for _, c := range a.mechs {
		k, _ := specKey(c.spec)
		fmt.Fprintf(&b, "|%s×%d", k, c.count)
	}
	return b.String()
}

// maxStepsAnswer is a cached MaxSteps result: n steps fit, and n+1 do not
// unless n was capped by the limit.
type maxStepsAnswer struct {
	key     string
	version int
	n       int
	capped  bool
}

type pldComposed struct {
	spec  Spec
	mech  Mechanism
	count int64
	base  *PLD
}

// NewPLDAccountant returns an empty PLD accountant with discretization
// interval h (0 means DefaultPLDInterval; else in (0, 1]).
func NewPLDAccountant(h float64) (*PLDAccountant, error) {
	if h == 0 {
		h = DefaultPLDInterval
	}
	if !(h > 0 && h <= 1) {
		return nil, fmt.Errorf("pld accountant: discretization interval must be in (0, 1], got %v", h)
	}
	return &PLDAccountant{interval: h, index: map[string]int{}}, nil
}

// Kind is KindPLD.
func (a *PLDAccountant) Kind() string { return KindPLD }

// Interval returns the discretization interval.
func (a *PLDAccountant) Interval() float64 { return a.interval }

// HasPLD reports whether m has a proven privacy loss distribution (it
// implements PLDMechanism and its pairs can be built).
func HasPLD(m Mechanism) bool {
	pm, ok := m.(PLDMechanism)
	if !ok || m.Validate() != nil {
		return false
	}
	_, _, err := pm.lossPairs()
	return err == nil
}

// Compose records count ≥ 1 runs of m, discretizing its PLD the first time
// its Spec is seen; it fails, leaving the accountant unchanged, when m is
// invalid or has no PLD.
func (a *PLDAccountant) Compose(m Mechanism, count int) error {
	if m == nil {
		return errors.New("pld accountant: nil mechanism")
	}
	if count < 1 {
		return fmt.Errorf("pld accountant: count must be ≥ 1, got %d", count)
	}
	idx, err := a.lookup(m)
	if err != nil {
		return err
	}
	a.mechs[idx].count += int64(count)
	if n := len(a.history); n > 0 && a.history[n-1].mech == idx {
		a.history[n-1].count += int64(count)
	} else {
		a.history = append(a.history, historyEntry{mech: idx, count: int64(count)})
	}
	a.composeShadow(m, count)
	a.cache = nil
	a.version++
	return nil
}

// lookup returns m's index, adding it (count 0) when new.
func (a *PLDAccountant) lookup(m Mechanism) (int, error) {
	if err := m.Validate(); err != nil {
		return 0, fmt.Errorf("pld accountant: %w", err)
	}
	key, err := specKey(m.Spec())
	if err != nil {
		return 0, fmt.Errorf("pld accountant: %w", err)
	}
	if idx, ok := a.index[key]; ok {
		return idx, nil
	}
	var base *PLD
	ckey := fmt.Sprintf("%s|%x|%v", key, math.Float64bits(a.interval), a.upperOnly)
	if a.shared != nil {
		base = a.shared.m[ckey]
	}
	lazy := len(a.mechs) >= pldTreeMechs && a.shared == nil
	if lazy {
		// Many distinct mechanisms: discretized when composed (baseOf);
		// here only the pairs and the grid size are checked.
		if err := checkPLDRange(m, a.interval); err != nil {
			return 0, fmt.Errorf("pld accountant: %w", err)
		}
	} else if base == nil {
		var err error
		if base, err = a.newBase(m); err != nil {
			return 0, err
		}
		if a.shared != nil {
			a.shared.m[ckey] = base
		}
	}
	a.mechs = append(a.mechs, &pldComposed{spec: m.Spec(), mech: m, base: base})
	a.index[key] = len(a.mechs) - 1
	if n := len(a.mechs); n > pldTreeMechs && a.shared == nil {
		// Many distinct mechanisms: keep only the newest base (the
		// others are re-discretized when needed, see baseOf).
		a.mechs[n-2].base = nil
	}
	return len(a.mechs) - 1, nil
}

// PLDCache shares discretized mechanism PLDs between accountants (with
// their cached squaring chains and last self-composition, see
// PLD.SelfCompose): accountants of PDP-SGD's budget classes that compose
// the same step mechanism discretize and self-compose it once. Results are
// bit for bit those of unshared accountants. Not safe for concurrent use.
type PLDCache struct {
	m map[string]*PLD
}

// DropOptimistic stops the accountant (and its later clones) from composing
// the optimistic estimates of mechanisms it discretizes from now on, for
// callers that use only the certified upper bound (the PDP ledger): queries
// then report Optimistic = NaN. The upper estimates, hence every certified
// ε and δ, are bit for bit the same (composing them never reads the
// optimistic ones), at half the cost.
func (a *PLDAccountant) DropOptimistic() {
	a.upperOnly = true
	a.cache, a.prefix, a.prefixCount, a.tree = nil, nil, nil, nil
}

// NewPLDCache returns an empty cache.
func NewPLDCache() *PLDCache { return &PLDCache{m: map[string]*PLD{}} }

// ShareCache makes the accountant (and its later clones) look up and store
// discretized PLDs in c.
func (a *PLDAccountant) ShareCache(c *PLDCache) { a.shared = c }

// newBase discretizes m at the accountant's interval.
func (a *PLDAccountant) newBase(m Mechanism) (*PLD, error) {
	base, err := NewPLD(m, a.interval)
	if err != nil {
		return nil, fmt.Errorf("pld accountant: %w", err)
	}
	if a.upperOnly {
		base = base.upperOnly()
	}
	return base, nil
}

// Steps returns the total number of composed runs.
func (a *PLDAccountant) Steps() int {
	var n int64
	for _, c := range a.mechs {
		n += c.count
	}
	return int(n)
}

// History returns the compositions in order.
func (a *PLDAccountant) History() []Composition {
	out := make([]Composition, len(a.history))
	for i, h := range a.history {
		out[i] = Composition{Spec: a.mechs[h.mech].spec, Count: int(h.count)}
	}
	return out
}

// Composed returns the PLD of the whole history (nil when empty).
func (a *PLDAccountant) Composed() (*PLD, error) {
	if a.cache != nil {
		return a.cache, nil
	}
	if a.verified != nil && a.verified.key == a.historyKey() {
		a.cache = a.verified.pld
		return a.cache, nil
	}
	if len(a.mechs) > pldTreeMechs {
		total, err := a.composeTree()
		if err != nil {
			return nil, err
		}
		a.cache = total
		return total, nil
	}
	// The first mechanism whose count differs from the cached prefix's.
	start := 0
	for start < len(a.prefix) && start < len(a.mechs) && a.prefixCount[start] == a.mechs[start].count {
		start++
	}
	for start > 0 && a.prefix[start-1] == nil { // dropped (see below)
		start--
	}
	a.prefix, a.prefixCount = a.prefix[:start], a.prefixCount[:start]
	var total *PLD
	if start > 0 {
		total = a.prefix[start-1]
	}
	for _, c := range a.mechs[start:] {
		if c.count > 0 {
			base, err := a.baseOf(c)
			if err != nil {
				return nil, err
			}
			p, err := base.SelfCompose(int(c.count))
			if err != nil {
				return nil, fmt.Errorf("pld accountant: %w", err)
			}
			if total == nil {
				total = p
			} else if total, err = total.Compose(p); err != nil {
				return nil, fmt.Errorf("pld accountant: %w", err)
			}
		}
		a.prefix = append(a.prefix, total)
		a.prefixCount = append(a.prefixCount, c.count)
	}
	// Keep only the last two prefixes (what a query after composing the
	// last mechanism, or a new one, needs): memory stays bounded for
	// schedules of many distinct mechanisms. Dropped entries are nil, and
	// the loop above stops at them.
	for i := 0; i+2 < len(a.prefix); i++ {
		a.prefix[i] = nil
	}
	a.cache = total
	return total, nil
}

func (a *PLDAccountant) guarantee(g PLDGuarantee, detail string) Guarantee {
	if detail == "" {
		detail = "pld connect-the-dots upper bound (radix-2 FFT round-off bound, Higham Thm 24.2); worse direction " + g.Direction
		if g.Interval != a.interval {
			detail += fmt.Sprintf(" (grid coarsened to interval %g)", g.Interval)
		}
	}
	return Guarantee{Accountant: KindPLD, Epsilon: g.Epsilon, Delta: g.Delta, Steps: a.Steps(), Optimistic: g.Optimistic,
		Interval: g.Interval, Detail: detail, Proven: true}
}

// EpsilonFor returns the certified upper bound on ε for δ ∈ (0, 1) and the
// optimistic estimate: the PLD bound (the fast path's, or the tilted
// path's when the fast path's numerics dominate it and it is smaller:
// pld_accountant_tilt.go), or the RDP bound of the same history when that
// is smaller (pld_rdp.go; Bound and Detail say which). An empty accountant
// gives ε = 0.
func (a *PLDAccountant) EpsilonFor(delta float64) (Guarantee, error) {
	if !(delta > 0 && delta < 1) {
		return Guarantee{}, fmt.Errorf("pld accountant: δ must be in (0, 1), got %v", delta)
	}
	p, err := a.Composed()
	if err != nil {
		return Guarantee{}, err
	}
	if p == nil {
		return Guarantee{Accountant: KindPLD, Delta: delta, Interval: a.interval, Detail: "nothing composed", Proven: true}, nil
	}
	g, err := p.Epsilon(delta)
	if err != nil {
		return Guarantee{}, fmt.Errorf("pld accountant: %w", err)
	}
	g, detail, err := a.tightenEpsilon(p, g, delta)
	if err != nil {
		return Guarantee{}, err
	}
	return a.tighterRDP(a.guarantee(g, detail), delta, 0), nil
}

// DeltaFor returns the certified upper bound on δ at ε (finite, ≥ 0) and
// the optimistic estimate: min(PLD, RDP) as EpsilonFor. An empty
// accountant gives δ = 0.
func (a *PLDAccountant) DeltaFor(eps float64) (Guarantee, error) {
	if !(eps >= 0) || math.IsInf(eps, 0) {
		return Guarantee{}, fmt.Errorf("pld accountant: ε must be finite and ≥ 0, got %v", eps)
	}
	p, err := a.Composed()
	if err != nil {
		return Guarantee{}, err
	}
	if p == nil {
		return Guarantee{Accountant: KindPLD, Epsilon: eps, Interval: a.interval, Detail: "nothing composed", Proven: true}, nil
	}
	g, err := p.Delta(eps)
	if err != nil {
		return Guarantee{}, fmt.Errorf("pld accountant: %w", err)
	}
	g, detail, err := a.tightenDelta(p, g, eps)
	if err != nil {
		return Guarantee{}, err
	}
	return a.tighterRDP(a.guarantee(g, detail), 0, eps), nil
}

// MaxSteps returns the largest n ≤ limit such that n more runs of m keep
// EpsilonFor(delta) ≤ target. It composes the history with m^(2^k) greedily
// from the highest power down (O(log limit) convolutions of the upper
// estimate only), then confirms n with the canonical composition that
// EpsilonFor would use, lowering n until it fits.
func (a *PLDAccountant) MaxSteps(m Mechanism, target, delta float64, limit int) (int, error) {
	if !(target >= 0) || math.IsNaN(target) {
		return 0, fmt.Errorf("pld accountant: target ε must be ≥ 0, got %v", target)
	}
	if limit < 1 {
		return 0, nil
	}
	mkey, err := specKey(m.Spec())
	if err != nil {
		return 0, fmt.Errorf("pld accountant: %w", err)
	}
	key := fmt.Sprintf("%s|%v|%v", mkey, math.Float64bits(target), math.Float64bits(delta))
	if c := a.maxSteps; c != nil && c.key == key && c.version == a.version && (!c.capped || c.n >= limit) {
		return min(c.n, limit), nil
	}
	n, err := a.maxStepsCompute(m, target, delta, limit)
	if err == nil {
		a.maxSteps = &maxStepsAnswer{key: key, version: a.version, n: n, capped: n == limit}
	}
	return n, err
}

func (a *PLDAccountant) maxStepsCompute(m Mechanism, target, delta float64, limit int) (int, error) {
	work := a.cloneP()
	idx, err := work.lookup(m)
	if err != nil {
		return 0, err
	}
	prior, err := a.Composed()
	if err != nil {
		return 0, err
	}
	if prior != nil {
		prior = prior.upperOnly()
	}
	// Powers m^(2^k) up to limit, stopping once a power alone exceeds the
	// target (more steps cannot fit: ε grows with every composition).
	mb, err := work.baseOf(work.mechs[idx])
	if err != nil {
		return 0, err
	}
	powers := []*PLD{mb.upperOnly()}
	for 1<<len(powers) <= limit {
		last := powers[len(powers)-1]
		if g, err := last.Epsilon(delta); err != nil {
			return 0, err
		} else if g.Epsilon > target {
			break
		}
		sq, err := last.Compose(last)
		if err != nil {
			return 0, err
		}
		powers = append(powers, sq)
	}
	n := 0
	acc := prior
	for k := len(powers) - 1; k >= 0; k-- {
		if n+1<<k > limit {
			continue
		}
		cand := powers[k]
		if acc != nil {
			if cand, err = acc.Compose(powers[k]); err != nil {
				return 0, err
			}
		}
		g, err := cand.Epsilon(delta)
		if err != nil {
			return 0, err
		}
		if g.Epsilon <= target {
			acc, n = cand, n+1<<k
		}
	}
	// The RDP bound of the same history may allow more steps (at small δ,
	// where the PLD bound's round-off term swamps δ): EpsilonFor reports
	// min(PLD, RDP), so n may start from the RDP accountant's answer.
	fromRDP := false
	if r := a.rdpShadow(); r != nil {
		if nr, err := (&RDPAccounting{Acc: r}).MaxSteps(m, target, delta, limit); err == nil && nr > n {
			n, fromRDP = nr, true
		}
	}
	// Confirm with the canonical composition (bit-for-bit what the
	// accountant will report after these steps).
	start := n
	for n > 0 {
		ok, c, err := a.stepsFit(m, n, target, delta)
		if err != nil {
			return 0, err
		}
		if ok {
			if fromRDP && n == start && n < limit {
				// The reported bound (the tilted PLD path at small δ)
				// may allow more than RDP: search upward.
				return a.maxStepsUpward(m, target, delta, limit, n, c)
			}
			a.verified = &verifiedPLD{key: c.historyKey(), pld: c.cache}
			return n, nil
		}
		n--
	}
	return 0, nil
}

// stepsFit reports whether n more runs of m keep the reported ε at delta
// within target, with the accountant that composed them.
func (a *PLDAccountant) stepsFit(m Mechanism, n int, target, delta float64) (bool, *PLDAccountant, error) {
	c := a.cloneP()
	if a.tiltBases == nil {
		a.tiltBases = map[string]*PLD{}
	}
	c.tiltBases = a.tiltBases // the probes share the tilted bases
	if err := c.Compose(m, n); err != nil {
		return false, nil, err
	}
	g, err := c.EpsilonFor(delta)
	if err != nil {
		return false, nil, err
	}
	return g.Epsilon <= target, c, nil
}

// maxStepsUpward returns the largest n ≤ limit whose runs fit, given that
// lo runs fit (c composed them): steps growing from lo/32, then bisection
// (ε is non-decreasing in the number of steps).
func (a *PLDAccountant) maxStepsUpward(m Mechanism, target, delta float64, limit, lo int, c *PLDAccountant) (int, error) {
	best := c
	step := max(1, lo/32)
	hi := limit + 1
	for lo < limit {
		k := min(limit, lo+step)
		ok, ck, err := a.stepsFit(m, k, target, delta)
		if err != nil {
			return 0, err
		}
		if !ok {
			hi = k
			break
		}
		lo, best, step = k, ck, 2*step
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		ok, ck, err := a.stepsFit(m, mid, target, delta)
		if err != nil {
			return 0, err
		}
		if ok {
			lo, best = mid, ck
		} else {
			hi = mid
		}
	}
	a.verified = &verifiedPLD{key: best.historyKey(), pld: best.cache}
	return lo, nil
}

// upperOnly returns p without its optimistic estimate (cheaper to compose).
func (p *PLD) upperOnly() *PLD {
	out := &PLD{interval: p.interval}
	out.dirs[0] = &pldDirection{upper: p.dirs[0].upper}
	if p.Symmetric() {
		out.dirs[1] = out.dirs[0]
	} else {
		out.dirs[1] = &pldDirection{upper: p.dirs[1].upper}
	}
	return out
}

// cloneP copies the accountant (the discretized PLDs are immutable and shared).
func (a *PLDAccountant) cloneP() *PLDAccountant {
	b := &PLDAccountant{interval: a.interval, index: make(map[string]int, len(a.index)),
		history: append([]historyEntry(nil), a.history...), cache: a.cache, version: a.version, maxSteps: a.maxSteps, verified: a.verified,
		prefix: append([]*PLD(nil), a.prefix...), prefixCount: append([]int64(nil), a.prefixCount...), upperOnly: a.upperOnly, shared: a.shared, rdpFailed: a.rdpFailed,
		tree: a.tree}
	if a.rdp != nil {
		b.rdp = a.rdp.Clone()
	}
	for _, c := range a.mechs {
		cc := *c
		b.mechs = append(b.mechs, &cc)
	}
	for k, v := range a.index {
		b.index[k] = v
	}
	return b
}

// CloneAccountant returns an independent copy.
func (a *PLDAccountant) CloneAccountant() Accountant { return a.cloneP() }

// pldAccountantJSON is the serialized state (version 1).
type pldAccountantJSON struct {
	Version    int                `json:"version"`
	Interval   JSONFloat          `json:"interval"`
	Mechanisms []pldMechanismJSON `json:"mechanisms"`
	History    []historyJSON      `json:"history"`
}

type pldMechanismJSON struct {
	Spec  Spec  `json:"spec"`
	Count int64 `json:"count"`
}

// MarshalJSON writes {"accountant": "pld", "state": {version, interval,
// mechanisms (spec, count), history}}.
func (a *PLDAccountant) MarshalJSON() ([]byte, error) {
	st := pldAccountantJSON{Version: 1, Interval: JSONFloat(a.interval), History: make([]historyJSON, len(a.history))}
	for _, c := range a.mechs {
		st.Mechanisms = append(st.Mechanisms, pldMechanismJSON{Spec: c.spec, Count: c.count})
	}
	for i, h := range a.history {
		st.History[i] = historyJSON{Mechanism: h.mech, Count: h.count}
	}
	data, err := json.Marshal(st)
	if err != nil {
		return nil, err
	}
	return json.Marshal(accountingJSON{Accountant: KindPLD, State: data})
}

// UnmarshalJSON restores an accountant written by MarshalJSON (the wrapper
// or the bare state): every mechanism is rebuilt with FromSpec and
// re-discretized, the counts must agree with the history.
func (a *PLDAccountant) UnmarshalJSON(data []byte) error {
	var w accountingJSON
	if err := json.Unmarshal(data, &w); err == nil && w.Accountant != "" {
		if w.Accountant != KindPLD {
			return fmt.Errorf("pld accountant json: accountant is %q", w.Accountant)
		}
		data = w.State
	}
	var in pldAccountantJSON
	if err := json.Unmarshal(data, &in); err != nil {
		return fmt.Errorf("pld accountant json: %w", err)
	}
	if in.Version != 1 {
		return fmt.Errorf("pld accountant json: unsupported version %d", in.Version)
	}
	b, err := NewPLDAccountant(float64(in.Interval))
	if err != nil {
		return fmt.Errorf("pld accountant json: %w", err)
	}
	for i, mj := range in.Mechanisms {
		m, err := FromSpec(mj.Spec)
		if err != nil {
			return fmt.Errorf("pld accountant json: mechanism #%d: %w", i, err)
		}
		idx, err := b.lookup(m)
		if err != nil {
			return fmt.Errorf("pld accountant json: mechanism #%d: %w", i, err)
		}
		if idx != i {
			return fmt.Errorf("pld accountant json: mechanism #%d duplicates an earlier one", i)
		}
	}
	want := make([]int64, len(in.Mechanisms))
	for i, mj := range in.Mechanisms {
		want[i] = mj.Count
	}
	hist, err := replayHistory("pld accountant json", in.History, want, func(i int, c int64) { b.mechs[i].count = c })
	if err != nil {
		return err
	}
	b.history = hist
	*a = *b
	return nil
}

// String summarizes the accountant.
func (a *PLDAccountant) String() string {
	kinds := make([]string, len(a.mechs))
	for i, c := range a.mechs {
		kinds[i] = fmt.Sprintf("%s×%d", c.spec.Kind, c.count)
	}
	return fmt.Sprintf("PLDAccountant{interval %g, %d steps: %s}", a.interval, a.Steps(), strings.Join(kinds, ", "))
}
