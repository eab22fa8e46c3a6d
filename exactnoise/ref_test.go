package exactnoise

import (
	"math/big"
	"math/rand/v2"
	"testing"
)

// The reference sampler below runs the same algorithms as the fast code
// (CKS20 Algorithms 1–3 on the same bit stream, in the same order of
// decisions) with every number a big.Int and the arithmetic written
// differently: the k-th binary digit of n/d is ⌊2^k·n/d⌋ mod 2, computed
// afresh for each k; Lemire's rejection uses big products and 2^w mod t. On the same
// stream, fast and reference must return the same values — for every σ²,
// including those where the fast path's 64-bit (and 128-bit) arithmetic
// would overflow and it switches to math/big.
type ref struct{ s *bitSrc }

func bigU(v uint64) *big.Int { return new(big.Int).SetUint64(v) }

// below: uniform in [0, t) by Lemire's rejection on w bits: w = bitlen(t)
// + 10 when that keeps w + bitlen(t) ≤ 64, else 64.
func (f ref) below(t *big.Int) *big.Int {
	w := uint(64)
	if b := uint(t.BitLen()); 2*b+10 <= 64 {
		w = b + 10
	}
	pow := new(big.Int).Lsh(big.NewInt(1), w)
	thresh := new(big.Int).Mod(pow, t)
	for {
		x := new(big.Int).Mul(bigU(f.s.take(w)), t)
		q, l := new(big.Int).QuoRem(x, pow, new(big.Int))
		if l.Cmp(thresh) >= 0 {
			return q
		}
	}
}

// bern: Bernoulli(n/d) by the first differing binary digit.
func (f ref) bern(n, d *big.Int) bool {
	if n.Cmp(d) >= 0 {
		return true
	}
	if n.Sign() == 0 {
		return false
	}
	for k := uint(1); ; k++ {
		digit := new(big.Int).Quo(new(big.Int).Lsh(n, k), d).Bit(0)
		if uint(f.s.bit()) != digit {
			return digit == 1
		}
	}
}

// chain: the first k ≥ 2 with q ≥ 8!/k!, q uniform in [0, 8!), then
// trials Bernoulli(1/k) one at a time past 8.
func (f ref) chain() int64 {
	fact := func(k int64) *big.Int { return new(big.Int).MulRange(1, k) }
	q := f.below(fact(8))
	for k := int64(2); k <= 8; k++ {
		if q.Cmp(new(big.Int).Quo(fact(8), fact(k))) >= 0 {
			return k
		}
	}
	k := int64(9)
	for f.bern(big.NewInt(1), big.NewInt(k)) {
		k++
	}
	return k
}

func (f ref) bernExpFrac(n, d *big.Int) bool {
	switch {
	case n.Sign() == 0:
		return true
	case n.Cmp(d) >= 0:
		return f.chain()%2 == 1
	case !f.bern(n, d):
		return true
	}
	kc := f.chain()
	k := int64(2)
	for k < kc && f.bern(n, d) {
		k++
	}
	return k%2 == 1
}

func (f ref) bernExp(n, d *big.Int) bool {
	q, rem := new(big.Int).QuoRem(n, d, new(big.Int))
	for i := new(big.Int).Set(q); i.Sign() > 0; i.Sub(i, big.NewInt(1)) {
		if !f.bernExpFrac(big.NewInt(1), big.NewInt(1)) {
			return false
		}
	}
	return f.bernExpFrac(rem, d)
}

func (f ref) laplace(t, sc *big.Int) *big.Int {
	for {
		u := f.below(t)
		if !f.bernExpFrac(u, t) {
			continue
		}
		v := big.NewInt(0)
		for f.bernExpFrac(big.NewInt(1), big.NewInt(1)) {
			v.Add(v, big.NewInt(1))
		}
		x := new(big.Int).Mul(t, v)
		x.Add(x, u)
		y := x.Quo(x, sc)
		if f.s.bit() == 1 {
			if y.Sign() == 0 {
				continue
			}
			return y.Neg(y)
		}
		return y
	}
}

// gaussian: the staircase proposal (U uniform below t = ⌊√(2σ²)⌋,
// V ∼ Geometric(1 − e⁻¹), sign, −0 rejected) accepted with probability
// exp(−(x² − 2σ²V + C)/(2σ²)), C = max_w (2σ²w − w²t²) found by trying
// w = 0..4 (t ≥ 1 makes the maximum at w ≤ 2).
func (f ref) gaussian(sigma2 uint64) int64 {
	den := new(big.Int).Lsh(bigU(sigma2), 1)
	t := new(big.Int).Sqrt(den)
	c := big.NewInt(0)
	for w := int64(0); w <= 4; w++ {
		v := new(big.Int).Mul(den, big.NewInt(w))
		v.Sub(v, new(big.Int).Mul(new(big.Int).Mul(t, t), big.NewInt(w*w)))
		if v.Cmp(c) > 0 {
			c = v
		}
	}
	for {
		u := f.below(t)
		v := big.NewInt(0)
		for f.chain()%2 == 1 {
			v.Add(v, big.NewInt(1))
		}
		x := new(big.Int).Mul(t, v)
		x.Add(x, u)
		neg := f.s.bit() == 1
		if neg && x.Sign() == 0 {
			continue
		}
		num := new(big.Int).Mul(x, x)
		num.Add(num, c)
		num.Sub(num, new(big.Int).Mul(den, v))
		if num.Sign() < 0 {
			panic("reference: negative acceptance exponent")
		}
		if f.bernExp(num, den) {
			if neg {
				x.Neg(x)
			}
			return x.Int64()
		}
	}
}

// samePosition reports whether two sources over identical streams have
// used the same number of bits (one may have loaded its next word
// early): the next 64 bits agree. It consumes them from both.
func samePosition(a, b *bitSrc) bool { return a.take(64) == b.take(64) }

// twin returns two bit sources over identical streams.
func twin(seed uint64) (*bitSrc, *bitSrc) {
	var k [32]byte
	k[0], k[1] = byte(seed), byte(seed>>8)
	return &bitSrc{r: rand.New(rand.NewChaCha8(k))}, &bitSrc{r: rand.New(rand.NewChaCha8(k))}
}

func TestGaussianMatchesReference(t *testing.T) {
	for i, s2 := range []uint64{1, 2, 3, 7, 30, 1000, 1 << 20, 325_000_000, 36045 * 36045,
		1<<31 - 1, 1 << 31, 3 << 31, 1 << 40, 1<<62 - 1, 1 << 62} {
		g, err := NewGaussian(s2)
		if err != nil {
			t.Fatal(err)
		}
		a, b := twin(uint64(i) + 100)
		n := 2000
		for j := 0; j < n; j++ {
			got, want := g.sample(a), (ref{b}).gaussian(s2)
			if got != want {
				t.Fatalf("σ² = %d, sample %d: fast %d, reference %d", s2, j, got, want)
			}
		}
		if !samePosition(a, b) {
			t.Fatalf("σ² = %d: fast and reference used different bits", s2)
		}
	}
}

// accept's 128-bit fast path and its math/big fallback decide alike on
// the same stream, for x up to 2⁶³ − 1 (the fallback is taken when
// γ ≥ 2⁶⁴, e.g. x ≥ 2³³ at σ² = 1).
func TestAcceptFastAndBigAgree(t *testing.T) {
	for i, s2 := range []uint64{1, 30, 36045 * 36045, 1 << 62} {
		g, _ := NewGaussian(s2)
		for _, x := range []uint64{0, 1, g.t / 2, g.t, 2*g.t + 1, 5 * g.t, 40 * g.t, 1 << 33, 1 << 40, 1<<63 - 1} {
			v := x / g.t
			a, b := twin(uint64(1000*i) + x%997)
			for j := 0; j < 200; j++ {
				if p, q := g.accept(a, x, v), g.acceptBig(b, x, v); p != q {
					t.Fatalf("σ² = %d, x = %d: fast %v, big %v", s2, x, p, q)
				}
			}
		}
	}
}

func TestLaplaceMatchesReference(t *testing.T) {
	for i, b := range []float64{1, 0.75, 2.5, 1024, 0.1, 1e6, 1 << 40} {
		l, err := NewLaplace(b)
		if err != nil {
			t.Fatal(err)
		}
		x, y := twin(uint64(i) + 200)
		for j := 0; j < 2000; j++ {
			got, want := l.sample(x, newLemire(l.T)), (ref{y}).laplace(bigU(l.T), bigU(l.S))
			if !want.IsInt64() || got != want.Int64() {
				t.Fatalf("b = %v, sample %d: fast %d, reference %v", b, j, got, want)
			}
		}
	}
	if _, err := NewLaplace(1 << 53); err == nil {
		t.Error("NewLaplace(2⁵³) accepted")
	}
}

// bern, bernBig and the reference's digit-by-digit comparison agree on the
// same stream, across sizes where 2r overflows 64 bits.
func TestBernMatchesReference(t *testing.T) {
	pick := rand.New(rand.NewPCG(3, 4))
	for c := 0; c < 3000; c++ {
		var d uint64
		switch c % 3 {
		case 0:
			d = 1 + pick.Uint64N(100)
		case 1:
			d = 1 + pick.Uint64N(1<<40)
		default:
			d = 1<<63 + pick.Uint64N(1<<63) // 2r overflows
		}
		n := pick.Uint64N(d + 1)
		a, b := twin(uint64(c))
		_, cc := twin(uint64(c))
		for j := 0; j < 100; j++ {
			if k := uint(pick.IntN(64)); k > 0 { // vary the alignment in the words
				a.take(k)
				b.take(k)
				cc.take(k)
			}
			x, y, z := a.bern(n, d), b.bernBig(bigU(n), bigU(d)), (ref{cc}).bern(bigU(n), bigU(d))
			if x != y || x != z {
				t.Fatalf("n/d = %d/%d: bern %v, bernBig %v, reference %v", n, d, x, y, z)
			}
			if x, y, z := a.take(64), b.take(64), cc.take(64); x != y || x != z {
				t.Fatalf("n/d = %d/%d: bern, bernBig and the reference used different bits", n, d)
			}
		}
	}
}

// below and the reference Lemire agree, for ranges using 32- and 64-bit
// words.
func TestBelowMatchesReference(t *testing.T) {
	for i, n := range []uint64{1, 2, 3, 1000, 40320, 1<<27 - 1, 1 << 27, 1<<32 - 1, 1 << 32, 1<<32 + 1, 3 << 40, 1<<64 - 1} {
		a, b := twin(uint64(i))
		for j := 0; j < 1000; j++ {
			x, y := a.below(newLemire(n)), (ref{b}).below(bigU(n))
			if !y.IsUint64() || x != y.Uint64() || x >= n {
				t.Fatalf("below(%d): %d, reference %v", n, x, y)
			}
		}
	}
}
