// Package exactnoise samples the discrete Laplace and discrete Gaussian
// distributions exactly, with integer arithmetic only (Canonne, Kamath &
// Steinke, "The Discrete Gaussian for Differential Privacy", NeurIPS 2020,
// Algorithms 1–3; "CKS20" below).
//
// Floating-point samplers of continuous noise leak through the set of
// representable outputs (Mironov, "On Significance of the Least Significant
// Bits for Differential Privacy", CCS 2012). These samplers draw integers
// whose distribution is exactly the stated one given uniform random words:
// every decision is a comparison of integers drawn by rand.Rand.Uint64N
// (exactly uniform, by rejection) — no floating point is involved. Use them
// with a cryptographically secure stream (package randstream).
package exactnoise

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"math/rand/v2"
)

// BernoulliExp returns true with probability exp(−n/d) exactly, d > 0
// (CKS20 Algorithm 1: for γ = n/d ≤ 1, draw A_k ∼ Bernoulli(γ/k) for
// k = 1, 2, … until the first failure, and return whether that k is odd;
// for γ > 1, ⌊γ⌋ independent Bernoulli(e⁻¹) successes and then
// Bernoulli(exp(−(γ−⌊γ⌋)))).
func BernoulliExp(r *rand.Rand, n, d uint64) bool {
	if d == 0 {
		panic("exactnoise: BernoulliExp with d = 0")
	}
	return (&src{r: r}).bernoulliExp(n, d)
}

// src draws exactly uniform integers from r: r.Uint64N in general, and for
// a power-of-two range the next bits of a buffered word (independent
// uniform bits), which saves most of the words spent on coin flips.
type src struct {
	r   *rand.Rand
	buf uint64
	nb  uint
}

func (s *src) uint64n(n uint64) uint64 {
	if n&(n-1) != 0 {
		return s.r.Uint64N(n)
	}
	b := uint(bits.TrailingZeros64(n))
	if b == 0 {
		return 0
	}
	if s.nb < b {
		s.buf, s.nb = s.r.Uint64(), 64
	}
	v := s.buf & (n - 1)
	s.buf >>= b
	s.nb -= b
	return v
}

func (s *src) bernoulliExp(n, d uint64) bool {
	for i := n / d; i > 0; i-- {
		if !s.bernoulliExpFrac(1, 1) {
			return false
		}
	}
	return s.bernoulliExpFrac(n%d, d)
}

// bernoulliExpFrac is Algorithm 1 for γ = n/d ≤ 1: K = 1, 2, … while
// A_K ∼ Bernoulli(γ/K) succeeds; true iff the first failure is at an odd K.
// A_1 is Bernoulli(n/d) (certain when n = d, impossible when n = 0); for
// K ≥ 2, Bernoulli(n/(dK)) is one uniform draw below dK when dK fits in 64
// bits, else the conjunction of Bernoulli(n/d) and Bernoulli(1/K).
func (s *src) bernoulliExpFrac(n, d uint64) bool {
	if n == 0 || n < d && s.uint64n(d) >= n {
		return true // A_1 = 0: K = 1
	}
	k := uint64(2)
	for s.bernoulliRatio(n, d, k) {
		k++
	}
	return k%2 == 1
}

// bernoulliRatio returns true with probability n/(d·k), n ≤ d.
func (s *src) bernoulliRatio(n, d, k uint64) bool {
	if hi, dk := bits.Mul64(d, k); hi == 0 {
		return s.uint64n(dk) < n
	}
	return s.uint64n(d) < n && s.uint64n(k) == 0
}

// bernoulliExpBig returns true with probability exp(−n/d), n ≥ 0, d > 0,
// for numbers beyond 64 bits (the rare tails of the Gaussian sampler).
func (s *src) bernoulliExpBig(n, d *big.Int) bool {
	q, rem := new(big.Int).QuoRem(n, d, new(big.Int))
	one := big.NewInt(1)
	for i := new(big.Int).Set(q); i.Sign() > 0; i.Sub(i, one) {
		if !s.bernoulliExpFrac(1, 1) {
			return false
		}
	}
	k := uint64(1)
	for uniformBig(s.r, d).Cmp(rem) < 0 && s.uint64n(k) == 0 {
		k++
	}
	return k%2 == 1
}

// uniformBig returns a uniform integer in [0, d), d > 0, by rejection on
// d's bit length.
func uniformBig(r *rand.Rand, d *big.Int) *big.Int {
	nb := d.BitLen()
	words := make([]big.Word, (nb+bits.UintSize-1)/bits.UintSize)
	x := new(big.Int)
	for {
		for i := range words {
			words[i] = big.Word(r.Uint64())
		}
		if extra := len(words)*bits.UintSize - nb; extra > 0 {
			words[len(words)-1] &= big.Word(^uint64(0) >> extra)
		}
		x.SetBits(words)
		if x.Cmp(d) < 0 {
			return new(big.Int).Set(x)
		}
	}
}

// Laplace is the discrete Laplace distribution with scale b = T/S:
// P(z) = (1−e^{−1/b})/(1+e^{−1/b}) · e^{−|z|/b} for every integer z.
type Laplace struct {
	T, S uint64
}

// NewLaplace returns the discrete Laplace with scale b, written exactly as
// a ratio of integers T/S (every finite float64 is one).
func NewLaplace(b float64) (Laplace, error) {
	if !(b > 0) || math.IsInf(b, 0) {
		return Laplace{}, fmt.Errorf("exactnoise: discrete Laplace scale must be finite and > 0, got %v", b)
	}
	frac, exp := math.Frexp(b) // b = frac·2^exp, frac ∈ [0.5, 1)
	mant := uint64(frac * (1 << 53))
	exp -= 53
	for mant%2 == 0 && mant > 1 {
		mant /= 2
		exp++
	}
	switch {
	case exp >= 0:
		if exp > 63 || mant > math.MaxUint64>>uint(exp) {
			return Laplace{}, fmt.Errorf("exactnoise: discrete Laplace scale %v too large", b)
		}
		return Laplace{T: mant << uint(exp), S: 1}, nil
	case -exp > 62:
		return Laplace{}, fmt.Errorf("exactnoise: discrete Laplace scale %v has too fine a binary expansion", b)
	}
	return Laplace{T: mant, S: 1 << uint(-exp)}, nil
}

// Scale returns b = T/S.
func (l Laplace) Scale() float64 { return float64(l.T) / float64(l.S) }

// Sample draws one value (CKS20 Algorithm 2).
func (l Laplace) Sample(r *rand.Rand) int64 { return l.sample(&src{r: r}) }

func (l Laplace) sample(s *src) int64 {
	for {
		u := s.uint64n(l.T)
		if !s.bernoulliExp(u, l.T) {
			continue
		}
		var v uint64
		for s.bernoulliExp(1, 1) {
			v++
		}
		x := u + l.T*v
		y := x / l.S
		if s.uint64n(2) == 1 {
			if y == 0 {
				continue
			}
			return -int64(y)
		}
		return int64(y)
	}
}

// Gaussian is the discrete Gaussian N_Z(0, σ²) with integer variance
// parameter Sigma2 = σ²: P(z) ∝ exp(−z²/(2σ²)) for every integer z.
type Gaussian struct {
	Sigma2 uint64
	t      uint64   // ⌊σ⌋ + 1, the scale of the discrete Laplace proposal
	den    uint64   // 2σ²t², when it fits in 64 bits (else 0)
	denBig *big.Int // 2σ²t²
}

// NewGaussian returns N_Z(0, sigma2), sigma2 ≥ 1.
func NewGaussian(sigma2 uint64) (*Gaussian, error) {
	if sigma2 < 1 || sigma2 > 1<<62 {
		return nil, fmt.Errorf("exactnoise: discrete Gaussian σ² must be in [1, 2⁶²], got %d", sigma2)
	}
	g := &Gaussian{Sigma2: sigma2, t: isqrt(sigma2) + 1}
	g.denBig = new(big.Int).SetUint64(g.t)
	g.denBig.Mul(g.denBig, g.denBig)
	g.denBig.Mul(g.denBig, new(big.Int).SetUint64(2*sigma2))
	if g.denBig.IsUint64() {
		g.den = g.denBig.Uint64()
	}
	return g, nil
}

// isqrt returns ⌊√x⌋ exactly.
func isqrt(x uint64) uint64 {
	s := uint64(math.Sqrt(float64(x)))
	for s*s > x {
		s--
	}
	for (s+1)*(s+1) <= x {
		s++
	}
	return s
}

// Sample draws one value (CKS20 Algorithm 3): Y ∼ discrete Laplace of scale
// t = ⌊σ⌋+1, accepted with probability exp(−(|Y| − σ²/t)²/(2σ²)) =
// exp(−(|Y|·t − σ²)²/(2σ²t²)).
func (g *Gaussian) Sample(r *rand.Rand) int64 { return g.sample(&src{r: r}) }

// Fill sets every element of dst to an independent sample.
func (g *Gaussian) Fill(r *rand.Rand, dst []int64) {
	s := &src{r: r}
	for i := range dst {
		dst[i] = g.sample(s)
	}
}

func (g *Gaussian) sample(s *src) int64 {
	lap := Laplace{T: g.t, S: 1}
	for {
		y := lap.sample(s)
		ay := uint64(y)
		if y < 0 {
			ay = uint64(-y)
		}
		if g.accept(s, ay) {
			return y
		}
	}
}

func (g *Gaussian) accept(s *src, ay uint64) bool {
	hi, yt := bits.Mul64(ay, g.t)
	if hi == 0 && g.den != 0 {
		var a uint64 // |ay·t − σ²|
		if yt >= g.Sigma2 {
			a = yt - g.Sigma2
		} else {
			a = g.Sigma2 - yt
		}
		if h, n := bits.Mul64(a, a); h == 0 {
			return s.bernoulliExp(n, g.den)
		}
	}
	a := new(big.Int).SetUint64(ay)
	a.Mul(a, new(big.Int).SetUint64(g.t))
	a.Sub(a, new(big.Int).SetUint64(g.Sigma2))
	a.Mul(a, a)
	return s.bernoulliExpBig(a, g.denBig)
}
