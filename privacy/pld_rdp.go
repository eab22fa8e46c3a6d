package privacy

import (
	"fmt"
	"math"
)

// The PLD accountant's answers are min(PLD, RDP): both are certified upper
// bounds for the same history, so their minimum is one too. The PLD bound
// is the tighter one in the usual regime and, through the tilted path
// (pld_tilt.go), at small δ too; it can exceed the RDP bound at a coarse
// interval or for mechanisms whose tails the grid cuts short. The RDP bound is that of the RDP accountant's defaults
// (DefaultOrders, ConversionBBG: Balle, Barthe, Gaboardi, Hsu & Sato 2020,
// Theorem 21), composed from the same history with proven RDP curves only;
// a mechanism without one leaves the PLD bound alone. Guarantee.Bound and
// Detail say which bound was reported.

// Bound names of Guarantee.Bound for the PLD accountant.
const (
	BoundPLD = "pld"
	BoundRDP = "rdp"
)

// rdpShadow returns the RDP accountant of the history (built on first use,
// then composed along with the PLD accountant), or nil when some mechanism
// has no proven RDP curve on DefaultOrders.
func (a *PLDAccountant) rdpShadow() *RDPAccountant {
	if a.rdpFailed {
		return nil
	}
	if a.rdp != nil {
		return a.rdp
	}
	r, err := NewRDPAccountant(nil)
	if err != nil {
		a.rdpFailed = true
		return nil
	}
	for _, h := range a.history {
		if err := r.Compose(a.mechs[h.mech].mech, int(h.count)); err != nil {
			a.rdpFailed = true
			return nil
		}
	}
	a.rdp = r
	return r
}

// composeShadow keeps the RDP shadow (when built) in step with Compose.
func (a *PLDAccountant) composeShadow(m Mechanism, count int) {
	if a.rdp == nil {
		return
	}
	if err := a.rdp.Compose(m, count); err != nil {
		a.rdp, a.rdpFailed = nil, true
	}
}

// tighterRDP returns g, or the RDP bound for the same query when that is
// smaller (for δ > 0: ε at δ; else δ at eps), with Bound and Detail saying
// which bound is reported.
func (a *PLDAccountant) tighterRDP(g Guarantee, delta, eps float64) Guarantee {
	g.Bound = BoundPLD
	r := a.rdpShadow()
	if r == nil {
		return g
	}
	var e EpsilonResult
	var err error
	if delta > 0 {
		e, err = r.Epsilon(delta, ConversionBBG)
	} else if eps > 0 {
		e, err = r.Delta(eps, ConversionBBG)
	} else {
		return g
	}
	if err != nil || !e.Proven {
		return g
	}
	switch {
	case delta > 0 && e.Epsilon < g.Epsilon && !math.IsNaN(e.Epsilon):
		g.Detail = fmt.Sprintf("rdp %s conversion at order %v on DefaultOrders (tighter than the pld bound ε = %.6g: %s)", e.Conversion, e.Order, g.Epsilon, g.Detail)
		g.Epsilon, g.Bound = e.Epsilon, BoundRDP
	case delta == 0 && e.Delta < g.Delta && !math.IsNaN(e.Delta):
		g.Detail = fmt.Sprintf("rdp %s conversion at order %v on DefaultOrders (tighter than the pld bound δ = %.6g: %s)", e.Conversion, e.Order, g.Delta, g.Detail)
		g.Delta, g.Bound = e.Delta, BoundRDP
	}
	return g
}
