package exactnoise

import "math/bits"

// urand is a uniform deviate in (0, 1) whose binary digits are drawn
// lazily, most significant first, only when a comparison needs them (a
// "u-rand" of Karney, "Sampling exactly from the normal distribution",
// ACM TOMS 42(1), 2016, §2). Digit i (0-based, weight 2^−(i+1)) is bit
// 63 − i mod 64 of word i/64 (w, then ext); the first n digits are known,
// the rest are not yet drawn. A u-rand equals a dyadic rational with probability 0, so
// two u-rands, or a u-rand and a number, are almost surely never equal
// and every comparison ends after finitely many digits.
type urand struct {
	w   uint64   // digits 0..63
	ext []uint64 // digits 64.. (rarely needed)
	n   uint
}

// reset forgets every digit: the u-rand is a fresh uniform deviate.
func (u *urand) reset() { u.n = 0 }

// word returns the i-th word of digits (digits 64i .. 64i+63).
func (u *urand) word(i uint) uint64 {
	if i == 0 {
		return u.w
	}
	return u.ext[i-1]
}

// push appends the k low bits of v (1 ≤ k ≤ 64, most significant first)
// as the next k digits. Unknown digits below u.n may hold stale bits and
// are overwritten here.
func (u *urand) push(v uint64, k uint) {
	top := v << ((64 - k) & 63)
	if u.n+k <= 64 { // the common case: within the first word
		off := u.n & 63
		u.w = u.w&^(^uint64(0)>>off) | top>>off
		if off == 0 {
			u.w = top
		}
		u.n += k
		return
	}
	u.pushSlow(top, k)
}

func (u *urand) pushSlow(top uint64, k uint) {
	w, off := u.n>>6, u.n&63
	for uint(len(u.ext)) < (u.n+k-1)>>6 {
		u.ext = append(u.ext, 0)
	}
	set := func(i uint, v uint64) {
		if i == 0 {
			u.w = v
		} else {
			u.ext[i-1] = v
		}
	}
	if off == 0 {
		set(w, top)
	} else {
		set(w, u.word(w)&^(^uint64(0)>>off)|top>>off)
		if off+k > 64 {
			set(w+1, top<<(64-off))
		}
	}
	u.n += k
}

// less returns whether a < b for a fresh u-rand a (a.n = 0), drawing a's
// digits from the stream and, past b's known digits, b's too: at digit
// i, b's digit is drawn first if unknown, then a's, and the first digit
// where they differ decides. Within b's known digits the comparison is done
// on whole words (XOR and leading zeros, as bernDigits), consuming exactly
// the bits the digit-by-digit comparison would.
func (s *bitSrc) less(a, b *urand) bool {
	for i := uint(0); ; {
		if i < b.n {
			if s.n == 0 {
				s.refill()
			}
			bw := b.word(i>>6) << (i & 63)
			c := min(b.n-i, 64-(i&63), s.n)
			if x := (s.w ^ bw) &^ (^uint64(0) >> c); x != 0 {
				z := uint(bits.LeadingZeros64(x)) // < c
				if i == 0 {                       // a is fresh: its digits are the stream's z+1 bits
					a.w, a.n = s.w&^(^uint64(0)>>(z+1)), z+1
				} else {
					a.push(s.w>>(63-z), z+1)
				}
				s.w <<= z + 1
				s.n -= z + 1
				return bw>>(63-z)&1 == 1
			}
			if i == 0 {
				a.w, a.n = s.w&^(^uint64(0)>>c), c
			} else {
				a.push(s.w>>(64-c), c)
			}
			s.w <<= c
			s.n -= c
			i += c
			continue
		}
		bb := s.bit()
		b.push(bb, 1)
		ab := s.bit()
		a.push(ab, 1)
		i++
		if ab != bb {
			return ab < bb
		}
	}
}

// halfExp returns true with probability e^{−1/2} (Karney's Algorithm H,
// von Neumann's method for exp(−x) at x = ½): p uniform; p > ½ (first
// digit 1) ends the chain at length 0; else draw u-rands while each is
// below the previous one; the chain's length n is the number of
// decreasing draws, P(n ≥ j) = (½)^j/j!, and the result is [n even].
// p and q are scratch.
func (s *bitSrc) halfExp(p, q *urand) bool {
	p.reset()
	b := s.bit()
	p.push(b, 1)
	if b == 1 {
		return true
	}
	for {
		q.reset()
		if !s.less(q, p) {
			return false
		}
		p.reset()
		if !s.less(p, q) {
			return true
		}
	}
}

// expU returns true with probability e^{−x} for the u-rand x (von
// Neumann's method, Karney's Algorithm E): the length n of the chain
// x > p₁ > p₂ > … of fresh u-rands has P(n ≥ j) = x^j/j!; return [n even].
func (s *bitSrc) expU(x, p, q *urand) bool {
	p.reset()
	if !s.less(p, x) {
		return true
	}
	for {
		q.reset()
		if !s.less(q, p) {
			return false
		}
		p.reset()
		if !s.less(p, q) {
			return true
		}
	}
}

// halfSquareExp returns true with probability e^{−x²/2} for the u-rand x
// (the Algorithm B of Du, Fan & Wei, "An improved exact sampling algorithm
// for the standard normal distribution", Comput. Stat. 37, 2022, which
// replaces Karney's Algorithm B for the k = 0 case): step j of the chain
// continues when a fair bit is 0, a fresh u-rand z_j < z_{j−1} (z₀ = x)
// and another fresh u-rand r_j < x, so P(n ≥ j) = (x/2)^j·x^j/j! =
// (x²/2)^j/j!, and [n even] has probability Σ_j (−x²/2)^j/j! = e^{−x²/2}.
func (s *bitSrc) halfSquareExp(x, p, q *urand) bool {
	prev := x
	even := true
	for {
		if s.bit() == 1 {
			return even
		}
		q.reset()
		if !s.less(q, prev) {
			return even
		}
		p.reset()
		if !s.less(p, x) {
			return even
		}
		p, q = q, p
		prev = p
		even = !even
	}
}

// normal draws |X| = k + x for X ∼ N(0, 1), returning the integer part k
// and leaving the fraction in the u-rand x (Karney's Algorithm N with the
// improvements of Du, Fan & Wei 2022, as in GNU MPFR's mpfr_nrandom):
//
//	N1. n ≥ 0 with P(n) = e^{−n/2}(1 − e^{−1/2}): the number of
//	    Bernoulli(e^{−1/2}) successes before the first failure (bernExpHalf:
//	    CKS20 Algorithm 1 at γ = ½, several times faster here than
//	    Karney's Algorithm H, von Neumann's method on u-rands, which
//	    halfExp implements and the tests check; both are exact).
//	N2. Continue only when n = k² is a perfect square: P(k) ∝ e^{−k²/2}.
//	N3. x a fresh u-rand.
//	N4. Accept with probability e^{−kx}: k successes of expU(x).
//	N5. Accept with probability e^{−x²/2}: halfSquareExp(x).
//
// An accepted (k, x) has density ∝ e^{−k²/2 − kx − x²/2} = e^{−(k+x)²/2}
// on k + x ∈ [k, k+1), i.e. k + x is distributed as |X|. A rejection
// restarts at N1. Everything is comparisons of random bits: no arithmetic
// on x at all.
func (s *bitSrc) normal(x, p, q *urand) uint64 {
	for {
		var n uint64
		for s.bernExpHalf() {
			n++
		}
		k := uint64(0)
		for (k+1)*(k+1) <= n {
			k++
		}
		if k*k != n {
			continue
		}
		x.reset()
		j := uint64(0)
		for j < k && s.expU(x, p, q) {
			j++
		}
		if j < k {
			continue
		}
		if s.halfSquareExp(x, p, q) {
			return k
		}
	}
}

// bernExpHalf returns true with probability e^{−1/2} (CKS20 Algorithm 1 at
// γ = ½, as bernExpFrac(1, 2) but with each Bernoulli(½) one fair bit):
// A_1 = B_1, A_K = B_K ∧ C_K for K ≥ 2 with B_K fair bits and C_K ∼
// Bernoulli(1/K) (factorialChain gives the C chain's first failure); the
// result is whether the first failing index K is odd.
func (s *bitSrc) bernExpHalf() bool {
	if s.bit() == 0 {
		return true // A_1 = 0: K = 1
	}
	kc := s.factorialChain()
	k := uint64(2)
	for k < kc && s.bit() == 1 {
		k++
	}
	return k%2 == 1
}
