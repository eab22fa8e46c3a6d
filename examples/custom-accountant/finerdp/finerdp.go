// Package finerdp is a privacy accountant defined outside privtrain and
// registered with privacy.RegisterAccountant: Rényi DP on a fine grid of
// orders. Importing it makes the name "rdp-fine" available wherever an
// accountant is chosen by name (privacy.NewAccountant, LoadAccountant,
// CalibrateSigma, the PDP ledger, runner.TrainConfig.Accountant).
//
// The bound. RDP values add up under composition (Mironov 2017,
// Proposition 1), and an (α, r)-RDP mechanism is (ε, δ)-DP with
// ε = r + log((α−1)/α) − (log δ + log α)/(α−1) for every α > 1 (Balle,
// Barthe, Gaboardi, Hsu & Sato 2020, Theorem 21: privacy.ConversionBBG), so
// the minimum over any set of orders is a valid ε. Orders holds 400 orders
// from 1.01 to 10⁴, geometrically spaced (privacy.DefaultOrders has 61, as
// Opacus): the minimum is never far above the minimum over all α > 1. Each
// mechanism's RDP curve is privtrain's (privacy.Mechanism.RDP, whose doc
// comments state each bound and its conditions; unproven bounds are
// refused), composed by privacy.RDPAccountant.
package finerdp

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/privtrain/privtrain/privacy"
)

// Name is the registered name.
const Name = "rdp-fine"

// Orders is the grid: 400 orders from 1.01 to 10⁴, geometrically spaced.
func Orders() []float64 {
	const n, lo, hi = 400, 1.01, 1e4
	out := make([]float64, n)
	for i := range out {
		out[i] = lo * math.Pow(hi/lo, float64(i)/(n-1))
	}
	return out
}

func init() {
	privacy.RegisterAccountant(Name, privacy.AccountantDef{
		New:     func(cfg privacy.AccountantConfig) (privacy.Accountant, error) { return New(cfg) },
		Load:    Load,
		Summary: "Rényi DP on 400 orders in [1.01, 10⁴] with the BBG conversion (example module)",
	})
}

// Accountant is the fine-grid RDP accountant.
type Accountant struct {
	acc *privacy.RDPAccountant
}

// New returns an empty accountant; it refuses configuration it does not
// use (another conversion, orders, an interval, unproven bounds).
func New(cfg privacy.AccountantConfig) (*Accountant, error) {
	if cfg.Conversion.OrDefault() != privacy.ConversionBBG || cfg.Orders != nil || cfg.Interval != 0 || cfg.AllowUnproven {
		return nil, errors.New("rdp-fine takes no conversion, orders, interval or allow-unproven (it is RDP on its own grid with the BBG conversion)")
	}
	a, err := privacy.NewRDPAccountant(Orders())
	if err != nil {
		return nil, err
	}
	return &Accountant{acc: a}, nil
}

// Kind is Name.
func (a *Accountant) Kind() string { return Name }

// Compose composes m's RDP curve on the grid.
func (a *Accountant) Compose(m privacy.Mechanism, count int) error { return a.acc.Compose(m, count) }

// Steps is the number of composed runs.
func (a *Accountant) Steps() int { return a.acc.Steps() }

// History lists the compositions.
func (a *Accountant) History() []privacy.Composition { return a.acc.History() }

func guarantee(r privacy.EpsilonResult) privacy.Guarantee {
	return privacy.Guarantee{Accountant: Name, Epsilon: r.Epsilon, Delta: r.Delta, Steps: r.Steps, Optimistic: math.NaN(),
		Detail: fmt.Sprintf("rdp on 400 orders, %s conversion at order %.4g", r.Conversion, r.Order), Proven: r.Proven,
		Order: r.Order, Conversion: r.Conversion}
}

// EpsilonFor is the smallest ε over the grid for δ.
func (a *Accountant) EpsilonFor(delta float64) (privacy.Guarantee, error) {
	r, err := a.acc.Epsilon(delta, privacy.ConversionBBG)
	return guarantee(r), err
}

// DeltaFor is the smallest δ over the grid for ε.
func (a *Accountant) DeltaFor(eps float64) (privacy.Guarantee, error) {
	r, err := a.acc.Delta(eps, privacy.ConversionBBG)
	return guarantee(r), err
}

// MaxSteps is the largest n ≤ limit with EpsilonFor(delta) ≤ target after n
// more runs of m (ε grows with n): doubling, then bisection, on copies.
func (a *Accountant) MaxSteps(m privacy.Mechanism, target, delta float64, limit int) (int, error) {
	fits := func(n int) (bool, error) {
		c := a.acc.Clone()
		if err := c.Compose(m, n); err != nil {
			return false, err
		}
		r, err := c.Epsilon(delta, privacy.ConversionBBG)
		return r.Epsilon <= target, err
	}
	if limit < 1 {
		return 0, nil
	}
	lo, hi := 0, 1 // fits(lo) (0: trivially), hi unknown
	for {
		ok, err := fits(hi)
		if err != nil {
			return 0, err
		}
		if !ok {
			break
		}
		if lo = hi; hi == limit {
			return limit, nil
		}
		hi = min(2*hi, limit)
	}
	for hi-lo > 1 { // fits(lo), !fits(hi)
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

// CloneAccountant returns an independent copy.
func (a *Accountant) CloneAccountant() privacy.Accountant { return &Accountant{acc: a.acc.Clone()} }

type wire struct {
	Accountant string          `json:"accountant"`
	State      json.RawMessage `json:"state"`
}

// MarshalJSON writes {"accountant": "rdp-fine", "state": <RDPAccountant JSON>}.
func (a *Accountant) MarshalJSON() ([]byte, error) {
	st, err := json.Marshal(a.acc)
	if err != nil {
		return nil, err
	}
	return json.Marshal(wire{Accountant: Name, State: st})
}

// Load restores an accountant written by MarshalJSON: the RDP history is
// recomputed and checked (privacy.RDPAccountant.UnmarshalJSON) and must be
// on this grid.
func Load(data []byte, cfg privacy.AccountantConfig) (privacy.Accountant, error) {
	var w wire
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, fmt.Errorf("rdp-fine json: %w", err)
	}
	if w.Accountant != Name {
		return nil, fmt.Errorf("rdp-fine json: accountant %q", w.Accountant)
	}
	a := &privacy.RDPAccountant{}
	if err := json.Unmarshal(w.State, a); err != nil {
		return nil, fmt.Errorf("rdp-fine json: %w", err)
	}
	// The grid (to a relative 1e-12: math.Pow may round differently on
	// another CPU; the stored orders are kept).
	want, got := Orders(), a.Orders()
	if len(got) != len(want) {
		return nil, errors.New("rdp-fine json: the history is not on the rdp-fine grid")
	}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12*want[i] {
			return nil, errors.New("rdp-fine json: the history is not on the rdp-fine grid")
		}
	}
	return &Accountant{acc: a}, nil
}
