package privacy

import (
	"fmt"
	"math"
)

// The privacy loss distribution of one PTR step (Wang et al., NeurIPS 2022,
// Algorithm 1 with Gaussian release, as run by PTR-TSUM), releasing the test
// bit and the Gaussian vector (not the noisy margin Δ̂). The proof is in
// docs/ptr-pld.md; in short, with μ = 1/σ₁ and μ₀ = 1/(σ₁τ):
//
//   - neighbours with Δ(S) = Δ(S′) = 0: the bit has the same law Bern(δ₀′),
//     δ₀′ ≤ δ₀, on both sides and the release is N(0,1) vs N(μ,1) (failed)
//     or N(0,1) vs N(≤ μ₀,1) (passed): dominated by the mixture pair
//     "case0" = (1−δ₀)[fail]⊗N(0,1) + δ₀[pass]⊗N(0,1) vs the same with
//     N(μ,1) and N(μ₀,1);
//   - otherwise both branches have standardized shift ≤ μ and the release is
//     the product of a binary pair (Bern(π(Δ)), Bern(π(Δ′))), π(Δ) =
//     Pr[Lap(b) > B′ − Δ], with N(0,1) vs N(μ,1). With x = Δ − B′ (or its
//     mirror), the binary pairs at x ≤ −1 and x ≥ 0 are post-processings of
//     those at x = −1 and x = 0, and every pair at x ∈ [x_j, x_{j+1}] is a
//     post-processing of the "box" pair (π(x_j), π′(x_{j+1})). So the
//     ptrBoxes boxes covering [−1, 0], and their mirrors, dominate every
//     threshold B′ ≥ 0 and every Δ.
//
// The step's privacy profile is bounded by the maximum of these component
// profiles at every real ε, which is itself the profile of a pair (the
// envelope pair, docs/ptr-pld.md §4); that pair dominates both directions.

// ptrBoxes is the number of boxes covering the test positions x ∈ [−1, 0].
const ptrBoxes = 32

// ptrPLDBound names the dominating pair of the PTR step.
const ptrPLDBound = "ptr-envelope-pair(docs/ptr-pld.md)"

// profileRelErr is the relative error charged to each of the two terms of a
// Gaussian hockey-stick evaluation (erfc, exp, log and the rounding of their
// arguments, |argument| ≤ 40: ≤ 40²·2⁻⁵² + a few ulps ≈ 4e-13).
const profileRelErr = 1e-11

// mixComp is one component pair: a mixture over a bit b ∈ {0, 1} of
// standardized Gaussians, P = Σ_b w[b]·[b]⊗N(0,1), Q = Σ_b wq[b]·[b]⊗N(mu[b],1)
// (weights > 0, each side summing to 1, mu > 0); lr[b] = ln(w[b]/wq[b]).
type mixComp struct {
	w, wq, mu, lr [2]float64
}

func newMixComp(w, wq, mu [2]float64) mixComp {
	return mixComp{w: w, wq: wq, mu: mu, lr: [2]float64{math.Log(w[0] / wq[0]), math.Log(w[1] / wq[1])}}
}

// terms returns, for bit b, t1 = w·Φ(μ/2 − c) and t2 = e^ε·wq·Φ(−μ/2 − c)
// with c = (ε − ln(w/wq))/μ: the bit's hockey-stick term
// ∫(w φ(y) − e^ε wq φ(y−μ))₊ dy = t1 − t2 (Balle & Wang 2018, Theorem 8,
// with the threshold e^ε·wq/w). ey is e^ε.
func (c *mixComp) terms(b int, eps, ey float64) (t1, t2 float64) {
	mu := c.mu[b]
	cc := (eps - c.lr[b]) / mu
	t1 = c.w[b] * 0.5 * math.Erfc((cc-mu/2)/math.Sqrt2)
	z := (cc + mu/2) / math.Sqrt2
	if z < 20 && ey < math.MaxFloat64/4 {
		t2 = ey * c.wq[b] * 0.5 * math.Erfc(z)
	} else {
		t2 = math.Exp(eps + math.Log(c.wq[b]) + math.Log(0.5) + logErfc(z))
	}
	return t1, t2
}

// delta returns H_{e^ε}(P‖Q) (exact up to rounding).
func (c *mixComp) delta(eps float64) float64 {
	ey := math.Exp(eps)
	var s float64
	for b := 0; b < 2; b++ {
		t1, t2 := c.terms(b, eps, ey)
		s += math.Max(0, t1-t2)
	}
	return s
}

// deltaUpper returns an upper bound on H_{e^ε}(P‖Q) that covers the
// floating-point error of the evaluation (profileRelErr on each term).
func (c *mixComp) deltaUpper(eps, ey float64) float64 {
	var s float64
	for b := 0; b < 2; b++ {
		t1, t2 := c.terms(b, eps, ey)
		s += math.Max(0, t1*(1+profileRelErr)-t2*(1-profileRelErr))
	}
	return s
}

// tails returns P(L > ε) and Q(L > ε) for the loss L = log(dP/dQ): for bit
// b the loss is ln(w/wq) + μ²/2 − μy, N(ln(w/wq) ± μ²/2, μ²) under P / Q.
func (c *mixComp) tails(eps float64) (sp, sq float64) {
	for b := 0; b < 2; b++ {
		mu := c.mu[b]
		lr := c.lr[b]
		sp += c.w[b] * 0.5 * math.Erfc(-(mu*mu/2+lr-eps)/(mu*math.Sqrt2))
		sq += c.wq[b] * 0.5 * math.Erfc(-(-mu*mu/2+lr-eps)/(mu*math.Sqrt2))
	}
	return sp, sq
}

// swap returns the component with P and Q exchanged (a reflection y ↦ μ − y
// maps N(μ,1) vs N(0,1) to N(0,1) vs N(μ,1), so only the weights swap).
func (c mixComp) swap() mixComp { return newMixComp(c.wq, c.w, c.mu) }

// ptrEnvelope is the envelope pair of one PTR step: its privacy profile is
// the maximum of the component profiles (docs/ptr-pld.md, Lemma 4).
type ptrEnvelope struct {
	comps []mixComp
}

// lapTail returns Pr[Lap(0, b) > t].
func lapTail(t, b float64) float64 {
	if t >= 0 {
		return 0.5 * math.Exp(-t/b)
	}
	return 1 - 0.5*math.Exp(t/b)
}

// newPTREnvelope builds the components for PTR p (validated by the caller).
func newPTREnvelope(p PTR) *ptrEnvelope { return newPTREnvelopeBoxes(p, ptrBoxes) }

// newPTREnvelopeBoxes builds the envelope with j boxes over [−1, 0].
func newPTREnvelopeBoxes(p PTR, boxes int) *ptrEnvelope {
	mu := 1 / p.Sigma1
	mu0 := 1 / (p.Sigma1 * p.Tau)
	// δ₀ is inflated by a relative 1e-12: the implemented threshold
	// b·log(1/(2δ₀)) is rounded, so its pass probability at Δ = 0 may
	// exceed δ₀ by a few ulps (a larger δ₀ only makes case0 worse, τ ≤ 1).
	d0 := math.Min(0.5, p.Delta0*(1+1e-12))
	env := &ptrEnvelope{comps: []mixComp{newMixComp([2]float64{1 - d0, d0}, [2]float64{1 - d0, d0}, [2]float64{mu, mu0})}}
	for j := 0; j < boxes; j++ {
		x0 := -1 + float64(j)/float64(boxes)
		x1 := -1 + float64(j+1)/float64(boxes)
		// Box pair: pass probabilities a = π(x0) on S, a′ = π′(x1) on S′,
		// π(x) = Pr[Lap > −x], π′(x) = Pr[Lap > −(x+1)].
		a := lapTail(-x0, p.B)
		ap := lapTail(-(x1 + 1), p.B)
		c := newMixComp([2]float64{1 - a, a}, [2]float64{1 - ap, ap}, [2]float64{mu, mu})
		env.comps = append(env.comps, c, c.swap())
	}
	return env
}

// hockeyStick is the envelope profile max_k H_{e^ε}(P_k‖Q_k).
func (e *ptrEnvelope) hockeyStick(eps float64) float64 {
	var m float64
	for i := range e.comps {
		m = math.Max(m, e.comps[i].delta(eps))
	}
	return m
}

// deltaUpper is hockeyStick with every component bounded from above.
func (e *ptrEnvelope) deltaUpper(eps float64) float64 {
	ey := math.Exp(eps)
	var m float64
	for i := range e.comps {
		m = math.Max(m, e.comps[i].deltaUpper(eps, ey))
	}
	return math.Min(1, m)
}

// deltaUpperReverse bounds H_{e^ε}(Q‖P): the component set is closed under
// exchanging P and Q (case0 is symmetric, every box comes with its mirror),
// so the envelope's reverse profile equals its profile.
func (e *ptrEnvelope) deltaUpperReverse(eps float64) float64 { return e.deltaUpper(eps) }

// tails returns the envelope pair's P(L > ε) and Q(L > ε): those of the
// component that is largest at ε, ties broken towards the smaller Q-tail
// (the larger right derivative δ′(ε⁺) = −e^ε·Q(L > ε)); docs/ptr-pld.md,
// Lemma 4. Exact except at floating-point ties between components.
func (e *ptrEnvelope) tails(eps float64) (sp, sq float64) {
	best := -1.0
	for i := range e.comps {
		c := &e.comps[i]
		d := c.delta(eps)
		p, q := c.tails(eps)
		if d > best || (d == best && q < sq) {
			best, sp, sq = d, p, q
		}
	}
	return sp, sq
}

// mass returns the envelope pair's interval masses from its tails (the
// certified discretization uses deltaUpper instead, see discretizeProfile).
func (e *ptrEnvelope) mass(lo float64, _ bool, hi float64, _ bool) (float64, float64) {
	tail := func(x float64) (float64, float64) {
		switch {
		case math.IsInf(x, -1):
			return 1, 1
		case math.IsInf(x, 1):
			return 0, 0
		}
		return e.tails(x)
	}
	p0, q0 := tail(lo)
	p1, q1 := tail(hi)
	return math.Max(0, p0-p1), math.Max(0, q0-q1)
}

func (e *ptrEnvelope) infP() float64 { return 0 }

func (e *ptrEnvelope) support() (float64, float64) { return math.Inf(-1), math.Inf(1) }

// lossPairs: the envelope pair, for both directions (the family of
// neighbouring outputs is closed under exchanging S and S′).
func (p PTR) lossPairs() (lossPair, lossPair, error) {
	if err := p.Validate(); err != nil {
		return nil, nil, fmt.Errorf("ptr pld: %w", err)
	}
	env := newPTREnvelope(p)
	return env, env, nil
}

// PLDBound names the PTR envelope pair.
func (PTR) PLDBound() string { return ptrPLDBound }
