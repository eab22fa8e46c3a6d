package exactnoise

import (
	"math/big"
	"math/bits"
	"math/rand/v2"
)

// bitSrc hands out the bits of r's 64-bit words, most significant first,
// each bit once. The bits of uniform words are independent uniform bits,
// and which bit is used next depends only on how many were used before, so
// every decision below sees fresh independent uniform bits. Decisions take
// only the bits they need (about two for a Bernoulli trial, see bern),
// a small fraction of the words that one exactly uniform 64-bit draw per
// decision would spend.
type bitSrc struct {
	r *rand.Rand
	w uint64 // the unused bits of the current word at the top, zeros below
	n uint   // how many bits of w are unused
}

// refill loads the next word; call only when no bits are left.
func (s *bitSrc) refill() { s.w, s.n = s.r.Uint64(), 64 }

// bit returns one uniform bit.
func (s *bitSrc) bit() uint64 { return s.take(1) }

// take returns the next k uniform bits, 1 ≤ k ≤ 64, as an integer in
// [0, 2^k) whose most significant bit is the first one drawn.
func (s *bitSrc) take(k uint) uint64 {
	if s.n > k { // then k < 64: the masks only help the compiler inline
		v := s.w >> ((64 - k) & 63)
		s.w <<= k & 63
		s.n -= k
		return v
	}
	return s.takeSpan(k)
}

// takeSpan is take when the unused bits do not exceed k: it uses them
// all, loads the next word and takes the rest from its top.
func (s *bitSrc) takeSpan(k uint) uint64 {
	v := s.w >> (64 - k) // the s.n unused bits on top, zeros below them
	w := s.r.Uint64()
	need := k - s.n
	v |= w >> (64 - need)
	s.w, s.n = w<<need, 64-need
	return v
}

// lemire is a precomputed uniform draw below t ≥ 1 by Lemire's multiply
// and reject ("Fast Random Integer Generation in an Interval", ACM TOMACS
// 2019): x uniform in [0, 2^k), x·t = q·2^k + l, accepted when
// l ≥ 2^k mod t; then q is exactly uniform in [0, t) (each q has exactly
// ⌊2^k/t⌋ accepted x). k = bitlen(t) + 10 while x·t fits in 64 bits
// (bitlen(t) ≤ 27), so a draw is rejected with probability < 2⁻¹⁰; else
// k = 64 with a 128-bit product.
type lemire struct {
	t, thresh uint64 // thresh = 2^k mod t
	k         uint
}

func newLemire(t uint64) lemire {
	if b := uint(bits.Len64(t)); b <= 27 {
		k := b + 10
		return lemire{t: t, k: k, thresh: (1 << k) % t}
	}
	return lemire{t: t, k: 64, thresh: -t % t}
}

// below returns a uniform integer in [0, l.t).
func (s *bitSrc) below(l lemire) uint64 {
	if k := l.k; k < 64 {
		for {
			var x uint64
			if s.n > k { // take(k), written out: the compiler does not inline it here
				x = s.w >> ((64 - k) & 63)
				s.w <<= k & 63
				s.n -= k
			} else {
				x = s.takeSpan(k)
			}
			x *= l.t
			if x&(1<<k-1) >= l.thresh {
				return x >> k
			}
		}
	}
	for {
		q, lo := bits.Mul64(s.take(64), l.t)
		if lo >= l.thresh {
			return q
		}
	}
}

// bern returns true with probability p = n/d exactly (true when n ≥ d,
// false when n = 0; d ≥ 1): a uniform U ∈ [0, 1), drawn one binary digit
// at a time from the bit stream, is compared with p's binary expansion,
// and U < p iff at the first digit where they differ p has a 1. Each digit
// decides with probability 1/2, so two bits are used on average (the
// digits after a terminating expansion are zeros and are compared too).
//
// The digits are produced 64 at a time, D = ⌊r·2⁶⁴/d⌋ for the remainder
// r < d (one bits.Div64), and compared with all the buffered bits at once:
// the first differing digit is the leading zero count of their XOR, and
// only the bits up to it are consumed — exactly the bits the
// digit-by-digit comparison (bernBig) would use.
func (s *bitSrc) bern(n, d uint64) bool {
	if n == 0 {
		return false
	}
	if n >= d {
		return true
	}
	D, _ := bits.Div64(n, 0, d)
	return s.bernDigits(n, d, D)
}

// bernDigits is bern for 0 < r < d given the first 64 digits of r/d,
// D = ⌊r·2⁶⁴/d⌋ (precomputed by callers that test the same ratio often).
func (s *bitSrc) bernDigits(r, d, D uint64) bool {
	for {
		if s.n == 0 {
			s.refill()
		}
		if x := (s.w ^ D) & (^uint64(0) << (64 - s.n)); x != 0 {
			z := uint(bits.LeadingZeros64(x)) // < s.n
			s.w <<= z + 1
			s.n -= z + 1
			return D>>(63-z)&1 == 1
		}
		// s.n digits matched: continue from the remainder r·2^n mod d.
		if s.n == 64 {
			_, r = bits.Div64(r, 0, d)
		} else {
			_, r = bits.Div64(r>>(64-s.n), r<<s.n, d)
		}
		D, _ = bits.Div64(r, 0, d)
		s.w, s.n = 0, 0
	}
}

// bernInv returns true with probability 1/k, k ≥ 1 (bern(1, k), with the
// digits of 1/k for small k from a table).
func (s *bitSrc) bernInv(k uint64) bool {
	if k < uint64(len(invDigits)) && k > 1 {
		return s.bernDigits(1, k, invDigits[k])
	}
	return s.bern(1, k)
}

// fact8 draws uniformly below 8! = 40320.
var fact8 = newLemire(40320)

// invDigits[k] = ⌊2⁶⁴/k⌋ for 2 ≤ k < 64: the first 64 binary digits of
// 1/k. Computed once; never written after package initialization.
var invDigits = func() (t [64]uint64) {
	for k := 2; k < len(t); k++ {
		t[k], _ = bits.Div64(1, 0, uint64(k))
	}
	return t
}()

// bernBig is bern for integers of any size, one digit at a time: for
// every n, d that fit in 64 bits it uses the same bits as bern on the same
// stream and returns the same value.
func (s *bitSrc) bernBig(n, d *big.Int) bool {
	if n.Sign() == 0 {
		return false
	}
	if n.Cmp(d) >= 0 {
		return true
	}
	r := new(big.Int).Set(n)
	for {
		r.Lsh(r, 1)
		var p uint64
		if r.Cmp(d) >= 0 {
			p = 1
			r.Sub(r, d)
		}
		if s.bit() != p {
			return p == 1
		}
	}
}

// factorialChain returns K, the index of the first failure in the
// independent trials Bernoulli(1/k), k = 2, 3, …: P(K > k) = 1/k!. One
// uniform q ∈ [0, 8!) decides up to k = 8: the events {q < 8!/k!} are
// nested with probabilities 1/k!, exactly as the joint successes of
// trials 2..k are, so K = 2 + #{k ∈ 2..8 : q < 8!/k!} while that is ≤ 8;
// q = 0 (K > 8, probability 1/8!) continues with trials k = 9, 10, … one
// at a time. The count is branch-free (q − T wraps to ≥ 2⁶³ iff q < T).
func (s *bitSrc) factorialChain() uint64 {
	q := s.below(fact8)
	c := (q-20160)>>63 + (q-6720)>>63 + (q-1680)>>63 + (q-336)>>63 + (q-56)>>63 + (q-8)>>63 + (q-1)>>63
	k := 2 + c
	if k <= 8 {
		return k
	}
	for s.bernInv(k) {
		k++
	}
	return k
}

// bernExpFrac returns true with probability exp(−n/d), 0 ≤ n ≤ d, d ≥ 1
// (CKS20 Algorithm 1 for γ = n/d ≤ 1): for K = 1, 2, … draw
// A_K ∼ Bernoulli(γ/K) until the first failure, and return whether that
// K is odd. A_1 = B_1 and A_K = B_K ∧ C_K for K ≥ 2, with independent
// exact trials B_K ∼ Bernoulli(n/d) and C_K ∼ Bernoulli(1/K) (so d·K
// never overflows): after B_1 succeeds, the C chain's first failure K_C is
// drawn at once (factorialChain) and then B_2, B_3, … until one fails or
// K_C is reached, so K = min(first failing B index, K_C).
func (s *bitSrc) bernExpFrac(n, d uint64) bool {
	if n == 0 {
		return true
	}
	if n >= d {
		return s.bernExp1()
	}
	D, _ := bits.Div64(n, 0, d) // the digits of n/d, for every B_K
	if !s.bernDigits(n, d, D) {
		return true // A_1 = 0: K = 1
	}
	kc := s.factorialChain()
	k := uint64(2)
	for k < kc && s.bernDigits(n, d, D) {
		k++
	}
	return k%2 == 1
}

// bernExpFracBig is bernExpFrac for integers of any size, n ≤ d, using
// the same bits in the same order.
func (s *bitSrc) bernExpFracBig(n, d *big.Int) bool {
	if n.Sign() == 0 {
		return true
	}
	if n.Cmp(d) >= 0 {
		return s.bernExp1()
	}
	if !s.bernBig(n, d) {
		return true
	}
	kc := s.factorialChain()
	k := uint64(2)
	for k < kc && s.bernBig(n, d) {
		k++
	}
	return k%2 == 1
}

// bernExp1 returns true with probability e⁻¹ (Algorithm 1 for γ = 1: A_1
// is certain and A_K = Bernoulli(1/K) for K ≥ 2, so K = factorialChain()).
func (s *bitSrc) bernExp1() bool {
	return s.factorialChain()%2 == 1
}

// bernExp returns true with probability exp(−n/d), d ≥ 1 (CKS20
// Algorithm 1 for γ > 1: ⌊γ⌋ independent Bernoulli(e⁻¹) successes, then
// Bernoulli(exp(−(γ − ⌊γ⌋)))).
func (s *bitSrc) bernExp(n, d uint64) bool {
	for i := n / d; i > 0; i-- {
		if !s.bernExp1() {
			return false
		}
	}
	return s.bernExpFrac(n%d, d)
}

// bernExpBig is bernExp for integers of any size (n ≥ 0, d ≥ 1), using
// the same bits in the same order.
func (s *bitSrc) bernExpBig(n, d *big.Int) bool {
	q, rem := new(big.Int).QuoRem(n, d, new(big.Int))
	one := big.NewInt(1)
	for q.Sign() > 0 {
		if !s.bernExp1() {
			return false
		}
		q.Sub(q, one)
	}
	return s.bernExpFracBig(rem, d)
}
