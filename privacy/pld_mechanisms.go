package privacy

import (
	"errors"
	"fmt"
	"math"
)

// inInterval reports whether x lies in the interval with end points lo, hi
// (included when loIn / hiIn).
func inInterval(x, lo float64, loIn bool, hi float64, hiIn bool) bool {
	return (x > lo || (loIn && x == lo)) && (x < hi || (hiIn && x == hi))
}

// normalMass returns Pr[lo < X < hi] for X ∼ N(m, s²), computed from the
// smaller tail so that it is accurate relative to the result.
func normalMass(lo, hi, m, s float64) float64 {
	if !(lo < hi) {
		return 0
	}
	za, zb := (lo-m)/(s*math.Sqrt2), (hi-m)/(s*math.Sqrt2)
	switch {
	case za >= 0:
		return 0.5 * (math.Erfc(za) - math.Erfc(zb))
	case zb <= 0:
		return 0.5 * (math.Erfc(-zb) - math.Erfc(-za))
	}
	return 1 - 0.5*math.Erfc(-za) - 0.5*math.Erfc(zb)
}

// gaussianPair is the dominating pair P = N(0, σ²), Q = N(1, σ²) of the
// Gaussian mechanism with L2 sensitivity 1, for both directions (ZDW22,
// Definition 7 and the Gaussian example; Balle & Wang 2018): the loss is
// L ∼ N(μ, 2μ) under P and N(−μ, 2μ) under Q, μ = 1/(2σ²).
type gaussianPair struct{ sigma float64 }

func (g gaussianPair) mu() float64 { return 1 / (2 * g.sigma * g.sigma) }

func (g gaussianPair) mass(lo float64, _ bool, hi float64, _ bool) (float64, float64) {
	mu := g.mu()
	s := math.Sqrt(2 * mu)
	return normalMass(lo, hi, mu, s), normalMass(lo, hi, -mu, s)
}

func (gaussianPair) infP() float64 { return 0 }

func (gaussianPair) support() (float64, float64) { return math.Inf(-1), math.Inf(1) }

// hockeyStick is the analytic Gaussian mechanism's δ(ε) (Balle & Wang 2018,
// "Improving the Gaussian Mechanism for Differential Privacy", Theorem 8):
// Φ((μ−ε)/√(2μ)) − e^ε Φ((−μ−ε)/√(2μ)), valid for every real ε.
func (g gaussianPair) hockeyStick(eps float64) float64 {
	mu := g.mu()
	r := 2 * math.Sqrt(mu)
	t1 := 0.5 * math.Erfc((eps-mu)/r)
	t2 := math.Exp(eps + math.Log(0.5) + logErfc((eps+mu)/r))
	return math.Min(1, math.Max(0, t1-t2))
}

// laplacePair is the dominating pair P = Lap(0, b), Q = Lap(1, b) of the
// Laplace mechanism with L1 sensitivity 1, for both directions. With
// ε₀ = 1/b the loss under P has atoms 1/2 at ε₀ and e^{−ε₀}/2 at −ε₀ and
// density e^{(l−ε₀)/2}/4 on (−ε₀, ε₀); under Q the atoms are e^{−ε₀}/2 and 1/2
// and the density e^{−(l+ε₀)/2}/4.
type laplacePair struct{ b float64 }

func (l laplacePair) mass(lo float64, loIn bool, hi float64, hiIn bool) (float64, float64) {
	e0 := 1 / l.b
	var p, q float64
	if inInterval(e0, lo, loIn, hi, hiIn) {
		p += 0.5
		q += 0.5 * math.Exp(-e0)
	}
	if inInterval(-e0, lo, loIn, hi, hiIn) {
		p += 0.5 * math.Exp(-e0)
		q += 0.5
	}
	u, v := math.Max(lo, -e0), math.Min(hi, e0)
	if u < v {
		em := math.Expm1((v - u) / 2)
		p += math.Exp((u-e0)/2) * em / 2
		q += math.Exp(-(v+e0)/2) * em / 2
	}
	return p, q
}

func (laplacePair) infP() float64 { return 0 }

func (l laplacePair) support() (float64, float64) { return -1 / l.b, 1 / l.b }

// hockeyStick is the Laplace mechanism's δ(ε) = 1 − e^{(ε−ε₀)/2} for
// |ε| ≤ ε₀, 0 above and 1 − e^ε below.
func (l laplacePair) hockeyStick(eps float64) float64 {
	e0 := 1 / l.b
	switch {
	case eps >= e0:
		return 0
	case eps <= -e0:
		return -math.Expm1(eps)
	}
	return -math.Expm1((eps - e0) / 2)
}

// zeroPair is the pair P = Q (loss 0): a mechanism that reveals nothing,
// e.g. subsampling at rate 0.
type zeroPair struct{}

func (zeroPair) mass(lo float64, loIn bool, hi float64, hiIn bool) (float64, float64) {
	if inInterval(0, lo, loIn, hi, hiIn) {
		return 1, 1
	}
	return 0, 0
}
func (zeroPair) infP() float64                   { return 0 }
func (zeroPair) support() (float64, float64)     { return 0, 0 }
func (zeroPair) hockeyStick(eps float64) float64 { return math.Max(0, -math.Expm1(eps)) }

// subsampledPair is the Poisson subsampling at rate q of a dominating pair
// (P, Q) (P: output with the record, Q: without): (qP + (1−q)Q, Q) for the
// remove direction and (Q, qP + (1−q)Q) for the add direction (Zhu, Dong &
// Wang 2022, Theorem 11; for the hockey-stick divergence, the advanced joint
// convexity of Balle, Barthe & Gaboardi 2018, Theorem 2). The new loss is
// g(L) = log(1 − q + q e^L) (remove) or −g(L) (add), a monotone function of
// the base loss, so interval masses map to base interval masses.
type subsampledPair struct {
	base   lossPair
	q      float64
	remove bool
}

// g is log(1 − q + q e^l), increasing from log(1−q) (l = −∞) to +∞.
func (s subsampledPair) g(l float64) float64 {
	switch {
	case math.IsInf(l, 1):
		return l
	case l > 0:
		return l + math.Log(s.q+(1-s.q)*math.Exp(-l))
	}
	return math.Log1p(s.q * math.Expm1(l))
}

// ginv is the inverse of g on (log(1−q), +∞]; −∞ at log(1−q).
func (s subsampledPair) ginv(t float64) float64 {
	switch {
	case math.IsInf(t, 1):
		return t
	case t > 1:
		return t + math.Log1p(-(1-s.q)*math.Exp(-t)) - math.Log(s.q)
	}
	return math.Log(math.Expm1(t)+s.q) - math.Log(s.q)
}

// baseMass returns the base masses of {L : g(L) ∈ J}.
func (s subsampledPair) baseMass(lo float64, loIn bool, hi float64, hiIn bool) (float64, float64) {
	c := math.Log1p(-s.q)
	var blo, bhi float64
	var bloIn, bhiIn bool
	switch {
	case lo < c:
		blo, bloIn = math.Inf(-1), true
	case lo == c:
		blo, bloIn = math.Inf(-1), loIn
	default:
		blo, bloIn = s.ginv(lo), loIn
	}
	switch {
	case hi < c || (hi == c && !hiIn):
		return 0, 0
	case hi == c:
		bhi, bhiIn = math.Inf(-1), true
	default:
		bhi, bhiIn = s.ginv(hi), hiIn
	}
	if blo > bhi || (blo == bhi && !(bloIn && bhiIn)) {
		return 0, 0
	}
	return s.base.mass(blo, bloIn, bhi, bhiIn)
}

func (s subsampledPair) mass(lo float64, loIn bool, hi float64, hiIn bool) (float64, float64) {
	if s.remove {
		pb, qb := s.baseMass(lo, loIn, hi, hiIn)
		return s.q*pb + (1-s.q)*qb, qb
	}
	// Add: L'' = −g(L) ∈ J ⇔ g(L) ∈ −J.
	pb, qb := s.baseMass(-hi, hiIn, -lo, loIn)
	return qb, s.q*pb + (1-s.q)*qb
}

func (s subsampledPair) infP() float64 {
	if s.remove {
		return s.q * s.base.infP()
	}
	return 0
}

func (s subsampledPair) support() (float64, float64) {
	lo, hi := s.base.support()
	if s.remove {
		return s.g(lo), s.g(hi)
	}
	return -s.g(hi), -s.g(lo)
}

// hockeyStick: remove: H_y(qP+(1−q)Q ‖ Q) = 1 − y for y ≤ 1−q, else
// q·H_{(y−1+q)/q}(P ‖ Q); add: H_y(Q ‖ qP+(1−q)Q) = 0 for y(1−q) ≥ 1, else
// (1−y(1−q))·H_{y₂}(Q ‖ P) with y₂ = yq/(1−y(1−q)) and
// H_{y₂}(Q ‖ P) = 1 − y₂ + y₂·H_{1/y₂}(P ‖ Q).
func (s subsampledPair) hockeyStick(eps float64) float64 {
	c := math.Log1p(-s.q)
	if s.remove {
		if eps <= c {
			return -math.Expm1(eps)
		}
		return s.q * s.base.hockeyStick(s.ginv(eps))
	}
	if eps >= -c {
		return 0
	}
	w := -math.Expm1(eps + c) // 1 − y(1−q)
	e2 := eps + math.Log(s.q) - math.Log(w)
	y2 := math.Exp(e2)
	return w * math.Max(0, 1-y2+y2*s.base.hockeyStick(-e2))
}

// gaussianPLDBound names the pair of the Gaussian mechanism.
const gaussianPLDBound = "gaussian-pair(balle-wang-2018)"

// lossPairs: the Gaussian pair in both directions.
func (g Gaussian) lossPairs() (lossPair, lossPair, error) {
	if err := g.Validate(); err != nil {
		return nil, nil, err
	}
	p, err := newGaussianPair(g.Sigma)
	return p, p, err
}

// newGaussianPair checks that the loss scale μ = 1/(2σ²) is representable
// (finite, ≤ pldMaxLoss): for a smaller σ every grid would lose the losses
// (μ overflows, the masses turn NaN) and the PLD must refuse rather than
// report a bound below the truth. The RDP accountant still applies.
func newGaussianPair(sigma float64) (gaussianPair, error) {
	p := gaussianPair{sigma: sigma}
	if mu := p.mu(); !(mu <= pldMaxLoss) {
		return p, fmt.Errorf("gaussian pair: σ = %g gives privacy losses of order 1/(2σ²) = %.3g, beyond the PLD's range (%g): %w", sigma, mu, pldMaxLoss, ErrPLDRange)
	}
	return p, nil
}

// PLDBound names the theorem behind the Gaussian pair.
func (Gaussian) PLDBound() string { return gaussianPLDBound }

// lossPairs: the Laplace pair in both directions.
func (l Laplace) lossPairs() (lossPair, lossPair, error) {
	if err := l.Validate(); err != nil {
		return nil, nil, err
	}
	if !(1/l.B <= pldMaxLoss) {
		return nil, nil, fmt.Errorf("laplace pair: b = %g gives privacy losses of 1/b = %.3g, beyond the PLD's range (%g): %w", l.B, 1/l.B, pldMaxLoss, ErrPLDRange)
	}
	p := laplacePair{b: l.B}
	return p, p, nil
}

// PLDBound names the Laplace pair.
func (Laplace) PLDBound() string { return "laplace-pair" }

// subsampledPairs applies Poisson subsampling at rate q per direction.
func subsampledPairs(remove, add lossPair, q float64) (lossPair, lossPair, error) {
	switch {
	case !(q >= 0 && q <= 1):
		return nil, nil, fmt.Errorf("poisson subsampling: rate q must be in [0, 1], got %v", q)
	case q == 0:
		return zeroPair{}, zeroPair{}, nil
	case q == 1:
		return remove, add, nil
	}
	// Both directions use the base's remove pair (P: with the record).
	if pp, ok := remove.(profilePair); ok {
		r, a := subsampledProfilePairs(pp, q)
		return r, a, nil
	}
	return subsampledPair{base: remove, q: q, remove: true}, subsampledPair{base: remove, q: q, remove: false}, nil
}

// lossPairs: the Poisson-subsampled Gaussian pairs (ZDW22, Theorem 11).
func (m SubsampledGaussian) lossPairs() (lossPair, lossPair, error) {
	if err := m.Validate(); err != nil {
		return nil, nil, err
	}
	p, err := newGaussianPair(m.Sigma)
	if err != nil {
		return nil, nil, err
	}
	return subsampledPairs(p, p, m.Q)
}

// PLDBound names the subsampling theorem.
func (SubsampledGaussian) PLDBound() string { return subsampledPLDBound }

const subsampledPLDBound = "poisson-subsampled-pair(zdw22-thm11)"

// lossPairs: Poisson subsampling of the base's pairs; the base must have a
// PLD (the discrete PTR release and RGM have none). The RDP bound option does not affect the
// PLD, which is exact for the subsampled pair.
func (m PoissonSubsampled) lossPairs() (lossPair, lossPair, error) {
	if err := m.Validate(); err != nil {
		return nil, nil, err
	}
	base, ok := m.Base.(PLDMechanism)
	if !ok {
		return nil, nil, fmt.Errorf("poisson-subsampled %s: the base mechanism has no proven privacy loss distribution (use the RDP accountant)", m.Base.Spec().Kind)
	}
	if m.Bound.orAuto() == SubsampleLower {
		return nil, nil, errors.New("poisson-subsampled: the \"lower\" bound is not a guarantee; a PLD accountant composes only guarantees")
	}
	if _, isSub := m.Base.(PoissonSubsampled); isSub {
		return nil, nil, errors.New("poisson-subsampled: nested subsampling has no PLD here")
	}
	r, a, err := base.lossPairs()
	if err != nil {
		return nil, nil, fmt.Errorf("poisson-subsampled: %w", err)
	}
	return subsampledPairs(r, a, m.Q)
}

// PLDBound names the subsampling theorem.
func (PoissonSubsampled) PLDBound() string { return subsampledPLDBound }
