package privacy

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
)

// profilePair is a dominating pair that is discretized from its privacy
// profile δ(ε) = H_{e^ε}(P‖Q) alone (no interval masses): the PTR envelope
// pair, whose loss law is only implicit (docs/ptr-pld.md), and its Poisson
// subsampling.
type profilePair interface {
	lossPair
	// deltaUpper returns an upper bound on δ(ε) for every real ε, covering
	// the floating-point error of its evaluation.
	deltaUpper(eps float64) float64
	// deltaUpperReverse is the same for H_{e^ε}(Q‖P).
	deltaUpperReverse(eps float64) float64
}

// discretizeProfile is the "connect the dots" discretization (Doroshenko,
// Ghazi, Kamath, Kumar & Manurangsi, PETS 2022) computed from profile values
// only. On the grid l_i = (lo+i)·h, i < n, with D_i ≥ δ(l_i) (deltaUpper),
// masses p_i ≥ 0 at l_i and p_∞ = D_{n−1} at +∞ are chosen from the top so
// that the grid measure's profile δ̂ satisfies δ̂(l_i) ≥ D_i (equality when
// the D_i are exact: they are the second differences of δ in y = e^ε), and
// p_0 makes the total mass 1. Then δ̂ ≥ δ everywhere, which is (★) of pld.go
// with no slack: δ̂ is affine in y between grid points and δ is convex in y
// (a hockey-stick curve) with δ̂ ≥ δ at both ends; above l_{n−1},
// δ̂ = D_{n−1} ≥ δ(l_{n−1}) ≥ δ(ε); below l_0, δ̂ is affine in y from
// δ̂(y=0) = 1 = δ(0) to δ̂(l_0) ≥ δ(l_0).
//
// The optimistic estimate moves every finite mass one grid step down and
// drops p_∞: its profile at ε is δ̂(ε+h) without p_∞, and for
// ε ∈ [l_{k−1}, l_k), δ̂(ε+h) ≤ δ̂(l_k) = δ(l_k) ≤ δ(ε) (exact D_i; up to
// floating point, as the optimistic estimate of pld.go). It assumes
// P(L = +∞) = 0, which profilePair implementations guarantee.
//
// The grid spans [tlo, thi]: thi is where δ drops to tau, tlo
// (< 0) where δ(ε) − (1 − e^ε) = e^ε·H_{e^{−ε}}(Q‖P) drops to tau
// (below it the profile is 1 − e^ε up to that amount; the bound holds for
// any tlo, this only keeps it tight).
func discretizeProfile(pp profilePair, h, tau float64) (upper, lower pmf, err error) {
	if !(h > 0) || math.IsInf(h, 0) {
		return pmf{}, pmf{}, fmt.Errorf("pld: discretization interval must be finite and > 0, got %v", h)
	}
	if pp.infP() != 0 {
		return pmf{}, pmf{}, errors.New("pld: profile discretization needs P(L = +∞) = 0")
	}
	thi, err := searchDown(func(t float64) bool { return pp.deltaUpper(t) <= tau }, 1)
	if err != nil {
		return pmf{}, pmf{}, fmt.Errorf("pld: upper loss range: %w", err)
	}
	tlo, err := searchDown(func(t float64) bool { return pp.deltaUpper(-t)+math.Expm1(-t) <= tau }, 1)
	if err != nil {
		return pmf{}, pmf{}, fmt.Errorf("pld: lower loss range: %w", err)
	}
	tlo = -tlo
	i0, i1 := math.Floor(tlo/h), math.Ceil(thi/h)
	if i1-i0+1 > pldMaxPoints || math.IsNaN(i1-i0) {
		return pmf{}, pmf{}, fmt.Errorf("pld: the privacy loss range [%.4g, %.4g] needs more than %d points at interval %g; use a larger interval", tlo, thi, pldMaxPoints, h)
	}
	lo, n := int(i0), int(i1-i0)+1
	d := make([]float64, n)
	// The profile values are independent: evaluate them in parallel chunks
	// (the result does not depend on the number of workers).
	const chunk = 4096
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				c := int(next.Add(1)-1) * chunk
				if c >= n {
					return
				}
				for i := c; i < min(c+chunk, n); i++ {
					d[i] = pp.deltaUpper(float64(lo+i) * h)
				}
			}
		}()
	}
	wg.Wait()
	p := make([]float64, n)
	pinf := d[n-1]
	// From the top: a = p_∞ + Σ_{j>k} p_j, b = Σ_{j>k} p_j e^{l_{k−1}−l_j};
	// δ̂(l_{k−1}) = a − b + p_k(1 − e^{−h}).
	eh := math.Exp(-h)
	oneMinusEh := -math.Expm1(-h)
	a, b := pinf, 0.0
	for k := n - 1; k >= 1; k-- {
		b *= eh // now relative to l_{k−1} for the terms j > k
		if v := (d[k-1] - (a - b)) / oneMinusEh; v > 0 {
			p[k] = v
		}
		a += p[k]
		b += p[k] * eh
	}
	if a < 1 {
		p[0] = 1 - a
	}
	upper = pmf{lo: lo, p: p, inf: pinf}
	lower = pmf{lo: lo - 1, p: append([]float64(nil), p...)}
	return upper, lower, nil
}

// searchDown returns t ≥ 0 with ok(t), close to the smallest such t on the
// doubling-then-bisection search from start (ok is assumed monotone: false
// below a point, true above).
func searchDown(ok func(float64) bool, start float64) (float64, error) {
	hi := start
	for !ok(hi) {
		hi *= 2
		if hi > 1e7 {
			return 0, errors.New("privacy profile does not decay (no point below 1e7)")
		}
	}
	lo := 0.0
	if ok(lo) {
		return lo, nil
	}
	for i := 0; i < 100 && hi-lo > 1e-9*(1+hi); i++ {
		mid := lo + (hi-lo)/2
		if ok(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, nil
}

// profileSubsampled is the Poisson subsampling at rate q of a profile pair
// (P, Q) (P: output with the record): (qP + (1−q)Q, Q) for the remove
// direction and (Q, qP + (1−q)Q) for the add direction, as subsampledPair
// (ZDW22 Theorem 11; Balle, Barthe & Gaboardi 2018, Theorem 2), discretized
// from its profile. The add pair needs H_y(M(T)‖M(T∪{x})) ≤ H_y(Q‖P), which
// follows from the remove domination at every real ε by
// H_y(A‖B) = 1 − y + y·H_{1/y}(B‖A) (docs/ptr-pld.md §5).
type profileSubsampled struct {
	subsampledPair
	pbase profilePair
}

// deltaUpper: remove: 1 − e^ε for ε ≤ log(1−q), else q·δ(g⁻¹(ε)); add: 0 for
// ε ≥ −log(1−q), else w·H_{y₂}(Q‖P) with w = 1 − e^ε(1−q) and
// y₂ = e^ε q/w (as subsampledPair.hockeyStick, without its cancellation).
// Arguments of the base profile are moved down by a relative 1e-12 (δ is
// non-increasing) and the products rounded up.
func (s profileSubsampled) deltaUpper(eps float64) float64 {
	down := func(x float64) float64 { return x - 1e-12*(1+math.Abs(x)) }
	c := math.Log1p(-s.q)
	if s.remove {
		if eps <= c {
			return math.Min(1, -math.Expm1(eps)*(1+1e-15))
		}
		return math.Min(1, s.q*s.pbase.deltaUpper(down(s.ginv(eps)))*(1+1e-15))
	}
	if eps >= -c {
		return 0
	}
	w := -math.Expm1(eps + c) // 1 − e^ε(1−q) > 0
	e2 := eps + math.Log(s.q) - math.Log(w)
	return math.Min(1, w*s.pbase.deltaUpperReverse(down(e2))*(1+1e-15))
}

// deltaUpperReverse is not needed for subsampled pairs (nested subsampling
// is refused); it bounds H(Q‖P) through H_y(Q‖P) = 1 − y + y·H_{1/y}(P‖Q).
func (s profileSubsampled) deltaUpperReverse(eps float64) float64 {
	y := math.Exp(eps)
	t := y * s.deltaUpper(-eps)
	om := -math.Expm1(eps)
	return math.Min(1, math.Max(0, om+t+1e-14*(math.Abs(om)+t)))
}

// subsampledProfilePairs is subsampledPairs for a profile pair.
func subsampledProfilePairs(base profilePair, q float64) (lossPair, lossPair) {
	return profileSubsampled{subsampledPair{base: base, q: q, remove: true}, base},
		profileSubsampled{subsampledPair{base: base, q: q, remove: false}, base}
}
