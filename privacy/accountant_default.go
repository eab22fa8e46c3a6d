package privacy

import (
	"fmt"
	"strings"
)

// ChooseAccountant is the one rule that picks the accountant when none is
// named, for a history of mechanisms ms under the configuration cfg, and
// says why:
//
//   - the RDP accountant when cfg sets an option only it takes (Orders, a
//     Conversion, AllowUnproven) or a mechanism asks for an RDP
//     subsampling bound other than auto (PoissonSubsampled.Bound: the PLD
//     of the subsampled pair is exact and has no such choice);
//   - else the PLD accountant when every mechanism has a proven privacy
//     loss distribution (HasPLD) whose one-step losses a grid of the
//     configured interval holds;
//   - else the RDP accountant, with the first mechanism that has no PLD
//     or whose losses no grid represents (σ or b so small that the losses
//     leave the grid: ErrPLDRange). Its bound is then the RDP bound,
//     possibly +Inf, never a PLD bound from lost masses.
//
// With no mechanism it answers the PLD accountant (the default of a
// history still to come, as for the subsampled Gaussian of DP-SGD).
func ChooseAccountant(cfg AccountantConfig, ms ...Mechanism) (name, reason string) {
	var opts []string
	if cfg.Orders != nil {
		opts = append(opts, "orders")
	}
	if cfg.Conversion != "" {
		opts = append(opts, "conversion "+string(cfg.Conversion))
	}
	if cfg.AllowUnproven {
		opts = append(opts, "allow-unproven")
	}
	for _, m := range ms {
		if s, ok := m.(PoissonSubsampled); ok && s.Bound != "" && s.Bound != SubsampleAuto {
			opts = append(opts, "subsampling bound "+string(s.Bound))
			break
		}
	}
	if len(opts) > 0 {
		return KindRDP, "options of the rdp accountant given (" + strings.Join(opts, ", ") + ")"
	}
	h := cfg.Interval
	if h == 0 {
		h = DefaultPLDInterval
	}
	for _, m := range ms {
		if err := pldRepresents(m, h); err != nil {
			return KindRDP, fmt.Sprintf("pld cannot account %s (%v); rdp used", specString(m), err)
		}
	}
	if len(ms) == 1 {
		return KindPLD, fmt.Sprintf("%s has a proven privacy loss distribution", specString(ms[0]))
	}
	return KindPLD, "every mechanism has a proven privacy loss distribution"
}

// pldRepresents fails, saying why, unless m has a proven privacy loss
// distribution (HasPLD) whose one-step losses a grid of interval h holds
// (checkPLDRange).
func pldRepresents(m Mechanism, h float64) error {
	if m == nil {
		return fmt.Errorf("nil mechanism")
	}
	if err := m.Validate(); err != nil {
		return err
	}
	return checkPLDRange(m, h)
}
