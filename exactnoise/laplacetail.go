package exactnoise

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
)

// LaplaceTail returns true with probability exactly P[L > t] for
// L ∼ Lap(0, b), the continuous Laplace distribution of scale b > 0, and a
// rational t:
//
//	P[L > t] = ½·e^{−t/b}      for t ≥ 0,
//	P[L > t] = 1 − ½·e^{t/b}   for t < 0.
//
// The event ½·e^{−|t|/b} is a fair bit AND Bernoulli(e^{−|t|/b})
// (BernoulliExp's CKS20 Algorithm 1 on the exact rational |t|/b, in
// math/big when it does not fit 64 bits); for t < 0 the result is its
// negation. So the returned bit has the law of [Δ + L > B] for t = B − Δ:
// it is post-processing of the Laplace mechanism's output, drawn without
// floating point (PTR's test releases only this bit).
func LaplaceTail(r *rand.Rand, t, b *big.Rat) bool {
	if b.Sign() <= 0 {
		panic("exactnoise: LaplaceTail with b ≤ 0")
	}
	s := &bitSrc{r: r}
	q := new(big.Rat).Quo(new(big.Rat).Abs(t), b) // |t|/b
	half := s.bit() == 0
	var ev bool
	if n, d := q.Num(), q.Denom(); n.IsUint64() && d.IsUint64() {
		ev = half && s.bernExp(n.Uint64(), d.Uint64())
	} else {
		ev = half && s.bernExpBig(n, d)
	}
	if t.Sign() >= 0 {
		return ev
	}
	return !ev
}

// PTRThreshold returns the PTR test threshold B as an exact dyadic
// rational: the value b·log(1/(2δ₀)) of Theorem 4.3 rounded up (with a
// relative margin of 10⁻¹², then to a multiple of 2^−30·2^⌈log₂ B⌉), such
// that P[Lap(b) > B] = ½·e^{−B/b} ≤ δ₀ holds exactly. The inequality is
// verified in rational arithmetic: it is 2δ₀·e^{B/b} ≥ 1, and the partial
// sums of e^y = Σ yⁿ/n! (y = B/b > 0) are lower bounds, so a partial sum
// with 2δ₀·Σ ≥ 1 proves it. Requires b > 0 finite and 0 < δ₀ ≤ ½ (B = 0
// at δ₀ = ½).
func PTRThreshold(b, delta0 float64) (*big.Rat, error) {
	if !(b > 0) || math.IsInf(b, 0) || !(delta0 > 0 && delta0 <= 0.5) {
		return nil, fmt.Errorf("exactnoise: PTR threshold needs b > 0 finite and 0 < δ₀ ≤ ½, got b = %v, δ₀ = %v", b, delta0)
	}
	if delta0 == 0.5 {
		return new(big.Rat), nil
	}
	approx := b * math.Log(1/(2*delta0)) * (1 + 1e-12)
	if !(approx > 0) || math.IsInf(approx, 0) {
		return nil, fmt.Errorf("exactnoise: PTR threshold b·log(1/(2δ₀)) = %v out of range", approx)
	}
	_, e := math.Frexp(approx)
	unit := math.Ldexp(1, e-30)
	br := new(big.Rat).SetFloat64(b)
	two := new(big.Rat).SetFloat64(2 * delta0) // exact: a power-of-two multiple
	for iter := 0; iter < 64; iter++ {
		B := new(big.Rat).SetFloat64(math.Ceil(approx/unit) * unit) // exact: an integer times a power of two
		if expLowerAtLeast(new(big.Rat).Quo(B, br), new(big.Rat).Inv(two)) {
			return B, nil
		}
		approx += unit
	}
	return nil, fmt.Errorf("exactnoise: could not certify the PTR threshold for b = %v, δ₀ = %v", b, delta0)
}

// expLowerAtLeast reports whether a partial sum of e^y = Σ_{n ≥ 0} yⁿ/n!
// reaches c (y ≥ 0): then e^y ≥ c. It sums until the terms fall below
// 2⁻²⁰⁰ relative to the partial sum, so a false result means e^y < c or
// e^y exceeds c by less than the remainder (the caller then moves up).
func expLowerAtLeast(y, c *big.Rat) bool {
	sum, term := big.NewRat(1, 1), big.NewRat(1, 1)
	tiny := new(big.Rat).SetFrac(big.NewInt(1), new(big.Int).Lsh(big.NewInt(1), 200))
	for n := int64(1); n < 10000; n++ {
		if sum.Cmp(c) >= 0 {
			return true
		}
		term.Mul(term, y)
		term.Quo(term, big.NewRat(n, 1))
		sum.Add(sum, term)
		if new(big.Rat).Quo(term, sum).Cmp(tiny) < 0 && new(big.Rat).SetInt64(n).Cmp(y) > 0 {
			return sum.Cmp(c) >= 0
		}
	}
	return sum.Cmp(c) >= 0
}
