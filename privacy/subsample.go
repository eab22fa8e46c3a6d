package privacy

import (
	"errors"
	"fmt"
	"strconv"
)

// SubsampleBound selects which amplification bound PoissonSubsampled uses.
type SubsampleBound string

const (
	// SubsampleAuto uses, at every order, the tightest bound proven there: the
	// mechanism-specific bound when its conditions hold (MTZ19 for Gaussian,
	// the smaller of Theorem 4.4 and ZW19 for PTR), else the ZW19 black-box
	// bound, which is always valid. The empty string means SubsampleAuto.
	SubsampleAuto SubsampleBound = "auto"
	// SubsampleWhiteBox uses the mechanism-specific bound (MTZ19 for
	// Gaussian, Theorem 4.4 for PTR). Outside its conditions RDP fails,
	// unless AllowUnproven is set: then the value is computed anyway and
	// marked Valid = false with bound "ptr-whitebox-thm4.4-unproven".
	SubsampleWhiteBox SubsampleBound = "whitebox"
	// SubsampleBlackBox uses the general upper bound of Zhu & Wang (2019,
	// Theorem 6) applied to the base mechanism's RDP curve.
	SubsampleBlackBox SubsampleBound = "blackbox"
	// SubsampleLower is the lower bound of Zhu & Wang (2019). It is not a
	// privacy guarantee: values are always marked Valid = false.
	SubsampleLower SubsampleBound = "lower"
)

// Validate rejects unknown bound names ("" is SubsampleAuto).
func (b SubsampleBound) Validate() error {
	switch b {
	case "", SubsampleAuto, SubsampleWhiteBox, SubsampleBlackBox, SubsampleLower:
		return nil
	}
	return fmt.Errorf("unknown subsampling bound %q (want %q, %q, %q or %q)", string(b), SubsampleAuto, SubsampleWhiteBox, SubsampleBlackBox, SubsampleLower)
}

func (b SubsampleBound) orAuto() SubsampleBound {
	if b == "" {
		return SubsampleAuto
	}
	return b
}

// PoissonSubsampled is Base run on a Poisson subsample of the data: every
// record enters independently with probability Q. Neighbouring datasets
// differ by adding or removing one record.
//
// The RDP bound at each order depends on Base and Bound:
//
//   - Q = 0: ε(α) = 0 ("poisson-subsampled-q0"); Q = 1: Base's own curve.
//   - Gaussian base: MTZ19 via SubsampledGaussian (Mironov, Talwar & Zhang
//     2019; exact, valid for all α) for auto and whitebox; ZW19 for blackbox
//     and lower.
//   - PTR base: Theorem 4.4 of Wang et al. (NeurIPS 2022, full version in
//     appendix A.2; see WhiteBoxConditions) where its conditions hold; the
//     ZW19 black-box bound of Theorem 4.3's curve otherwise (auto) or an
//     error (whitebox, unless AllowUnproven).
//   - Any other base: ZW19 (whitebox is an error: no mechanism-specific bound).
//
// RDPValue.Bound names the bound used at that order and RDPValue.Valid is
// false only for the lower bound, for an unproven white-box value, or when
// the base curve itself was not proven.
type PoissonSubsampled struct {
	Base          Mechanism
	Q             float64        // sampling probability, in [0, 1]
	Bound         SubsampleBound // "" means SubsampleAuto
	AllowUnproven bool           // allow the white-box bound outside its conditions
}

// Validate checks the base mechanism, 0 ≤ Q ≤ 1 and the bound name.
func (m PoissonSubsampled) Validate() error {
	if m.Base == nil {
		return errors.New("poisson-subsampled mechanism: base mechanism is nil")
	}
	if err := m.Base.Validate(); err != nil {
		return fmt.Errorf("poisson-subsampled mechanism: base: %w", err)
	}
	if !(m.Q >= 0 && m.Q <= 1) {
		return fmt.Errorf("poisson-subsampled mechanism: sampling rate q must be in [0, 1], got %v", m.Q)
	}
	if err := m.Bound.Validate(); err != nil {
		return fmt.Errorf("poisson-subsampled mechanism: %w", err)
	}
	return nil
}

// RDP returns the subsampled mechanism's RDP at order alpha with the bound
// chosen as described on PoissonSubsampled.
func (m PoissonSubsampled) RDP(alpha float64) (RDPValue, error) {
	if err := checkOrder(alpha); err != nil {
		return RDPValue{}, err
	}
	if err := m.Validate(); err != nil {
		return RDPValue{}, err
	}
	v, err := m.rdp(alpha)
	if err != nil {
		return RDPValue{}, fmt.Errorf("poisson-subsampled %s (q=%v, bound %s) at α=%v: %w", m.Base.Spec().Kind, m.Q, m.Bound.orAuto(), alpha, err)
	}
	return v, nil
}

func (m PoissonSubsampled) rdp(alpha float64) (RDPValue, error) {
	bound := m.Bound.orAuto()
	switch {
	case m.Q == 0:
		return RDPValue{Epsilon: 0, Bound: boundPoissonSubsampledQ0, Valid: bound != SubsampleLower}, nil
	case m.Q == 1:
		v, err := m.Base.RDP(alpha)
		if err != nil {
			return RDPValue{}, err
		}
		if bound == SubsampleLower {
			v.Valid = false
		}
		return v, nil
	case bound == SubsampleLower:
		return zw19Lower(m.Base, m.Q, alpha)
	case bound == SubsampleBlackBox:
		return zw19Upper(m.Base, m.Q, alpha)
	}
	switch b := m.Base.(type) {
	case Gaussian:
		return SubsampledGaussian{Q: m.Q, Sigma: b.Sigma}.RDP(alpha)
	case PTR:
		return m.ptr(b, alpha)
	}
	if bound == SubsampleWhiteBox {
		return RDPValue{}, fmt.Errorf("no white-box subsampling bound for base kind %q (use %q or %q)", m.Base.Spec().Kind, SubsampleBlackBox, SubsampleAuto)
	}
	return zw19Upper(m.Base, m.Q, alpha)
}

// ptr dispatches the PTR base between Theorem 4.4 and ZW19.
func (m PoissonSubsampled) ptr(p PTR, alpha float64) (RDPValue, error) {
	cond := WhiteBoxConditions(m.Q, p, alpha)
	var ce *WhiteBoxConditionError
	if cond != nil && !errors.As(cond, &ce) {
		return RDPValue{}, cond
	}
	if m.Bound.orAuto() == SubsampleWhiteBox {
		if cond == nil {
			return RDPValue{Epsilon: ptrWhiteBoxRDP(m.Q, p, alpha), Bound: boundPTRWhiteBox, Valid: true}, nil
		}
		if !m.AllowUnproven {
			return RDPValue{}, fmt.Errorf("%w (the white-box bound is unproven here: use bound %q or %q, or allow unproven bounds explicitly)", cond, SubsampleAuto, SubsampleBlackBox)
		}
		return RDPValue{Epsilon: ptrWhiteBoxRDP(m.Q, p, alpha), Bound: boundPTRWhiteBoxUnproven, Valid: false}, nil
	}
	// Auto: the smaller of the proven bounds.
	bb, err := zw19Upper(p, m.Q, alpha)
	if err != nil {
		return RDPValue{}, err
	}
	if cond == nil {
		if wb := ptrWhiteBoxRDP(m.Q, p, alpha); wb <= bb.Epsilon {
			return RDPValue{Epsilon: wb, Bound: boundPTRWhiteBox, Valid: true}, nil
		}
	}
	return bb, nil
}

// Spec describes the mechanism: kind "poisson-subsampled", parameter q, the
// base as Inner and options bound and allow_unproven.
func (m PoissonSubsampled) Spec() Spec {
	s := Spec{
		Kind:    "poisson-subsampled",
		Params:  map[string]float64{"q": m.Q},
		Options: map[string]string{"bound": string(m.Bound.orAuto()), "allow_unproven": strconv.FormatBool(m.AllowUnproven)},
	}
	if m.Base != nil {
		inner := m.Base.Spec()
		s.Inner = &inner
	}
	return s
}

// poissonSubsampledFromSpec rebuilds a PoissonSubsampled from its Spec;
// inner turns the Inner spec into the base mechanism (the registry's
// FromSpec).
func poissonSubsampledFromSpec(s Spec, inner func(Spec) (Mechanism, error)) (Mechanism, error) {
	if s.Kind != "poisson-subsampled" {
		return nil, fmt.Errorf("poisson-subsampled spec: wrong kind %q", s.Kind)
	}
	if s.Inner == nil {
		return nil, errors.New("poisson-subsampled spec: missing inner (base) mechanism")
	}
	q, ok := s.Params["q"]
	if !ok {
		return nil, errors.New("poisson-subsampled spec: missing parameter q")
	}
	for k := range s.Params {
		if k != "q" {
			return nil, fmt.Errorf("poisson-subsampled spec: unknown parameter %q", k)
		}
	}
	m := PoissonSubsampled{Q: q}
	for k, v := range s.Options {
		switch k {
		case "bound":
			m.Bound = SubsampleBound(v)
		case "allow_unproven":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return nil, fmt.Errorf("poisson-subsampled spec: option allow_unproven: %w", err)
			}
			m.AllowUnproven = b
		default:
			return nil, fmt.Errorf("poisson-subsampled spec: unknown option %q", k)
		}
	}
	base, err := inner(*s.Inner)
	if err != nil {
		return nil, fmt.Errorf("poisson-subsampled spec: inner: %w", err)
	}
	m.Base = base
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return m, nil
}
