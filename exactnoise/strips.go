package exactnoise

import (
	"math/big"
	"math/bits"
	"sync"
)

// The strip sampler draws |X|, X ∼ N(0, 1), exactly and fast, as
// X = (I + t)·2^−d with an integer I and a u-rand t ∈ (0, 1), by rejection
// from a majorant of f(x) = e^{−x²/2} on x ≥ 0 made of
//
//   - 128 strips [i/16, (i+1)/16), i < 128, of height H_i = h_i/2²², h_i =
//     ⌈e^{−i²/512}·2²²⌉ ≥ 2²²·f(i/16) = 2²²·max f on the strip (d = 4); and
//   - the tail x ≥ 8 under g(x) = e^{−32}·e^{−8(x−8)} ≥ f(x) (because
//     x²/2 − 32 − 8(x−8) = (x−8)²/2 ≥ 0), area e^{−32}/8, proposed with the
//     dyadic weight w_T = ⌈2²⁶·e^{−32}/8⌉ (d = 3).
//
// A component is chosen with probability ∝ its integer weight (strip i:
// h_i, in units of 2⁻²⁶ of area; the tail: w_T) by Walker's alias method
// in exact integers; then the point inside it, and the acceptance
// f(x)/majorant(x), which factors into
//
//	strip i, x = (i+t)/16:  ρ_i · e^{−(i/256)·t} · e^{−t²/512},  ρ_i = e^{−i²/512}·2²²/h_i ≤ 1,
//	tail, x = 8 + E/8:      ρ_T · e^{−E²/128},                  ρ_T = e^{−32}·2²³/w_T ≤ 1,
//
// with E ∼ Exp(1) exactly (an integer part V ∼ Geometric(1 − e⁻¹) from
// Bernoulli(e⁻¹) trials, a fraction t accepted with probability e^{−t} by
// von Neumann's method). Every factor is an exact Bernoulli: ρ by
// comparing uniform bits with its binary digits (64 precomputed, more
// computed on demand in rational arithmetic with rigorous bounds: bernRho),
// e^{−c·t} and e^{−c·t²} for a rational c ≤ 1 by von Neumann chains on
// u-rands (expCU, expCU2), e^{−V²/128} by CKS20 Algorithm 1. An accepted
// point has density ∝ majorant·(f/majorant) = f. A rejection restarts at
// the choice of the component.
//
// The fast path — an alias draw, a few bits for e^{−(i/256)t} and e^{−t²/512}
// (their chains end at the first Bernoulli with probability ≥ 1/2) and about
// two bits for ρ_i (within 2⁻²¹·e^{i²/512} of 1) — accepts with
// probability √(π/2)/Σ(area) ≈ 0.97.
type strips struct {
	alias    []uint8                // Walker alias of each bucket
	thresh   []uint64               // bucket j keeps its own component when u < thresh[j]
	lem      lemire                 // uniform below the total weight W
	rho      [stripCount + 1]uint64 // the first 64 digits of ρ_c
	rhoN     [stripCount + 1]uint64 // ρ_c = 2^rhoShift·e^{−rhoN/512}/weights
	rhoShift [stripCount + 1]uint
	rhoOne   [stripCount + 1]bool // ρ_c = 1
	weights  [stripCount + 1]uint64
}

const (
	stripCount = 128 // strips of width 1/16 up to x = 8; component 128 is the tail
	stripShift = 4
	tailShift  = 3
	buckets    = 256
)

var (
	stripOnce  sync.Once
	stripTable *strips
)

// theStrips returns the tables, built once (they are constants of the
// algorithm, computed exactly; never written after).
func theStrips() *strips {
	stripOnce.Do(func() { stripTable = buildStrips() })
	return stripTable
}

func buildStrips() *strips {
	st := &strips{}
	for c := 0; c <= stripCount; c++ {
		n, shift := uint64(c*c), uint(weightBits) // strip c: e^{−c²/512}, heights in units of 2^−weightBits
		if c == stripCount {
			n, shift = 16384, weightBits+1 // the tail: area e^{−32}/8 = 2·e^{−32}/16, in the strips' units
		}
		lo, hi := expNeg512(n, tableBits)
		// weight ⌈2^shift·e^{−n/512}⌉, certified by both ends of the enclosure
		w := ceilShift(lo, shift, tableBits)
		if w2 := ceilShift(hi, shift, tableBits); w2 != w {
			panic("exactnoise: strip weight not certified")
		}
		st.weights[c], st.rhoN[c], st.rhoShift[c] = w, n, shift
		st.rho[c], st.rhoOne[c] = st.rhoDigits(c, lo, hi)
	}
	st.buildAlias()
	return st
}

// tableBits is the fixed-point precision of the table enclosures.
const tableBits = 256

// weightBits sets the unit of the integer weights, 2^−weightBits of height
// (2^−(weightBits+4) of area): the total weight W ≈ 20.6·2²² then fits the
// 37-bit Lemire draw, and rounding each height up to the unit costs below
// 0.2% of acceptance.
const weightBits = 22

// buildAlias builds Walker's alias table over `buckets` buckets in exact
// integers: component i has scaled weight n·w_i, each bucket a capacity of
// W = Σ w_i; a small component (n·w < W) fills bucket thresh = n·w and
// gives the rest of the bucket to a large one. Then P(i) =
// (thresh_i + Σ_{alias_j = i}(W − thresh_j))/(n·W) = w_i/W exactly.
func (st *strips) buildAlias() {
	var total uint64
	for _, w := range st.weights {
		total += w
	}
	n := uint64(buckets)
	p := make([]uint64, buckets)
	for i, w := range st.weights {
		p[i] = n * w
	}
	st.alias, st.thresh = make([]uint8, buckets), make([]uint64, buckets)
	var small, large []int
	for i := range p {
		if p[i] < total {
			small = append(small, i)
		} else {
			large = append(large, i)
		}
	}
	for len(small) > 0 && len(large) > 0 {
		s, l := small[len(small)-1], large[len(large)-1]
		small = small[:len(small)-1]
		st.thresh[s], st.alias[s] = p[s], uint8(l)
		p[l] -= total - p[s]
		if p[l] < total {
			large = large[:len(large)-1]
			small = append(small, l)
		}
	}
	for _, l := range large {
		st.thresh[l], st.alias[l] = total, uint8(l)
	}
	for _, s := range small { // only when rounding left p = total exactly
		st.thresh[s], st.alias[s] = total, uint8(s)
	}
	st.lem = newLemire(total)
}

// component draws a component with probability weights[i]/W.
func (st *strips) component(s *bitSrc) int {
	j := s.take(8)
	u := s.below(st.lem)
	if u < st.thresh[j] {
		return int(j)
	}
	return int(st.alias[j])
}

// halfNormal draws |X| = (I + t)·2^−d: it returns I and d and leaves t in
// the u-rand x (p, q scratch).
func (st *strips) halfNormal(s *bitSrc, x, p, q *urand) (uint64, uint) {
	for {
		c := st.component(s)
		if c < stripCount {
			x.reset()
			i := uint64(c)
			if !s.expCU(i, 256, x, p, q) || !s.expCU2(1, 512, x, p, q) || !st.bernRho(s, c) {
				continue
			}
			return i, stripShift
		}
		// Tail: E = V + t ∼ Exp(1).
		var v uint64
		for s.bernExp1() {
			v++
		}
		for {
			x.reset()
			if s.expU(x, p, q) {
				break
			}
		}
		// e^{−E²/128} = e^{−V²/128}·e^{−(V/64)t}·e^{−t²/128}.
		hi, lo := bits.Mul64(v, v)
		if hi != 0 || v >= 1<<31 {
			panic("exactnoise: normal tail beyond 2³¹") // probability below e^{−2³¹}
		}
		if !s.bernExp(lo, 128) {
			continue
		}
		ok := true
		for w := v / 64; w > 0 && ok; w-- {
			ok = s.expU(x, p, q)
		}
		if !ok || !s.expCU(v%64, 64, x, p, q) || !s.expCU2(1, 128, x, p, q) || !st.bernRho(s, c) {
			continue
		}
		return 64 + v, tailShift
	}
}

// expCU returns true with probability e^{−(n/d)·t} for the u-rand t,
// 0 ≤ n < d (von Neumann's chain t > z₁ > z₂ > … of fresh u-rands, each step
// also needing a Bernoulli(n/d) success: P(length ≥ j) = (n t/d)^j/j!;
// the result is [length even]).
func (s *bitSrc) expCU(n, d uint64, t, p, q *urand) bool {
	if n == 0 {
		return true
	}
	D := digitsOf(n, d)
	prev := t
	even := true
	for {
		if !s.bernDigits(n, d, D) {
			return even
		}
		q.reset()
		if !s.less(q, prev) {
			return even
		}
		p, q = q, p
		prev = p
		even = !even
	}
}

// expCU2 returns true with probability e^{−(n/d)·t²} for the u-rand t,
// 0 < n < d: as halfSquareExp, with Bernoulli(n/d) in place of the fair bit
// (P(length ≥ j) = (n/d)^j·t^j·t^j/j!).
func (s *bitSrc) expCU2(n, d uint64, t, p, q *urand) bool {
	D := digitsOf(n, d)
	prev := t
	even := true
	for {
		if !s.bernDigits(n, d, D) {
			return even
		}
		q.reset()
		if !s.less(q, prev) {
			return even
		}
		p.reset()
		if !s.less(p, t) {
			return even
		}
		p, q = q, p
		prev = p
		even = !even
	}
}

// bernRho returns true with probability ρ_c: a uniform U, drawn digit by
// digit, is compared with ρ_c's binary digits; U < ρ iff ρ has a 1 at the
// first digit where they differ. The first 64 digits are in the table
// (compared on whole words, as bernDigits); later ones are computed on
// demand (rhoDigit).
func (st *strips) bernRho(s *bitSrc, c int) bool {
	if st.rhoOne[c] {
		return true
	}
	D := st.rho[c]
	left := uint(64) // table digits not yet compared
	for left > 0 {
		if s.n == 0 {
			s.refill()
		}
		k := min(left, s.n)
		d := D << (64 - left) // the next table digits, on top
		if x := (s.w ^ d) &^ (^uint64(0) >> k); x != 0 {
			z := uint(bits.LeadingZeros64(x))
			s.w <<= z + 1
			s.n -= z + 1
			return d>>(63-z)&1 == 1
		}
		s.w <<= k
		s.n -= k
		left -= k
	}
	for k := uint(64); ; k++ {
		dig := st.rhoDigit(c, k)
		if s.bit() != dig {
			return dig == 1
		}
	}
}

// expNeg512 returns [lo, hi] with lo/2^F ≤ e^{−n/512} ≤ hi/2^F: the
// alternating series of e^{−1/512} (partial sums bracket the limit; the
// terms 1/(512^k·k!) decrease) summed exactly until the bracket is below
// 2^{−F−8}, then raised to the n-th power by squaring with the lower end
// rounded down and the upper end rounded up at every product.
func expNeg512(n uint64, f uint) (lo, hi *big.Int) {
	one := new(big.Int).Lsh(big.NewInt(1), f)
	if n == 0 {
		return one, new(big.Int).Set(one)
	}
	term := big.NewRat(1, 1)
	sum := big.NewRat(1, 1)
	tol := new(big.Rat).SetFrac(big.NewInt(1), new(big.Int).Lsh(big.NewInt(1), f+8))
	var prev *big.Rat
	for k := int64(1); ; k++ {
		term.Quo(term, big.NewRat(512*k, 1))
		prev = new(big.Rat).Set(sum)
		if k%2 == 1 {
			sum.Sub(sum, term)
		} else {
			sum.Add(sum, term)
		}
		if k%2 == 1 && term.Cmp(tol) < 0 { // sum = S_odd ≤ e^{−x} ≤ S_even = prev
			break
		}
	}
	fl := func(r *big.Rat, up bool) *big.Int {
		v := new(big.Rat).Mul(r, new(big.Rat).SetInt(one))
		q, m := new(big.Int).QuoRem(v.Num(), v.Denom(), new(big.Int))
		if up && m.Sign() != 0 {
			q.Add(q, big.NewInt(1))
		}
		return q
	}
	bl, bh := fl(sum, false), fl(prev, true)
	rl, rh := new(big.Int).Set(one), new(big.Int).Set(one)
	mul := func(a, b *big.Int, up bool) *big.Int {
		p := new(big.Int).Mul(a, b)
		q, m := new(big.Int).QuoRem(p, one, new(big.Int))
		if up && m.Sign() != 0 {
			q.Add(q, big.NewInt(1))
		}
		return q
	}
	for e := n; e > 0; e >>= 1 {
		if e&1 == 1 {
			rl, rh = mul(rl, bl, false), mul(rh, bh, true)
		}
		if e > 1 {
			bl, bh = mul(bl, bl, false), mul(bh, bh, true)
		}
	}
	return rl, rh
}

// ceilShift returns ⌈v·2^shift/2^f⌉ for the fixed-point v.
func ceilShift(v *big.Int, shift, f uint) uint64 {
	p := new(big.Int).Lsh(v, shift)
	q, m := new(big.Int).QuoRem(p, new(big.Int).Lsh(big.NewInt(1), f), new(big.Int))
	if m.Sign() != 0 {
		q.Add(q, big.NewInt(1))
	}
	if !q.IsUint64() {
		panic("exactnoise: strip weight out of range")
	}
	return q.Uint64()
}

// rhoFloor returns ⌊ρ_c·2^b⌋ computed from the fixed-point enclosure end
// e (ρ_c = 2^shift·e^{−n/512}/w, e/2^f ≈ e^{−n/512}).
func (st *strips) rhoFloor(c int, e *big.Int, f, b uint) *big.Int {
	p := new(big.Int).Lsh(e, st.rhoShift[c]+b)
	return p.Quo(p, new(big.Int).Lsh(new(big.Int).SetUint64(st.weights[c]), f))
}

// rhoDigits returns the first 64 binary digits of ρ_c ≤ 1 (⌊ρ·2⁶⁴⌋,
// certified by both ends of the enclosure), or one = true when ρ_c = 1.
func (st *strips) rhoDigits(c int, lo, hi *big.Int) (uint64, bool) {
	one := new(big.Int).Lsh(big.NewInt(1), 64)
	a, b := st.rhoFloor(c, lo, tableBits, 64), st.rhoFloor(c, hi, tableBits, 64)
	if a.Cmp(one) == 0 && b.Cmp(one) == 0 && lo.Cmp(hi) == 0 {
		return 0, true // exact: ρ = 1
	}
	if b.Cmp(one) >= 0 || a.Cmp(b) != 0 {
		panic("exactnoise: strip acceptance digits not certified")
	}
	return a.Uint64(), false
}

// rhoDigit returns binary digit k (0-based, weight 2^−(k+1)) of ρ_c < 1
// from enclosures of increasing precision until both ends agree on
// ⌊ρ·2^{k+1}⌋ (ρ_c is irrational for c > 0, so they eventually do).
func (st *strips) rhoDigit(c int, k uint) uint64 {
	for f := k + 128; ; f += 128 {
		lo, hi := expNeg512(st.rhoN[c], f)
		a, b := st.rhoFloor(c, lo, f, k+1), st.rhoFloor(c, hi, f, k+1)
		if a.Cmp(b) == 0 {
			return uint64(a.Bit(0))
		}
		if f > k+8192 {
			panic("exactnoise: digit of the strip acceptance ratio not resolved")
		}
	}
}

// digitsOf returns ⌊n·2⁶⁴/d⌋, the first 64 binary digits of n/d for
// 0 < n < d (a shift when d is a power of two), for bernDigits.
func digitsOf(n, d uint64) uint64 {
	if d&(d-1) == 0 {
		return n << (64 - uint(bits.TrailingZeros64(d)))
	}
	D, _ := bits.Div64(n, 0, d)
	return D
}
