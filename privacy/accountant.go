package privacy

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
)

// AccountantOptions configures an Accountant.
type AccountantOptions struct {
	// AllowUnproven lets Compose accept mechanisms whose RDP curve has a
	// finite value outside its bound's proven conditions (RDPValue.Valid
	// false). Results then report Proven = false and list those bounds.
	AllowUnproven bool
}

// RDPAccountant composes the RDP curves of a sequence of mechanisms (any mix of
// kinds and parameters, each with a count) on a fixed grid of orders, by the
// composition theorem of RDP (Mironov 2017, Proposition 1: RDP values add up
// at every order), and converts the total into (ε, δ)-DP.
//
// The RDP curve of each distinct mechanism (by Spec) is computed once and
// cached, so composing a mechanism seen before costs O(1), and a query costs
// O(#distinct mechanisms × #orders). Totals are computed as
// Σ count·rdp over the distinct mechanisms in order of first use, a pure
// function of the history: an accountant restored from its JSON answers
// bit-for-bit what the original would, also after further steps.
//
// By default Compose refuses a mechanism that reports, at some order, a
// finite RDP value from a bound used outside its validity conditions
// (RDPValue.Valid false); +Inf values are always accepted (they are trivially
// true and never selected by a conversion). See AccountantOptions.
//
// An RDPAccountant is not safe for concurrent use.
type RDPAccountant struct {
	orders        []float64
	allowUnproven bool
	mechs         []*composed
	index         map[string]int
	history       []historyEntry
}

// composed is one distinct mechanism and its cached curve.
type composed struct {
	spec  Spec
	rdp   []RDPValue
	count int64
}

// historyEntry is one run of consecutive compositions of a mechanism.
type historyEntry struct {
	mech  int
	count int64
}

// NewAccountant returns an empty accountant on the given orders (each finite
// and > 1; nil or empty means DefaultOrders) that refuses unproven bounds.
func NewRDPAccountant(orders []float64) (*RDPAccountant, error) {
	return NewRDPAccountantWithOptions(orders, AccountantOptions{})
}

// NewRDPAccountantWithOptions is NewAccountant with options.
func NewRDPAccountantWithOptions(orders []float64, opt AccountantOptions) (*RDPAccountant, error) {
	if len(orders) == 0 {
		orders = DefaultOrders()
	}
	if err := checkOrders(orders); err != nil {
		return nil, fmt.Errorf("new accountant: %w", err)
	}
	return &RDPAccountant{
		orders:        append([]float64(nil), orders...),
		allowUnproven: opt.AllowUnproven,
		index:         map[string]int{},
	}, nil
}

// Orders returns a copy of the accountant's orders.
func (a *RDPAccountant) Orders() []float64 { return append([]float64(nil), a.orders...) }

// AllowUnproven reports whether the accountant accepts unproven bounds.
func (a *RDPAccountant) AllowUnproven() bool { return a.allowUnproven }

// specKey is the canonical identity of a mechanism: its Spec as JSON (map
// keys sorted, floats in shortest round-trip form).
func specKey(s Spec) (string, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return "", fmt.Errorf("mechanism spec %q cannot be encoded: %w", s.Kind, err)
	}
	return string(b), nil
}

// curve evaluates m on the orders and checks every value.
func curve(m Mechanism, orders []float64, allowUnproven bool) ([]RDPValue, error) {
	kind := m.Spec().Kind
	out := make([]RDPValue, len(orders))
	for i, alpha := range orders {
		v, err := m.RDP(alpha)
		if err != nil {
			return nil, fmt.Errorf("mechanism %s at α=%v: %w", kind, alpha, err)
		}
		if math.IsNaN(v.Epsilon) || v.Epsilon < 0 {
			return nil, fmt.Errorf("mechanism %s at α=%v: invalid RDP value %v (bound %q)", kind, alpha, v.Epsilon, v.Bound)
		}
		if !v.Valid && !math.IsInf(v.Epsilon, 1) && !allowUnproven {
			return nil, fmt.Errorf("mechanism %s at α=%v: bound %q is not proven under these parameters; refusing it (allow unproven bounds explicitly to use it)", kind, alpha, v.Bound)
		}
		out[i] = v
	}
	return out, nil
}

// Compose records count ≥ 1 consecutive runs of mechanism m. It validates m,
// computes its RDP curve on the accountant's orders the first time its Spec
// is seen (later calls reuse the cache) and fails, leaving the accountant
// unchanged, if the mechanism is invalid, any RDP value is an error, NaN or
// negative, or a finite value is unproven while unproven bounds are not
// allowed.
func (a *RDPAccountant) Compose(m Mechanism, count int) error {
	if m == nil {
		return errors.New("accountant: nil mechanism")
	}
	if count < 1 {
		return fmt.Errorf("accountant: count must be ≥ 1, got %d", count)
	}
	if err := m.Validate(); err != nil {
		return fmt.Errorf("accountant: %w", err)
	}
	key, err := specKey(m.Spec())
	if err != nil {
		return fmt.Errorf("accountant: %w", err)
	}
	idx, ok := a.index[key]
	if !ok {
		rdp, err := curve(m, a.orders, a.allowUnproven)
		if err != nil {
			return fmt.Errorf("accountant: %w", err)
		}
		idx = len(a.mechs)
		a.mechs = append(a.mechs, &composed{spec: m.Spec(), rdp: rdp})
		a.index[key] = idx
	}
	a.mechs[idx].count += int64(count)
	if n := len(a.history); n > 0 && a.history[n-1].mech == idx {
		a.history[n-1].count += int64(count)
	} else {
		a.history = append(a.history, historyEntry{mech: idx, count: int64(count)})
	}
	return nil
}

// Steps returns the total number of composed mechanism runs.
func (a *RDPAccountant) Steps() int {
	var n int64
	for _, c := range a.mechs {
		n += c.count
	}
	return int(n)
}

// RDP returns the composed RDP curve, one value per order.
func (a *RDPAccountant) RDP() []float64 {
	total := make([]float64, len(a.orders))
	for _, c := range a.mechs {
		n := float64(c.count)
		for i, v := range c.rdp {
			total[i] += n * v.Epsilon
		}
	}
	return total
}

// Composition is one run of consecutive compositions of a mechanism.
type Composition struct {
	Spec  Spec `json:"spec"`
	Count int  `json:"count"`
}

// History returns the compositions in order; consecutive compositions of
// the same mechanism are merged.
func (a *RDPAccountant) History() []Composition {
	out := make([]Composition, len(a.history))
	for i, h := range a.history {
		out[i] = Composition{Spec: a.mechs[h.mech].spec, Count: int(h.count)}
	}
	return out
}

// MechanismCurve is the cached RDP curve of one distinct composed mechanism.
type MechanismCurve struct {
	Spec  Spec
	Count int        // total number of compositions
	RDP   []RDPValue // per order: value, bound used, validity
}

// Mechanisms returns the distinct composed mechanisms in order of first use,
// with their per-order RDP values and bounds.
func (a *RDPAccountant) Mechanisms() []MechanismCurve {
	out := make([]MechanismCurve, len(a.mechs))
	for i, c := range a.mechs {
		out[i] = MechanismCurve{Spec: c.spec, Count: int(c.count), RDP: append([]RDPValue(nil), c.rdp...)}
	}
	return out
}

// unproven lists, sorted by first use, the distinct bound names that gave an
// unproven finite value in a composed mechanism's curve.
func (a *RDPAccountant) unproven() []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range a.mechs {
		for _, v := range c.rdp {
			if !v.Valid && !math.IsInf(v.Epsilon, 1) && !seen[v.Bound] {
				seen[v.Bound] = true
				out = append(out, v.Bound)
			}
		}
	}
	return out
}

// EpsilonResult is an (ε, δ)-DP guarantee of the composition.
type EpsilonResult struct {
	Epsilon    float64    `json:"epsilon"`
	Delta      float64    `json:"delta"`
	Order      float64    `json:"order"` // the optimal order; 0 when nothing was composed, NaN when no order gives a finite value
	Conversion Conversion `json:"conversion"`
	Steps      int        `json:"steps"`
	// Proven is false when some composed RDP value came from a bound used
	// outside its proven conditions (only with AllowUnproven); Unproven
	// names those bounds.
	Proven   bool     `json:"proven"`
	Unproven []string `json:"unproven,omitempty"`
}

// MarshalJSON writes non-finite numbers as strings ("+Inf", "NaN").
func (r EpsilonResult) MarshalJSON() ([]byte, error) {
	type plain EpsilonResult
	return json.Marshal(struct {
		plain
		Epsilon JSONFloat `json:"epsilon"`
		Delta   JSONFloat `json:"delta"`
		Order   JSONFloat `json:"order"`
	}{plain(r), JSONFloat(r.Epsilon), JSONFloat(r.Delta), JSONFloat(r.Order)})
}

func (a *RDPAccountant) result() EpsilonResult {
	u := a.unproven()
	return EpsilonResult{Steps: a.Steps(), Proven: len(u) == 0, Unproven: u}
}

// Epsilon returns the smallest ε over the orders such that the composition
// is (ε, delta)-DP under conversion c, with the order attaining it. An
// empty accountant is (0, δ)-DP.
func (a *RDPAccountant) Epsilon(delta float64, c Conversion) (EpsilonResult, error) {
	r := a.result()
	r.Delta, r.Conversion = delta, c
	if err := c.Validate(); err != nil {
		return EpsilonResult{}, fmt.Errorf("accountant: %w", err)
	}
	if !(delta > 0 && delta < 1) {
		return EpsilonResult{}, fmt.Errorf("accountant: δ must be in (0, 1), got %v", delta)
	}
	if r.Steps == 0 {
		return r, nil
	}
	eps, order, err := EpsilonFromRDP(a.orders, a.RDP(), delta, c)
	if err != nil {
		return EpsilonResult{}, fmt.Errorf("accountant: %w", err)
	}
	r.Epsilon, r.Order = eps, order
	return r, nil
}

// Delta returns the smallest δ over the orders such that the composition is
// (eps, δ)-DP under conversion c (eps finite and > 0), with the order
// attaining it. An empty accountant gives δ = 0.
func (a *RDPAccountant) Delta(eps float64, c Conversion) (EpsilonResult, error) {
	r := a.result()
	r.Epsilon, r.Conversion = eps, c
	if err := c.Validate(); err != nil {
		return EpsilonResult{}, fmt.Errorf("accountant: %w", err)
	}
	if !(eps > 0) || math.IsInf(eps, 0) {
		return EpsilonResult{}, fmt.Errorf("accountant: ε must be finite and > 0, got %v", eps)
	}
	if r.Steps == 0 {
		return r, nil
	}
	delta, order, err := DeltaFromRDP(a.orders, a.RDP(), eps, c)
	if err != nil {
		return EpsilonResult{}, fmt.Errorf("accountant: %w", err)
	}
	r.Delta, r.Order = delta, order
	return r, nil
}

// Clone returns an independent copy of the accountant (cache included).
func (a *RDPAccountant) Clone() *RDPAccountant {
	b := &RDPAccountant{
		orders:        append([]float64(nil), a.orders...),
		allowUnproven: a.allowUnproven,
		mechs:         make([]*composed, len(a.mechs)),
		index:         make(map[string]int, len(a.index)),
		history:       append([]historyEntry(nil), a.history...),
	}
	for i, c := range a.mechs {
		cc := *c
		cc.rdp = append([]RDPValue(nil), c.rdp...)
		b.mechs[i] = &cc
	}
	for k, v := range a.index {
		b.index[k] = v
	}
	return b
}

// accountantJSON is the serialized form of an RDPAccountant (version 1).
type accountantJSON struct {
	Version       int             `json:"version"`
	Orders        []JSONFloat     `json:"orders"`
	AllowUnproven bool            `json:"allow_unproven"`
	Mechanisms    []mechanismJSON `json:"mechanisms"`
	History       []historyJSON   `json:"history"`
}

type mechanismJSON struct {
	Spec  Spec        `json:"spec"`
	Count int64       `json:"count"`
	RDP   []JSONFloat `json:"rdp"`
	Bound []string    `json:"bound"`
	Valid []bool      `json:"valid"`
}

type historyJSON struct {
	Mechanism int   `json:"mechanism"`
	Count     int64 `json:"count"`
}

// replayHistory checks a serialized history against the per-mechanism
// counts it must sum to (want, one per distinct mechanism), records each
// mechanism's count with set and returns the history; what names the
// format in errors.
func replayHistory(what string, in []historyJSON, want []int64, set func(i int, count int64)) ([]historyEntry, error) {
	got := make([]int64, len(want))
	hist := make([]historyEntry, 0, len(in))
	for i, h := range in {
		if h.Mechanism < 0 || h.Mechanism >= len(want) || h.Count < 1 {
			return nil, fmt.Errorf("%s: history #%d: invalid entry (mechanism %d, count %d)", what, i, h.Mechanism, h.Count)
		}
		got[h.Mechanism] += h.Count
		hist = append(hist, historyEntry{mech: h.Mechanism, count: h.Count})
	}
	for i := range want {
		if got[i] != want[i] {
			return nil, fmt.Errorf("%s: mechanism #%d: count %d but history sums to %d", what, i, want[i], got[i])
		}
		set(i, got[i])
	}
	return hist, nil
}

// MarshalJSON writes the full history: orders, the allow-unproven option,
// each distinct mechanism's Spec, total count and cached RDP curve (values,
// bounds, validity), and the ordered list of compositions.
func (a *RDPAccountant) MarshalJSON() ([]byte, error) {
	out := accountantJSON{
		Version:       1,
		Orders:        make([]JSONFloat, len(a.orders)),
		AllowUnproven: a.allowUnproven,
		Mechanisms:    make([]mechanismJSON, len(a.mechs)),
		History:       make([]historyJSON, len(a.history)),
	}
	for i, o := range a.orders {
		out.Orders[i] = JSONFloat(o)
	}
	for i, c := range a.mechs {
		m := mechanismJSON{Spec: c.spec, Count: c.count,
			RDP: make([]JSONFloat, len(c.rdp)), Bound: make([]string, len(c.rdp)), Valid: make([]bool, len(c.rdp))}
		for j, v := range c.rdp {
			m.RDP[j], m.Bound[j], m.Valid[j] = JSONFloat(v.Epsilon), v.Bound, v.Valid
		}
		out.Mechanisms[i] = m
	}
	for i, h := range a.history {
		out.History[i] = historyJSON{Mechanism: h.mech, Count: h.count}
	}
	return json.Marshal(out)
}

// loadTolerance is the relative difference allowed between a stored RDP
// value and its recomputation on load (different CPUs may round the last
// bits differently); the stored values are kept, so a resumed run continues
// exactly.
const loadTolerance = 1e-9

// UnmarshalJSON restores an accountant written by MarshalJSON. Every
// mechanism is rebuilt with FromSpec and its curve recomputed; the load
// fails unless the stored values, bounds and validity agree with the
// recomputation (values to a relative 1e-9), the counts agree with the
// history, and unproven bounds appear only if allow_unproven is set.
func (a *RDPAccountant) UnmarshalJSON(data []byte) error {
	var in accountantJSON
	if err := json.Unmarshal(data, &in); err != nil {
		return fmt.Errorf("accountant json: %w", err)
	}
	if in.Version != 1 {
		return fmt.Errorf("accountant json: unsupported version %d", in.Version)
	}
	orders := make([]float64, len(in.Orders))
	for i, o := range in.Orders {
		orders[i] = float64(o)
	}
	b, err := NewRDPAccountantWithOptions(orders, AccountantOptions{AllowUnproven: in.AllowUnproven})
	if err != nil {
		return fmt.Errorf("accountant json: %w", err)
	}
	if len(orders) == 0 {
		return errors.New("accountant json: no orders")
	}
	for i, mj := range in.Mechanisms {
		if len(mj.RDP) != len(orders) || len(mj.Bound) != len(orders) || len(mj.Valid) != len(orders) {
			return fmt.Errorf("accountant json: mechanism #%d: curve length differs from %d orders", i, len(orders))
		}
		m, err := FromSpec(mj.Spec)
		if err != nil {
			return fmt.Errorf("accountant json: mechanism #%d: %w", i, err)
		}
		rdp, err := curve(m, orders, in.AllowUnproven)
		if err != nil {
			return fmt.Errorf("accountant json: mechanism #%d: %w", i, err)
		}
		for j, v := range rdp {
			s := float64(mj.RDP[j])
			same := s == v.Epsilon || math.Abs(s-v.Epsilon) <= loadTolerance*math.Abs(v.Epsilon)
			if !same || mj.Bound[j] != v.Bound || mj.Valid[j] != v.Valid {
				return fmt.Errorf("accountant json: mechanism #%d (%s) at α=%v: stored (%v, %q, valid=%v) but recomputed (%v, %q, valid=%v)",
					i, mj.Spec.Kind, orders[j], s, mj.Bound[j], mj.Valid[j], v.Epsilon, v.Bound, v.Valid)
			}
			rdp[j].Epsilon = s
		}
		key, err := specKey(m.Spec())
		if err != nil {
			return fmt.Errorf("accountant json: mechanism #%d: %w", i, err)
		}
		if _, dup := b.index[key]; dup {
			return fmt.Errorf("accountant json: mechanism #%d duplicates an earlier one", i)
		}
		b.index[key] = i
		b.mechs = append(b.mechs, &composed{spec: m.Spec(), rdp: rdp})
	}
	want := make([]int64, len(in.Mechanisms))
	for i, mj := range in.Mechanisms {
		want[i] = mj.Count
	}
	hist, err := replayHistory("accountant json", in.History, want, func(i int, c int64) { b.mechs[i].count = c })
	if err != nil {
		return err
	}
	b.history = hist
	*a = *b
	return nil
}

// String summarizes the accountant (orders, steps, distinct mechanisms).
func (a *RDPAccountant) String() string {
	kinds := make([]string, len(a.mechs))
	for i, c := range a.mechs {
		kinds[i] = fmt.Sprintf("%s×%d", c.spec.Kind, c.count)
	}
	return fmt.Sprintf("RDPAccountant{%d orders, %d steps: %s}", len(a.orders), a.Steps(), strings.Join(kinds, ", "))
}
