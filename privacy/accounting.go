package privacy

import (
	"encoding/json"
	"fmt"
	"math"
)

// The built-in accountants' names (see RegisterAccountant).
const (
	KindRDP = "rdp"
	KindPLD = "pld"
)

// Accountant is the one interface of every privacy accountant: the RDP one
// (RDPAccounting, around RDPAccountant), the PLD one (PLDAccountant) and any
// registered with RegisterAccountant. Training, the CLI and the experiments
// use only this interface; each reported number says which accountant
// produced it (Guarantee.Accountant).
type Accountant interface {
	// Kind is the name the accountant is registered under.
	Kind() string
	// Compose records count ≥ 1 runs of m; it fails, leaving the accountant
	// unchanged, when m cannot be accounted (e.g. no PLD for a PLD
	// accountant).
	Compose(m Mechanism, count int) error
	// Steps is the number of composed runs.
	Steps() int
	// History lists the compositions in order.
	History() []Composition
	// EpsilonFor is the (certified) ε for δ; DeltaFor the δ for ε.
	EpsilonFor(delta float64) (Guarantee, error)
	DeltaFor(eps float64) (Guarantee, error)
	// MaxSteps is the largest n ≤ limit such that composing n more runs of
	// m keeps EpsilonFor(delta) ≤ target (0 when even one does not fit).
	// The accountant is not modified.
	MaxSteps(m Mechanism, target, delta float64, limit int) (int, error)
	// CloneAccountant returns an independent copy.
	CloneAccountant() Accountant
	// MarshalJSON writes {"accountant": Kind(), "state": ...} (plus any
	// other fields the accountant needs); LoadAccountant reads it back
	// through the registered Load.
	json.Marshaler
}

// Guarantee is an (ε, δ)-DP statement and where it comes from.
type Guarantee struct {
	// Accountant is KindRDP or KindPLD.
	Accountant string  `json:"accountant"`
	Epsilon    float64 `json:"epsilon"`
	Delta      float64 `json:"delta"`
	Steps      int     `json:"steps"`
	// Optimistic (PLD only) is the queried quantity from the optimistic
	// estimate on the same grid; NaN for RDP.
	Optimistic float64 `json:"optimistic"`
	// Interval (PLD only) is the discretization interval; 0 for RDP.
	Interval float64 `json:"interval,omitempty"`
	// Detail names the conversion and order (RDP) or the worse direction (PLD).
	Detail string `json:"detail"`
	// Proven is false when an unproven RDP bound was allowed and used.
	Proven bool `json:"proven"`
	// Bound (PLD accountant only) is the bound reported: BoundPLD, or
	// BoundRDP when the RDP bound of the same history was smaller.
	Bound string `json:"bound,omitempty"`
	// RDP accountant only (not in the JSON): the order attaining ε and the
	// conversion (see also BoundsUsed).
	Order      float64    `json:"-"`
	Conversion Conversion `json:"-"`
}

// OptimisticBiasLimit is the largest Steps × Interval at which a
// Guarantee's Optimistic estimate is worth reporting. The optimistic
// discretization rounds each composed step's privacy loss down by up to one
// interval h, so after n steps the estimate can sit up to n·h below the
// truth (docs/pld-evidence.md §8: 2.27 where the truth is 7.27 at 10⁵ steps
// and h = 1e-4). The certified Epsilon has no such drift.
const OptimisticBiasLimit = 0.1

// OptimisticOmitted says why Optimistic should not be reported ("" when it
// may): Steps × Interval exceeds OptimisticBiasLimit. Summaries and
// human-readable output apply it; raw accountant queries keep the number
// beside the reason.
func (g Guarantee) OptimisticOmitted() string {
	return OptimisticOmitted(g.Steps, g.Interval)
}

// OptimisticOmitted is Guarantee.OptimisticOmitted for n steps at
// discretization interval h.
func OptimisticOmitted(n int, h float64) string {
	if bias := float64(n) * h; bias > OptimisticBiasLimit {
		return fmt.Sprintf("%d steps × interval %g can bias it low by %.3g", n, h, bias)
	}
	return ""
}

// MarshalJSON writes non-finite numbers as strings.
func (g Guarantee) MarshalJSON() ([]byte, error) {
	type plain Guarantee
	return json.Marshal(struct {
		plain
		Epsilon    JSONFloat `json:"epsilon"`
		Delta      JSONFloat `json:"delta"`
		Optimistic JSONFloat `json:"optimistic"`
	}{plain(g), JSONFloat(g.Epsilon), JSONFloat(g.Delta), JSONFloat(g.Optimistic)})
}

// RDPAccounting is the RDP accountant (RDPAccountant) with its RDP →
// (ε, δ) conversion, as an Accountant (registered as KindRDP).
type RDPAccounting struct {
	Acc        *RDPAccountant
	Conversion Conversion // "" means DefaultConversion
}

// NewRDPAccounting returns an empty RDP accountant on DefaultOrders.
func NewRDPAccounting(c Conversion, opt AccountantOptions) (*RDPAccounting, error) {
	a, err := NewRDPAccountantWithOptions(nil, opt)
	if err != nil {
		return nil, err
	}
	return &RDPAccounting{Acc: a, Conversion: c}, nil
}

func (r *RDPAccounting) conv() Conversion { return r.Conversion.OrDefault() }

// Kind is KindRDP.
func (r *RDPAccounting) Kind() string { return KindRDP }

// Compose composes m's RDP curve.
func (r *RDPAccounting) Compose(m Mechanism, count int) error { return r.Acc.Compose(m, count) }

// Steps is the number of composed runs.
func (r *RDPAccounting) Steps() int { return r.Acc.Steps() }

// History lists the compositions.
func (r *RDPAccounting) History() []Composition { return r.Acc.History() }

func (r *RDPAccounting) guarantee(e EpsilonResult) Guarantee {
	return Guarantee{Accountant: KindRDP, Epsilon: e.Epsilon, Delta: e.Delta, Steps: e.Steps, Optimistic: math.NaN(),
		Detail: rdpDetail(e), Proven: e.Proven,
		Order: e.Order, Conversion: e.Conversion}
}

// rdpDetail names the conversion and the order it used; an infinite
// bound has no best order, so none is named.
func rdpDetail(e EpsilonResult) string {
	if math.IsNaN(e.Order) {
		return fmt.Sprintf("rdp %s conversion (no order gives a finite bound)", e.Conversion)
	}
	return fmt.Sprintf("rdp %s conversion at order %v", e.Conversion, e.Order)
}

// EpsilonFor is RDPAccountant.Epsilon with the conversion.
func (r *RDPAccounting) EpsilonFor(delta float64) (Guarantee, error) {
	e, err := r.Acc.Epsilon(delta, r.conv())
	if err != nil {
		return Guarantee{}, err
	}
	return r.guarantee(e), nil
}

// DeltaFor is RDPAccountant.Delta with the conversion.
func (r *RDPAccounting) DeltaFor(eps float64) (Guarantee, error) {
	e, err := r.Acc.Delta(eps, r.conv())
	if err != nil {
		return Guarantee{}, err
	}
	return r.guarantee(e), nil
}

// RDPComposer is the optional capability of an accountant that composes
// Rényi DP curves on a grid of orders and converts them (the RDP
// accountant): the options of AccountantConfig that configure an RDP
// curve (Orders, Conversion, AllowUnproven) and the RDP subsampling bound
// of a mechanism (PoissonSubsampled.Bound) apply to it, and its
// Guarantee reports the order and conversion. Callers assert this
// interface, never a concrete accountant type.
type RDPComposer interface {
	Accountant
	// UnprovenBounds names, in order of first use, the bounds that gave a
	// finite RDP value outside their proven conditions (only with
	// AllowUnproven; then Guarantee.Proven is false).
	UnprovenBounds() []string
}

// UnprovenBounds names the bounds of the composed curves used outside
// their proven conditions.
func (r *RDPAccounting) UnprovenBounds() []string { return r.Acc.unproven() }

// BoundsUsed lists, for an accountant that composes RDP curves (the RDP
// accountant), the distinct bound names of the composed curves over all
// orders and those at the given order (Guarantee.Order); nil, nil for
// other accountants.
func BoundsUsed(a Accountant, order float64) (all, atOrder []string) {
	if r, ok := a.(*RDPAccounting); ok {
		return r.Acc.boundsUsed(order)
	}
	return nil, nil
}

// boundsUsed is BoundsUsed on the RDP accountant.
func (a *RDPAccountant) boundsUsed(order float64) (all, atOrder []string) {
	seenAll, seenAt := map[string]bool{}, map[string]bool{}
	for _, c := range a.mechs {
		for i, v := range c.rdp {
			if !seenAll[v.Bound] {
				seenAll[v.Bound] = true
				all = append(all, v.Bound)
			}
			if a.orders[i] == order && !seenAt[v.Bound] {
				seenAt[v.Bound] = true
				atOrder = append(atOrder, v.Bound)
			}
		}
	}
	return all, atOrder
}

// MaxSteps bisects on the (cheap) composed RDP curve.
func (r *RDPAccounting) MaxSteps(m Mechanism, target, delta float64, limit int) (int, error) {
	return maxStepsBisect(func(k int) (bool, error) {
		a := r.Acc.Clone()
		if err := a.Compose(m, k); err != nil {
			return false, err
		}
		e, err := a.Epsilon(delta, r.conv())
		return e.Epsilon <= target, err
	}, limit)
}

// CloneAccountant copies the accountant.
func (r *RDPAccounting) CloneAccountant() Accountant {
	return &RDPAccounting{Acc: r.Acc.Clone(), Conversion: r.Conversion}
}

// accountingJSON wraps an accountant's JSON with its kind.
type accountingJSON struct {
	Accountant string          `json:"accountant"`
	Conversion Conversion      `json:"conversion,omitempty"`
	State      json.RawMessage `json:"state"`
}

// MarshalJSON writes {"accountant": "rdp", "conversion": ..., "state": <RDPAccountant JSON>}.
func (r *RDPAccounting) MarshalJSON() ([]byte, error) {
	st, err := json.Marshal(r.Acc)
	if err != nil {
		return nil, err
	}
	return json.Marshal(accountingJSON{Accountant: KindRDP, Conversion: r.conv(), State: st})
}

// loadRDP restores an RDPAccounting: the wrapped form, or a bare
// RDPAccountant JSON (the format before the PLD accountant existed) with
// conversion cfg.Conversion.
func loadRDP(data []byte, cfg AccountantConfig) (Accountant, error) {
	var w accountingJSON
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, fmt.Errorf("accountant json: %w", err)
	}
	if w.Accountant == "" {
		a := &RDPAccountant{}
		if err := json.Unmarshal(data, a); err != nil {
			return nil, err
		}
		return &RDPAccounting{Acc: a, Conversion: cfg.Conversion}, nil
	}
	a := &RDPAccountant{}
	if err := json.Unmarshal(w.State, a); err != nil {
		return nil, err
	}
	if err := w.Conversion.Validate(); err != nil {
		return nil, fmt.Errorf("accountant json: %w", err)
	}
	return &RDPAccounting{Acc: a, Conversion: w.Conversion}, nil
}

// maxStepsBisect finds the largest k ≤ limit with fits(k), assuming fits is
// monotone (true then false), by doubling and bisection.
func maxStepsBisect(fits func(int) (bool, error), limit int) (int, error) {
	if limit < 1 {
		return 0, nil
	}
	if ok, err := fits(1); err != nil || !ok {
		return 0, err
	}
	lo, hi := 1, 2
	for {
		if hi > limit {
			hi = limit + 1
			break
		}
		ok, err := fits(hi)
		if err != nil {
			return 0, err
		}
		if !ok {
			break
		}
		lo, hi = hi, hi*2
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		ok, err := fits(mid)
		if err != nil {
			return 0, err
		}
		if ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, nil
}
