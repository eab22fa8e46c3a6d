package privacy

import (
	"errors"
	"fmt"
	"math"
)

// Privacy loss distributions (PLDs).
//
// A dominating pair (P, Q) of a mechanism for one adjacency direction
// (Zhu, Dong & Wang 2022, "Optimal Accounting of Differential Privacy via
// Characteristic Function", Definition 7) bounds its hockey-stick divergence:
// for every real ε, sup over neighbours H_{e^ε}(M(D) ‖ M(D')) ≤
// H_{e^ε}(P ‖ Q). Its privacy loss is L = log(dP/dQ)(X), X ∼ P, with values in
// ℝ ∪ {+∞}; write μ for its law (the PLD). Then
//
//	δ(ε) = H_{e^ε}(P ‖ Q) = E_μ[f_ε(L)],  f_ε(l) = (1 − e^{ε−l})₊,  f_ε(+∞) = 1,
//
// and the composition of mechanisms (also adaptive, ZDW22 Theorem 10) is
// dominated by the product of their pairs, whose PLD is the convolution of the
// PLDs (Sommer, Meiser & Mohammadi 2019, "Privacy Loss Classes", Theorem 1;
// Meiser & Mohammadi 2018, "Tight on Budget?").
//
// Certified discretization. The accountant never evaluates μ itself but a
// non-negative measure μ̂ on the grid {i·h} ∪ {+∞} with
//
//	E_μ̂[f_e] + s ≥ E_μ[f_e]   for every real e (negative e included),     (★)
//
// s ≥ 0 being a numerical slack that is added to every δ. (★) survives
// convolution: since f_e(a+b) = f_{e−b}(a),
// E_{μ₁∗μ₂}[f_e] = ∫ E_{μ₁}[f_{e−b}] dμ₂(b) ≤ ∫ (E_{μ̂₁}[f_{e−b}] + s₁) dμ₂(b)
// = E_{μ̂₁∗μ₂}[f_e] + s₁ and likewise for the second factor, so μ̂₁∗μ̂₂
// satisfies (★) for μ₁∗μ₂ with slack s₁ + s₂·|μ̂₁|. Hence the composed upper
// estimate bounds the true δ(ε) of the composition for every ε, and ε(δ)
// computed from it is an upper bound as well. The same argument with the
// inequality reversed gives the optimistic (lower) estimate.
//
// Each interval (l_i, l_{i+1}] of the loss axis, of P-mass M and Q-mass W
// (W = E_P[e^{−L}; L ∈ I]), is replaced by masses a at l_i and b at l_{i+1}
// with a + b ≥ M and b·(1 − e^{−h}) ≥ M − e^{l_i}·W, b ≥ 0: then
// a·f_e(l_i) + b·f_e(l_{i+1}) ≥ E_μ[f_e; L ∈ I] for every e (both sides vanish
// for e ≥ l_{i+1}; the left side is linear in y = e^e on [e^{l_i}, e^{l_{i+1}}]
// and the right side convex; at y ≤ e^{l_i} the left side is
// (a+b) − y(a e^{−l_i} + b e^{−l_{i+1}}), which dominates M − yW at y = 0 and
// y = e^{l_i}). The smallest such b is the "connect the dots" split of
// Doroshenko, Ghazi, Kamath, Kumar & Manurangsi (PETS 2022), which keeps
// both the P- and the Q-mass, so the discretization error does not
// accumulate linearly in the number of compositions as rounding every loss
// up does (Meiser & Mohammadi 2018; Koskela et al. 2021). M is inflated and W
// deflated by the relative floating-point error of their evaluation
// (pldRelErr) before the split. The tail (−∞, l_lo] is rounded up to l_lo and
// the tail above l_hi, with mass ≤ pldTailMass, is moved to +∞ (added to δ,
// never dropped).
//
// The optimistic estimate rounds every interval down to its left end point,
// drops the tail below l_lo and rounds the tail above l_hi down to l_hi: it
// satisfies (★) with ≤, so the true δ(ε) lies between the two estimates.
// It drifts by about h/2 per composition: no grid measure does better as a
// lower bound, since masses (a, b) at (l_i, l_{i+1}) below E_μ[f_e; I] for
// e just under l_{i+1} need b·(1 − e^{e−l_{i+1}}) ≤ E[(1 − e^{e−L})₊; I],
// whose right side vanishes faster (for a continuous loss law) — so b = 0.
// The upper estimate's own error is much smaller (docs/pld-evidence.md).
//
// Floating point: FFT convolution errors are charged to s through an a-priori
// bound (see convolve and certConvolve: radix-2 FFT, Higham Thm 24.2); the
// evaluation of Φ, erfc, exp and log is
// assumed accurate to pldRelErr relative, which is a few thousand times
// their documented accuracy.

// DefaultPLDInterval is the default discretization interval h of the loss
// axis (as dp_accounting's default value_discretization_interval).
const DefaultPLDInterval = 1e-4

// pldTailMass is the mass that truncation may move to +∞ (upper estimate) or
// drop (optimistic estimate) at each side of each discretization or
// convolution.
const pldTailMass = 1e-15

// pldMaxPoints bounds the number of grid points of one PLD (2^25 float64s =
// 256 MiB); larger requests fail with an error asking for a larger interval.
const pldMaxPoints = 1 << 25

// pldMaxLoss bounds the magnitude of the privacy losses a PLD represents
// (the loss scale 1/(2σ²) of a Gaussian pair, 1/b of a Laplace pair, and the
// truncation points of bisectTail). Larger losses are refused with
// ErrPLDRange instead of being discretized into NaN masses.
const pldMaxLoss = 1e7

// ErrPLDRange marks a mechanism whose privacy losses no PLD grid here
// represents (σ or b so small that the losses overflow or leave the grid).
// Such inputs are refused: a PLD bound is never reported from masses that
// were lost. The RDP accountant may still bound them.
var ErrPLDRange = errors.New("privacy losses not representable by a PLD (use the RDP accountant)")

// pldRelErr returns the relative error assumed for interval masses at
// interval h: evaluating M as a difference of CDF values over an interval of
// width h loses up to log10(scale/h) digits (scale ≤ ~10 for the loss
// distributions here), on top of a few ulps for erfc/exp.
func pldRelErr(h float64) float64 { return 1e-13 * (1 + 10/h) }

// lossPair is one direction of a dominating pair (P, Q), described through
// its privacy loss L = log(dP/dQ): the masses of intervals of the extended
// loss axis under P and under Q.
//
// Conventions: P has no mass at L = −∞ and Q none at L = +∞ (by definition
// of L); P may have an atom at +∞ (infP) and Q one at −∞ (negInfQ).
type lossPair interface {
	// mass returns P(L ∈ J) and Q(L ∈ J) for the interval J with end points
	// lo ≤ hi (±Inf allowed) that are included when loIn / hiIn; an end
	// point at ±∞ that is included adds the atom there.
	mass(lo float64, loIn bool, hi float64, hiIn bool) (p, q float64)
	// infP is P(L = +∞).
	infP() float64
	// support returns lo ≤ hi with P(lo ≤ L ≤ hi) + infP = 1 and
	// Q(lo ≤ L ≤ hi) + negInfQ = 1; ±Inf when unbounded.
	support() (lo, hi float64)
	// hockeyStick is H_{e^ε}(P ‖ Q) for every real ε, for tests and checks.
	hockeyStick(eps float64) float64
}

// PLDMechanism is a Mechanism whose dominating pairs are known, so that a
// PLD accountant can compose it. Mechanisms without one (PTRDiscrete, RGM) only have
// RDP curves; a PLD accountant refuses them.
type PLDMechanism interface {
	Mechanism
	// lossPairs returns the dominating pairs for the remove direction
	// (D' = D minus one record) and the add direction (D' = D plus one).
	lossPairs() (remove, add lossPair, err error)
	// PLDBound names the theorem behind the dominating pairs.
	PLDBound() string
}

// pmf is a non-negative measure on the grid {(lo+i)·h : i < len(p)} ∪ {+∞}.
type pmf struct {
	lo    int       // grid index of p[0]
	p     []float64 // masses
	inf   float64   // mass at +∞
	slack float64   // numerical slack s of (★), added to δ (upper) or subtracted (lower)
	// trunc is (an estimate of) the part of inf that truncation put there
	// rather than the mechanisms: with slack, what the fast path's
	// numerics cost (the accountant then tries the tilted path).
	trunc float64
}

// total returns the total mass.
func (m pmf) total() float64 {
	s := m.inf
	for _, v := range m.p {
		s += v
	}
	return s
}

// clone returns a deep copy.
func (m pmf) clone() pmf {
	m.p = append([]float64(nil), m.p...)
	return m
}

// deltaSum returns Σ p_i f_ε(l_i) + inf (without slack).
func (m pmf) deltaSum(eps, h float64) float64 {
	s := m.inf
	// First index whose loss exceeds ε.
	start := int(math.Floor(eps/h)) - m.lo
	if start < 0 {
		start = 0
	}
	for i := start; i < len(m.p); i++ {
		l := float64(m.lo+i) * h
		if l > eps {
			s += m.p[i] * -math.Expm1(eps-l)
		}
	}
	return s
}

// epsilonFor returns the smallest ε ≥ 0 with deltaSum(ε) + c ≤ delta, where c
// is the constant to add (slack for the upper estimate, −slack for the lower
// one); +Inf when inf + c ≥ delta.
func (m pmf) epsilonFor(delta, c, h float64) float64 {
	c0 := m.inf + c
	if c0 >= delta {
		return math.Inf(1)
	}
	// Scan the grid from the top. With terms j > k:
	// δ(l_k) = c0 + A − B, A = Σ p_j, B = Σ p_j e^{l_k − l_j}.
	var a, b float64
	eh := math.Exp(-h)
	n := len(m.p)
	for k := n - 1; k >= 0; k-- {
		// Here a, b hold the terms j > k, with b relative to l_k.
		if c0+a-b > delta {
			// ε ∈ (l_k, l_{k+1}]: δ(ε) = c0 + A − e^{ε − l_{k+1}}·B', B' = b/e^{−h}.
			bb := b / eh
			l1 := float64(m.lo+k+1) * h
			return math.Max(0, l1+math.Log((c0+a-delta)/bb))
		}
		a += m.p[k]
		b = (b + m.p[k]) * eh // now relative to l_{k−1}
	}
	// ε ≤ l_0: δ(ε) = c0 + A − e^{ε − l_0}·B0 with every term.
	if c0+a <= delta {
		return 0
	}
	b0 := b / eh
	l0 := float64(m.lo) * h
	return math.Max(0, l0+math.Log((c0+a-delta)/b0))
}

// discretize turns one direction of a dominating pair into the upper (★) and
// optimistic grid measures at interval h.
func discretize(lp lossPair, h float64) (upper, lower pmf, err error) {
	return discretizeTau(lp, h, pldTailMass)
}

// discretizeTau is discretize with the tails beyond P-mass tau truncated
// (the upper tail moved to +∞, the lower one rounded up to the lowest grid
// point): the tilted path (pld_tilt.go) scales tau to the queried δ.
func discretizeTau(lp lossPair, h, tau float64) (upper, lower pmf, err error) {
	if !(h > 0) || math.IsInf(h, 0) {
		return pmf{}, pmf{}, fmt.Errorf("pld: discretization interval must be finite and > 0, got %v", h)
	}
	if pp, ok := lp.(profilePair); ok {
		return discretizeProfile(pp, h, tau)
	}
	tlo, thi, err := truncation(lp, tau)
	if err != nil {
		return pmf{}, pmf{}, err
	}
	i0 := math.Floor(tlo / h)
	i1 := math.Ceil(thi / h)
	if i1-i0+1 > pldMaxPoints || math.IsNaN(i1-i0) {
		return pmf{}, pmf{}, fmt.Errorf("pld: the privacy loss range [%.4g, %.4g] needs more than %d points at interval %g; use a larger interval (%w)", tlo, thi, pldMaxPoints, h, ErrPLDRange)
	}
	lo, n := int(i0), int(i1-i0)+1
	kappa := pldRelErr(h)
	up := make([]float64, n)
	dn := make([]float64, n)
	grid := func(i int) float64 { return float64(lo+i) * h }
	// Lower tail (−∞, l_0]: rounded up to l_0 (upper), dropped (lower).
	if m, _ := lp.mass(math.Inf(-1), true, grid(0), true); m > 0 {
		up[0] += m * (1 + kappa)
	}
	oneMinusEh := -math.Expm1(-h)
	for i := 0; i+1 < n; i++ {
		li := grid(i)
		m, w := lp.mass(li, false, grid(i+1), true)
		if !(m > 0) {
			continue
		}
		mp := m * (1 + kappa)
		wm := w * (1 - kappa)
		b := (mp - math.Exp(li)*wm) / oneMinusEh
		if !(b >= 0) { // also NaN (0·Inf): fall back to rounding up
			b = 0
		}
		if b > mp || math.IsInf(math.Exp(li), 1) {
			b = mp
		}
		up[i] += mp - b
		up[i+1] += b
		dn[i] += m * (1 - kappa)
	}
	tail, _ := lp.mass(grid(n-1), false, math.Inf(1), false)
	upper = pmf{lo: lo, p: up, inf: tail*(1+kappa) + lp.infP(), trunc: tail * (1 + kappa)}
	dn[n-1] += tail * (1 - kappa)
	lower = pmf{lo: lo, p: dn, inf: lp.infP() * (1 - kappa)}
	if err := checkMass(upper); err != nil {
		return pmf{}, pmf{}, err
	}
	return upper, lower, nil
}

// checkMass refuses an upper estimate whose total mass is not finite or
// falls short of 1 by more than pldMassTol: the upper discretization keeps
// every unit of P-mass (inflated by pldRelErr), so a shortfall means the
// masses were lost to overflow or NaN and the bound from them could lie
// below the truth (e.g. ε = 0 for σ → 0).
func checkMass(u pmf) error {
	if t := u.total(); !(t >= 1-pldMassTol) || math.IsInf(t, 0) {
		return fmt.Errorf("pld: the discretized privacy loss has total mass %g (want 1): %w", t, ErrPLDRange)
	}
	return nil
}

// pldMassTol is the shortfall of total mass checkMass tolerates (far above
// the floating-point error of the interval masses, far below any loss of
// mass to overflow).
const pldMassTol = 1e-6

// truncation returns the loss range [tlo, thi] outside which the P-mass is at
// most tau on each side (the support's end points when finite).
func truncation(lp lossPair, tau float64) (tlo, thi float64, err error) {
	slo, shi := lp.support()
	above := func(t float64) float64 { m, _ := lp.mass(t, false, math.Inf(1), false); return m }
	below := func(t float64) float64 { m, _ := lp.mass(math.Inf(-1), true, t, true); return m }
	thi = shi
	if math.IsInf(shi, 1) {
		if thi, err = bisectTail(above, slo, true, tau); err != nil {
			return 0, 0, err
		}
	}
	tlo = slo
	if math.IsInf(slo, -1) {
		if tlo, err = bisectTail(below, thi, false, tau); err != nil {
			return 0, 0, err
		}
	}
	if !(tlo <= thi) {
		return 0, 0, fmt.Errorf("pld: empty loss range [%v, %v]", tlo, thi)
	}
	return tlo, thi, nil
}

// bisectTail finds t where the monotone tail mass tail(t) drops to
// tau: upward (tail decreasing in t) returns t with tail(t) ≤ tau;
// downward (tail increasing) returns t with tail(t) ≤ tau. from is a finite end point of the support or ±Inf.
func bisectTail(tail func(float64) float64, from float64, upward bool, tau float64) (float64, error) {
	sgn := 1.0
	if !upward {
		sgn = -1
	}
	// good: tail ≤ τ; bad: tail > τ.
	good := sgn
	for tail(good) > tau {
		good *= 2
		if math.Abs(good) > pldMaxLoss {
			return 0, fmt.Errorf("pld: privacy loss tail does not decay (no finite truncation point below |L| = %g): %w", pldMaxLoss, ErrPLDRange)
		}
	}
	bad := -sgn
	if !math.IsInf(from, 0) {
		bad = from
	}
	for tail(bad) <= tau {
		if !math.IsInf(from, 0) {
			return bad, nil
		}
		bad *= 2
		if math.Abs(bad) > pldMaxLoss {
			return good, nil
		}
	}
	for i := 0; i < 200 && math.Abs(good-bad) > 1e-9*(1+math.Abs(good)); i++ {
		mid := bad + (good-bad)/2
		if tail(mid) <= tau {
			good = mid
		} else {
			bad = mid
		}
	}
	return good, nil
}
