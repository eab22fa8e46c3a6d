package exactnoise

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"math/rand/v2"
)

// RoundedNormal is round(s·X) for X ∼ N(0, 1) and a dyadic scale
// s = M/2^F, sampled exactly with integer operations only: the law of a
// sample is exactly P(j) = Φ((j+½)/s) − Φ((j−½)/s), so releasing it (or
// anything computed from it) is post-processing of the continuous Gaussian
// N(0, s²).
//
// How: |X| = k + x is drawn by Karney's Algorithm N (see bitSrc.normal),
// which leaves the fraction x as a u-rand, a uniform deviate whose binary
// digits are drawn only as needed; a fair bit gives the sign. Then
// j = round(s·(k+x)) is decided exactly from x's known digits: with the
// first n digits X, x ∈ (X/2^n, (X+1)/2^n) almost surely, so s·(k+x) + ½
// lies in the open interval (t_lo, t_hi) with t_lo = s·(k + X/2^n) + ½,
// t_hi = t_lo + s/2^n, all dyadic rationals; when no integer lies strictly
// inside it, j = ⌊t_lo⌋ exactly; otherwise one more digit of x is drawn
// and the test repeated. The digits are first extended to 56 (then the
// test is one 64×64-bit product and a 128-bit comparison; it is undecided
// with probability about 2s·2⁻⁵⁶) and one at a time after that (math/big).
// The sample is ±j.
//
// Ties: s·(k+x) is a half-integer only for x on a countable set, which has
// probability 0; there the refinement would draw digits forever, so the
// algorithm terminates with probability 1 and the tie rule is immaterial
// (the test never decides a boundary point: it decides only intervals
// that contain no half-integer in their interior).
//
// Every step draws bits from one stream in a fixed order (ref_test.go
// checks this sample by sample against a math/big reference that uses
// big.Rat interval tests), so a stream yields the same samples on every
// machine.
//
// - RoundedNormal: round(s·X) for X ∼ N(0, 1) and a dyadic scale s, the
// secure release's noise. Its law is exactly that of the continuous
// Gaussian N(0, s²) rounded to the integers, so adding it to an integer
// vector is post-processing of the continuous Gaussian mechanism (its
// PLD and RDP unchanged). |X| comes from an exact rejection sampler
// over strips (strips.go; Karney's Algorithm N, "Sampling exactly from
// the normal distribution", ACM TOMS 42(1), 2016, in urand.go is the
// textbook alternative the tests check it against), the fraction kept
// as a lazily drawn uniform (u-rand) and the rounding decided exactly
// from its digits (rounded.go).
// - LaplaceTail: the exact Bernoulli P[Lap(b) > t] for rational t (PTR's
//
// Speed: the random words are consumed bit by bit (bitSrc), and
// comparisons use whole words where the digits are known. Measured per
// sample at s ≈ 2¹⁴·√2 (BenchmarkRoundedNormal and neighbours): 67 CPU-ns
// for RoundedNormal, 211 by Karney's Algorithm N, 129 for the discrete
// Gaussian at σ = 36045, 10 for float64 NormFloat64. Fast paths use 64-bit
// (and 128-bit) arithmetic; astronomically unlikely cases take math/big
// paths that use the same bits in the same order and so return the same
// sample (the ref tests check the fast code against math/big references
// sample by sample).
type RoundedNormal struct {
	m uint64 // s = m/2^f, m odd (or m = 0 is refused)
	f uint
}

// roundDigits is how many digits of x the rounding test first looks at.
const roundDigits = 56

// maxRoundedScaleExp bounds s below 2^62 (so |sample| < 2⁶³ on every
// path that does not panic; a panic needs |X| ≳ 2³⁰).
const maxRoundedScaleExp = 32

// NewRoundedNormal returns round(s·X) for the scale s = m/2^f, m ≥ 1,
// f ≤ 1000, s < 2³².
func NewRoundedNormal(m uint64, f uint) (*RoundedNormal, error) {
	if m == 0 || f > 1000 {
		return nil, fmt.Errorf("exactnoise: rounded normal scale %d/2^%d out of range", m, f)
	}
	for m%2 == 0 && f > 0 {
		m, f = m/2, f-1
	}
	if bits.Len64(m) > int(f)+maxRoundedScaleExp {
		return nil, fmt.Errorf("exactnoise: rounded normal scale %d/2^%d at or above 2^%d", m, f, maxRoundedScaleExp)
	}
	return &RoundedNormal{m: m, f: f}, nil
}

// RoundedNormalAtLeast returns round(s'·X) with s' the smallest number
// m/2^f ≥ s whose numerator m fits in 64 bits (s' = s when s has at most
// 64 significant bits; otherwise s' − s < 2⁻⁶³·s), and whether s' = s.
// s must be positive and finite, 2⁻⁹⁰⁰ ≤ s < 2³².
func RoundedNormalAtLeast(s *big.Float) (*RoundedNormal, bool, error) {
	if s.Sign() <= 0 || s.IsInf() {
		return nil, false, fmt.Errorf("exactnoise: rounded normal scale %v must be positive and finite", s)
	}
	mant := new(big.Float)
	e := s.MantExp(mant) // s = mant·2^e, mant ∈ [½, 1)
	if e < -900 || e > maxRoundedScaleExp {
		return nil, false, fmt.Errorf("exactnoise: rounded normal scale %v out of range", s)
	}
	mant.SetMantExp(mant, 64) // in [2⁶³, 2⁶⁴)
	mi, acc := mant.Int(nil)  // truncated
	exact := acc == big.Exact
	if !exact {
		mi.Add(mi, big.NewInt(1))
	}
	f := 64 - e
	m := new(big.Int).Set(mi)
	if !m.IsUint64() { // m = 2⁶⁴ after rounding up
		m.Rsh(m, 1)
		f--
	}
	g, err := NewRoundedNormal(m.Uint64(), uint(f))
	return g, exact, err
}

// Scale returns s = M/2^F as (M, F), M odd unless F = 0.
func (g *RoundedNormal) Scale() (m uint64, f uint) { return g.m, g.f }

// ScaleFloat returns s as an exact big.Float.
func (g *RoundedNormal) ScaleFloat() *big.Float {
	v := new(big.Float).SetPrec(64).SetUint64(g.m)
	return v.SetMantExp(v, -int(g.f))
}

// String describes s.
func (g *RoundedNormal) String() string {
	v, _ := g.ScaleFloat().Float64()
	return fmt.Sprintf("round(%g·N(0,1)) (s = %d/2^%d)", v, g.m, g.f)
}

// normalScratch holds the u-rands of one sampling goroutine and the strip
// tables.
type normalScratch struct {
	x, p, q urand
	st      *strips
}

func newNormalScratch() *normalScratch { return &normalScratch{st: theStrips()} }

// Sample draws one value.
func (g *RoundedNormal) Sample(r *rand.Rand) int64 {
	s := bitSrc{r: r}
	return g.sample(&s, newNormalScratch())
}

// Fill sets every element of dst to an independent sample, drawing from
// one bit buffer across the samples (so dst is a function of r's stream).
func (g *RoundedNormal) Fill(r *rand.Rand, dst []int64) {
	s := bitSrc{r: r}
	sc := newNormalScratch()
	for i := range dst {
		dst[i] = g.sample(&s, sc)
	}
}

// sample draws |X| = (k + x)·2^−d (the strip sampler), then the sign bit,
// then rounds s·|X| = (m/2^{F+d})·(k + x).
func (g *RoundedNormal) sample(s *bitSrc, sc *normalScratch) int64 {
	k, d := sc.st.halfNormal(s, &sc.x, &sc.p, &sc.q)
	return g.finish(s, sc, k, g.f+d)
}

// sampleKarney is sample with |X| = k + x from Karney's Algorithm N
// (bitSrc.normal) instead of the strip sampler: the textbook exact
// sampler, kept as an independent check of the strip sampler's law
// (the tests compare both with the exact pmf and with each other).
func (g *RoundedNormal) sampleKarney(s *bitSrc, sc *normalScratch) int64 {
	k := s.normal(&sc.x, &sc.p, &sc.q)
	return g.finish(s, sc, k, g.f)
}

// finish draws the sign bit and rounds (m/2^f)·(k + x).
func (g *RoundedNormal) finish(s *bitSrc, sc *normalScratch, k uint64, f uint) int64 {
	neg := s.bit() == 1
	x := &sc.x
	if x.n < roundDigits {
		x.push(s.take(roundDigits-x.n), roundDigits-x.n)
	}
	j, ok := g.round56(k, f, x)
	if !ok {
		j = g.roundBig(s, k, f, x)
	}
	if neg {
		return -j
	}
	return j
}

// round56 is the rounding test with exactly 56 known digits of x, k < 128
// and F ≤ 71, in 128-bit integers: A = k·2⁵⁶ + X < 2⁶³, D = F + 56 ≤ 127,
// T = M·A + 2^{D−1} < 2¹²⁸ is t_lo·2^D; j = ⌊T/2^D⌋ and the interval is
// decided iff (T mod 2^D) + M ≤ 2^D (t_hi ≤ j + 1). ok is false when these
// conditions fail or the test is undecided (then roundBig continues).
func (g *RoundedNormal) round56(k uint64, f uint, x *urand) (int64, bool) {
	if x.n != roundDigits || k >= 128 || f > 127-roundDigits {
		return 0, false
	}
	a := k<<roundDigits | x.w>>(64-roundDigits)
	hi, lo := bits.Mul64(g.m, a)
	d := f + roundDigits
	var c uint64
	if d-1 >= 64 {
		hi += 1 << (d - 1 - 64)
	} else {
		lo, c = bits.Add64(lo, 1<<(d-1), 0)
		hi += c
	}
	var j, fh, fl uint64 // j = T >> d, (fh, fl) = T mod 2^d
	if d >= 64 {
		j, fh, fl = hi>>(d-64), hi&(1<<(d-64)-1), lo
	} else {
		if hi>>d != 0 {
			return 0, false
		}
		j, fh, fl = hi<<(64-d)|lo>>d, 0, lo&(1<<d-1)
	}
	if j > math.MaxInt64/2 {
		return 0, false
	}
	sl, c := bits.Add64(fl, g.m, 0)
	sh := fh + c
	var decided bool
	if d >= 64 {
		p := uint64(1) << (d - 64) // 2^d = (p, 0)
		decided = sh < p || (sh == p && sl == 0)
	} else {
		decided = sh == 0 && sl <= 1<<d
	}
	return int64(j), decided
}

// roundBig is the rounding test in math/big for any k, F and number n of
// known digits, drawing one more digit of x whenever undecided.
func (g *RoundedNormal) roundBig(s *bitSrc, k uint64, f uint, x *urand) int64 {
	m := new(big.Int).SetUint64(g.m)
	for {
		n := x.n
		a := new(big.Int).SetUint64(k)
		for w := uint(0); w*64 < n; w++ { // a = k·2^n + X
			b := min(n-w*64, 64)
			a.Lsh(a, b)
			a.Or(a, new(big.Int).SetUint64(x.word(w)>>(64-b)))
		}
		d := f + n
		t := new(big.Int).Mul(m, a)
		t.Add(t, new(big.Int).Lsh(big.NewInt(1), d-1))
		j := new(big.Int).Rsh(t, d)
		frac := t.Sub(t, new(big.Int).Lsh(j, d))
		frac.Add(frac, m)
		if frac.Cmp(new(big.Int).Lsh(big.NewInt(1), d)) <= 0 {
			if !j.IsInt64() || j.Int64() > math.MaxInt64/2 {
				panic("exactnoise: rounded normal sample beyond int64")
			}
			return j.Int64()
		}
		x.push(s.bit(), 1)
	}
}
