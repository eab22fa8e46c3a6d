package privacy

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/privtrain/privtrain/internal/registry"
)

// AccountantConfig configures an accountant made by name (NewAccountant) or
// restored (LoadAccountant). Each accountant reads the fields it applies to
// and refuses the options of another accountant that would change a number
// (the PLD accountant: conversion mironov, allow-unproven, orders; the RDP
// one: an interval).
type AccountantConfig struct {
	// Conversion is the RDP → (ε, δ) conversion of the RDP accountant (""
	// means DefaultConversion); on load, the conversion of a bare RDP
	// history (the format before the PLD accountant).
	Conversion Conversion
	// Orders (RDP) is the grid of Rényi orders; nil means DefaultOrders.
	Orders []float64
	// AllowUnproven (RDP) accepts bounds used outside their proven
	// conditions (AccountantOptions.AllowUnproven).
	AllowUnproven bool
	// Interval (PLD) is the discretization interval; 0 means
	// DefaultPLDInterval.
	Interval float64
	// UpperOnly says the caller reads only certified upper bounds (the PLD
	// accountant then skips its optimistic estimates, which leaves every
	// certified number bit for bit the same).
	UpperOnly bool
	// Cache, if not nil, shares work between the accountants made or
	// loaded with it (the PLD accountant's discretized mechanism PLDs).
	Cache *PLDCache
}

// AccountantDef is a registered accountant.
type AccountantDef struct {
	// New returns an empty accountant configured by cfg (required).
	New func(cfg AccountantConfig) (Accountant, error)
	// Load restores an accountant from the JSON its MarshalJSON wrote
	// ({"accountant": name, ...}), configured by cfg (required).
	Load func(data []byte, cfg AccountantConfig) (Accountant, error)
	// Accepts fails, saying why, when the accountant cannot account m; nil
	// means every valid mechanism. CheckAccountant uses it.
	Accepts func(m Mechanism) error
	// Summary is one line for help texts.
	Summary string
}

var accountants = registry.New[AccountantDef]("privacy", "accountant")

// RegisterAccountant makes an accountant available by name to
// NewAccountant, LoadAccountant and everything built on them (`trainer
// train --accountant NAME`, `trainer account --accountant NAME`, the PDP
// ledger, CalibrateSigma), as Register does for mechanisms: call it from an
// init function. Its MarshalJSON must write {"accountant": name, ...}. It
// panics if name is empty or taken, or New or Load is nil.
//
// An accountant's EpsilonFor and DeltaFor are trusted as certified bounds:
// its doc comment must state the theorem they rest on and its validity
// conditions, and its methods must check them.
func RegisterAccountant(name string, def AccountantDef) {
	if def.New == nil || def.Load == nil {
		panic("privacy: RegisterAccountant " + name + " without New or Load")
	}
	accountants.Register(name, def)
}

// AccountantNames lists the registered accountants in lexical order.
func AccountantNames() []string { return accountants.Names() }

// lookupAccountant returns the definition registered under name.
func lookupAccountant(name string) (AccountantDef, error) {
	def, ok := accountants.Lookup(name)
	if !ok {
		return AccountantDef{}, fmt.Errorf("unknown accountant %q (registered: %s)", name, strings.Join(AccountantNames(), ", "))
	}
	return def, nil
}

// CheckAccountantName fails unless name is a registered accountant.
func CheckAccountantName(name string) error {
	_, err := lookupAccountant(name)
	return err
}

// NewAccountant returns an empty accountant of the registered name.
func NewAccountant(name string, cfg AccountantConfig) (Accountant, error) {
	def, err := lookupAccountant(name)
	if err != nil {
		return nil, err
	}
	a, err := def.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("accountant %s: %w", name, err)
	}
	return a, nil
}

// LoadAccountant restores an accountant written by any registered
// accountant's MarshalJSON, with the registered Load of the name it
// records. A bare RDPAccountant JSON (no "accountant" field: the format
// before the PLD accountant existed) is read as the RDP accountant with
// conversion cfg.Conversion.
func LoadAccountant(data []byte, cfg AccountantConfig) (Accountant, error) {
	var w struct {
		Accountant string `json:"accountant"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, fmt.Errorf("accountant json: %w", err)
	}
	name := w.Accountant
	if name == "" {
		name = KindRDP
	}
	def, err := lookupAccountant(name)
	if err != nil {
		return nil, fmt.Errorf("accountant json: %w", err)
	}
	return def.Load(data, cfg)
}

// DefaultAccountant is the accountant ChooseAccountant picks for m under
// the default configuration: the PLD accountant where the mechanism has a
// proven privacy loss distribution that a PLD grid represents (HasPLD:
// certified and tighter in the usual regime), the RDP accountant
// otherwise.
func DefaultAccountant(m Mechanism) string {
	if m == nil {
		return KindRDP
	}
	name, _ := ChooseAccountant(AccountantConfig{}, m)
	return name
}

// CheckAccountant fails unless name is registered and can account m.
func CheckAccountant(name string, m Mechanism) error {
	def, err := lookupAccountant(name)
	if err != nil {
		return err
	}
	if def.Accepts != nil {
		if err := def.Accepts(m); err != nil {
			return fmt.Errorf("accountant %s: %w", name, err)
		}
	}
	return nil
}

// specString names m for messages: its kind, with the inner kind of a
// wrapper.
func specString(m Mechanism) string {
	if m == nil {
		return "<nil>"
	}
	s := m.Spec()
	if s.Inner != nil {
		return s.Kind + "(" + s.Inner.Kind + ")"
	}
	return s.Kind
}

// EpsilonSoFar is the ε a training loop reports after each step, at δ:
// the accountant's EpsilonFor, or, for an accountant with a cached
// per-step bound (the PLD accountant's EpsilonBound), that certified bound
// composed after g.Steps ≥ Steps() runs, capped at limit when limit ≥
// Steps() (0: none). ahead reports that g is such a bound on a longer
// prefix (g.Steps ≥ Steps()); otherwise g covers exactly the steps so far.
func EpsilonSoFar(a Accountant, delta float64, limit int) (g Guarantee, ahead bool, err error) {
	if b, ok := a.(interface {
		EpsilonBound(delta float64, limit int) (Guarantee, error)
	}); ok {
		g, err = b.EpsilonBound(delta, limit)
		return g, true, err
	}
	g, err = a.EpsilonFor(delta)
	return g, false, err
}

// ReportsAhead reports whether EpsilonSoFar on a answers with bounds composed
// ahead of the steps so far (g.Steps ≥ Steps(): the PLD accountant).
func ReportsAhead(a Accountant) bool {
	_, ok := a.(interface {
		EpsilonBound(delta float64, limit int) (Guarantee, error)
	})
	return ok
}

// The built-in accountants register themselves like any other.
func init() {
	RegisterAccountant(KindRDP, AccountantDef{
		New: func(cfg AccountantConfig) (Accountant, error) {
			if cfg.Interval != 0 {
				return nil, errors.New("a pld interval is an option of the PLD accountant; the rdp accountant would ignore it (use accountant pld)")
			}
			if err := cfg.Conversion.OrDefault().Validate(); err != nil {
				return nil, err
			}
			a, err := NewRDPAccountantWithOptions(cfg.Orders, AccountantOptions{AllowUnproven: cfg.AllowUnproven})
			if err != nil {
				return nil, err
			}
			return &RDPAccounting{Acc: a, Conversion: cfg.Conversion}, nil
		},
		Load:    loadRDP,
		Summary: "Rényi DP (Mironov 2017), composed on a grid of orders and converted to (ε, δ)",
	})
	RegisterAccountant(KindPLD, AccountantDef{
		New: func(cfg AccountantConfig) (Accountant, error) {
			if err := pldOptions(cfg); err != nil {
				return nil, err
			}
			a, err := NewPLDAccountant(cfg.Interval)
			if err != nil {
				return nil, err
			}
			a.configure(cfg)
			return a, nil
		},
		Load: func(data []byte, cfg AccountantConfig) (Accountant, error) {
			p := &PLDAccountant{}
			if err := json.Unmarshal(data, p); err != nil {
				return nil, err
			}
			p.configure(cfg)
			return p, nil
		},
		Accepts: func(m Mechanism) error {
			if !HasPLD(m) {
				return fmt.Errorf("the mechanism %s has no proven privacy loss distribution", specString(m))
			}
			return nil
		},
		Summary: "privacy loss distributions (certified connect-the-dots upper bound, ZDW22), or the RDP bound of the same history when smaller",
	})
}

// pldOptions refuses the RDP options for the PLD accountant.
func pldOptions(cfg AccountantConfig) error {
	if cfg.Conversion == ConversionMironov || cfg.AllowUnproven || cfg.Orders != nil {
		return errors.New("conversion mironov, allow-unproven and orders are options of the RDP accountant; the pld accountant would ignore them (use accountant rdp)")
	}
	return nil
}

// configure applies the sharing options of cfg.
func (a *PLDAccountant) configure(cfg AccountantConfig) {
	if cfg.Cache != nil {
		a.ShareCache(cfg.Cache)
	}
	if cfg.UpperOnly {
		a.DropOptimistic()
	}
}
