package exactnoise

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// refNormal is the rounded normal sampler written independently: u-rands
// are slices of digits compared one digit at a time, k is found by
// big.Int square roots, and the rounding test compares the interval of
// s·(k+x) + ½ with integers in big.Rat. It draws the same bits in the same
// order as RoundedNormal (Algorithm N, sign, 56 digits, then one at a
// time), so on one stream both must return the same samples.
type refNormal struct {
	s    *bitSrc
	m, f *big.Int // s = m/2^f
}

func (r refNormal) less(a, b *[]uint64) bool {
	for i := 0; ; i++ {
		if i >= len(*b) {
			*b = append(*b, r.s.bit())
		}
		*a = append(*a, r.s.bit())
		if (*a)[i] != (*b)[i] {
			return (*a)[i] < (*b)[i]
		}
	}
}

// vonNeumann: the chain x > p₁ > p₂ > … of fresh u-rands; [length even].
// x == nil means x = ½ (Algorithm H: p₁ > ½ iff its first digit is 1).
func (r refNormal) vonNeumann(x *[]uint64) bool {
	p := []uint64{}
	if x == nil {
		p = append(p, r.s.bit())
		if p[0] == 1 {
			return true
		}
	} else if !r.less(&p, x) {
		return true
	}
	for n := 1; ; n++ {
		q := []uint64{}
		if !r.less(&q, &p) {
			return n%2 == 0
		}
		p = q
	}
}

// expHalf: CKS20 Algorithm 1 at γ = ½ with fair bits for Bernoulli(½):
// the first K with A_K = 0, A_1 = bit, A_K = bit ∧ (K < chain) for K ≥ 2.
func (r refNormal) expHalf() bool {
	if r.s.bit() == 0 {
		return true
	}
	kc := (ref{r.s}).chain()
	k := int64(2)
	for k < kc && r.s.bit() == 1 {
		k++
	}
	return k%2 == 1
}

func (r refNormal) halfSquare(x *[]uint64) bool {
	prev := x
	for n := 0; ; n++ {
		if r.s.bit() == 1 {
			return n%2 == 0
		}
		z := []uint64{}
		if !r.less(&z, prev) {
			return n%2 == 0
		}
		w := []uint64{}
		if !r.less(&w, x) {
			return n%2 == 0
		}
		prev = &z
	}
}

func (r refNormal) sample() int64 {
	var k int64
	var x []uint64
	for {
		n := int64(0)
		for r.expHalf() {
			n++
		}
		root := new(big.Int).Sqrt(big.NewInt(n))
		if root.Int64()*root.Int64() != n {
			continue
		}
		k = root.Int64()
		x = []uint64{}
		ok := true
		for j := int64(0); j < k; j++ {
			if !r.vonNeumann(&x) {
				ok = false
				break
			}
		}
		if ok && r.halfSquare(&x) {
			break
		}
	}
	return r.round(k, x, uint(r.f.Uint64()))
}

// round draws the sign, extends x to 56 digits and then one at a time
// until s·(k + x) + ½ (s = m/2^f) has a certain integer part.
func (r refNormal) round(k int64, x []uint64, f uint) int64 {
	neg := r.s.bit() == 1
	for len(x) < roundDigits {
		x = append(x, r.s.bit())
	}
	s := new(big.Rat).SetFrac(r.m, new(big.Int).Lsh(big.NewInt(1), f))
	half := big.NewRat(1, 2)
	for {
		X := new(big.Int)
		for _, d := range x {
			X.Lsh(X, 1)
			X.Or(X, big.NewInt(int64(d)))
		}
		pow := new(big.Int).Lsh(big.NewInt(1), uint(len(x)))
		lo := new(big.Rat).SetFrac(new(big.Int).Add(new(big.Int).Mul(big.NewInt(k), pow), X), pow)
		hi := new(big.Rat).Add(lo, new(big.Rat).SetFrac(big.NewInt(1), pow))
		lo.Add(lo.Mul(lo, s), half)
		hi.Add(hi.Mul(hi, s), half)
		j := new(big.Int).Quo(lo.Num(), lo.Denom()) // ⌊lo⌋, lo > 0
		if hi.Cmp(new(big.Rat).SetInt(new(big.Int).Add(j, big.NewInt(1)))) <= 0 {
			if neg {
				j.Neg(j)
			}
			return j.Int64()
		}
		x = append(x, r.s.bit())
	}
}

func TestRoundedNormalMatchesReference(t *testing.T) {
	for i, c := range []struct {
		m uint64
		f uint
	}{
		{1, 0}, {3, 0}, {7, 3}, {1, 1}, {3152519739159347, 52}, // 0.7
		{1, 14}, {23170, 0}, {0x8000000000000001, 49}, // 2¹⁴(1 + 2⁻⁶³)
		{0xb504f333f9de6485, 49}, {0xfffffffffffffffb, 60}, // ≈ 2¹⁴·√2, ≈ 16
		{5, 70}, {9, 90}, // F > 71: the math/big path throughout
		{3, 2 - 0}, {(1 << 40) + 1, 10}, // s ≈ 2³⁰ (round56 declines large j)
	} {
		g, err := NewRoundedNormal(c.m, c.f)
		if err != nil {
			t.Fatal(err)
		}
		a, b := twin(uint64(i) + 300)
		ref := refNormal{s: b, m: new(big.Int).SetUint64(g.m), f: big.NewInt(int64(g.f))}
		sc := newNormalScratch()
		for j := 0; j < 3000; j++ {
			got, want := g.sampleKarney(a, sc), ref.sample()
			if got != want {
				t.Fatalf("s = %d/2^%d, sample %d: fast %d, reference %d", c.m, c.f, j, got, want)
			}
		}
		if !samePosition(a, b) {
			t.Fatalf("s = %d/2^%d: fast and reference used different bits", c.m, c.f)
		}
	}
}

// scripted is a rand.Source that returns its words, then ChaCha8 output.
type scripted struct {
	words []uint64
	rest  *rand.ChaCha8
}

func (s *scripted) Uint64() uint64 {
	if len(s.words) > 0 {
		w := s.words[0]
		s.words = s.words[1:]
		return w
	}
	return s.rest.Uint64()
}

// less on long known prefixes (several words, pushes across word
// boundaries): b knows the first n digits of the words W, the stream
// repeats W with digit p flipped, so a matches b for p digits (past word
// boundaries) and the comparison is decided at digit p when p < n, or
// runs past b's known digits otherwise. Fast and digit-by-digit reference
// must agree on the result, the digits drawn and the bits used; for p < n
// the result is known: a < b iff W's digit p is 1.
func TestLessLongPrefixes(t *testing.T) {
	W := []uint64{0x243f6a8885a308d3, 0x13198a2e03707344, 0xa4093822299f31d0, 0x082efa98ec4e6c89}
	digit := func(ws []uint64, i uint) uint64 { return ws[i>>6] >> (63 - i&63) & 1 }
	for trial := 0; trial < 600; trial++ {
		n, p := uint(trial%201), uint(trial*37%260)
		stream := append([]uint64(nil), W...)
		if p < 256 {
			stream[p>>6] ^= 1 << (63 - p&63)
		}
		var key [32]byte
		key[0] = byte(trial)
		mk := func() *bitSrc {
			return &bitSrc{r: rand.New(&scripted{words: append([]uint64(nil), stream...), rest: rand.NewChaCha8(key)})}
		}
		a, b := mk(), mk()
		var ua, ub urand
		rb := []uint64{}
		for i := uint(0); i < n; i++ {
			ub.push(digit(W, i), 1)
			rb = append(rb, digit(W, i))
		}
		ra := []uint64{}
		got, want := a.less(&ua, &ub), (refNormal{s: b}).less(&ra, &rb)
		if got != want || ua.n != uint(len(ra)) || ub.n != uint(len(rb)) {
			t.Fatalf("n = %d, p = %d: fast %v (%d, %d digits), reference %v (%d, %d)", n, p, got, ua.n, ub.n, want, len(ra), len(rb))
		}
		if p < n && (got != (digit(W, p) == 1) || ua.n != p+1) {
			t.Fatalf("n = %d, p = %d: a < b = %v after %d digits, want %v after %d", n, p, got, ua.n, digit(W, p) == 1, p+1)
		}
		for i := uint(0); i < ua.n; i++ {
			if ua.word(i>>6)>>(63-i&63)&1 != ra[i] {
				t.Fatalf("n = %d, p = %d: a's digit %d differs", n, p, i)
			}
		}
		for i := uint(0); i < ub.n; i++ {
			if ub.word(i>>6)>>(63-i&63)&1 != rb[i] {
				t.Fatalf("n = %d, p = %d: b's digit %d differs", n, p, i)
			}
		}
		if !samePosition(a, b) {
			t.Fatalf("n = %d, p = %d: fast and reference used different bits", n, p)
		}
	}
}

func TestURandPush(t *testing.T) {
	var u urand
	want := []uint64{}
	src := uint64(0x9e3779b97f4a7c15)
	for _, k := range []uint{1, 7, 64, 3, 63, 64, 2, 64, 1, 30, 40} {
		src = src*6364136223846793005 + 1442695040888963407
		v := src >> (64 - k)
		u.push(v, k)
		for i := int(k) - 1; i >= 0; i-- {
			want = append(want, v>>uint(i)&1)
		}
	}
	if u.n != uint(len(want)) {
		t.Fatalf("%d digits, want %d", u.n, len(want))
	}
	for i, d := range want {
		if got := u.word(uint(i)>>6) >> (63 - uint(i)&63) & 1; got != d {
			t.Fatalf("digit %d = %d, want %d", i, got, d)
		}
	}
	// reset and reuse: stale words must not leak into new digits.
	u.reset()
	u.push(0, 5)
	u.push(1, 1)
	if u.w>>58 != 1 || u.w<<6 != 0 {
		t.Fatalf("after reset: word %064b", u.w)
	}
}

// round56 at the rounding boundaries: x's 56 digits are placed within a
// few units of the last digit of (j+½)/s − k for many j, where the test is
// undecided or barely decided. round56 must report decided exactly when
// no integer lies strictly inside (t_lo, t_hi) (checked in big.Rat), and
// then return ⌊t_lo⌋.
func TestRound56AtBoundaries(t *testing.T) {
	for _, c := range []struct {
		m uint64
		f uint
	}{{3152519739159347, 52}, {3, 1}, {0xb504f333f9de6485, 50}, {0x8000000000000001, 49}, {3, 0}, {23170, 0}} {
		g, err := NewRoundedNormal(c.m, c.f)
		if err != nil {
			t.Fatal(err)
		}
		s := new(big.Rat).SetFrac(new(big.Int).SetUint64(g.m), new(big.Int).Lsh(big.NewInt(1), g.f))
		pow := new(big.Int).Lsh(big.NewInt(1), roundDigits)
		decidedCount, undecided := 0, 0
		for j := int64(0); j < 400; j++ {
			b := new(big.Rat).Quo(new(big.Rat).Add(big.NewRat(j, 1), big.NewRat(1, 2)), s) // (j+½)/s
			k := new(big.Int).Quo(b.Num(), b.Denom())
			if !k.IsUint64() || k.Uint64() >= 128 {
				break
			}
			rem := new(big.Rat).Sub(b, new(big.Rat).SetInt(k))
			x0 := new(big.Int).Quo(new(big.Int).Mul(rem.Num(), pow), rem.Denom())
			for dx := int64(-2); dx <= 2; dx++ {
				X := new(big.Int).Add(x0, big.NewInt(dx))
				if X.Sign() < 0 || X.Cmp(pow) >= 0 {
					continue
				}
				var x urand
				x.push(X.Uint64(), roundDigits)
				got, ok := g.round56(k.Uint64(), g.f, &x)
				lo := new(big.Rat).SetFrac(new(big.Int).Add(new(big.Int).Mul(k, pow), X), pow)
				hi := new(big.Rat).Add(lo, new(big.Rat).SetFrac(big.NewInt(1), pow))
				lo.Add(lo.Mul(lo, s), big.NewRat(1, 2))
				hi.Add(hi.Mul(hi, s), big.NewRat(1, 2))
				fl := new(big.Int).Quo(lo.Num(), lo.Denom())
				decided := hi.Cmp(new(big.Rat).SetInt(new(big.Int).Add(fl, big.NewInt(1)))) <= 0
				if ok != decided || (ok && got != fl.Int64()) {
					t.Fatalf("s = %d/2^%d, k = %d, X = %d: round56 = %d, %v; want %d, %v", c.m, c.f, k, X, got, ok, fl, decided)
				}
				if decided {
					decidedCount++
				} else {
					undecided++
				}
			}
		}
		if decidedCount == 0 || undecided == 0 {
			t.Errorf("s = %d/2^%d: %d decided, %d undecided cases: the boundary was not probed", c.m, c.f, decidedCount, undecided)
		}
	}
}

// refStrips is the strip sampler written digit by digit: the alias draw
// with big integers (ref.below), Bernoulli(n/d) by the digits of n/d
// (ref.bern), the chains on digit-slice u-rands, ρ's digits all from
// rhoDigit (never the table), e^{−V²/128} by ref.bernExp. Same bits, same
// order as strips.halfNormal.
func (r refNormal) strips(st *strips) (int64, []uint64, uint) {
	f := ref{r.s}
	for {
		j := r.s.take(8)
		var total uint64
		for _, w := range st.weights {
			total += w
		}
		u := f.below(new(big.Int).SetUint64(total)).Uint64()
		c := int(st.alias[j])
		if u < st.thresh[j] {
			c = int(j)
		}
		// chain: e^{−(n/d)·t} (or e^{−(n/d)·t²} when square); t's digits
		// drawn by the comparisons stay with t.
		chain := func(n, d int64, t *[]uint64, square bool) bool {
			prev := t
			for even := true; ; even = !even {
				if !f.bern(big.NewInt(n), big.NewInt(d)) {
					return even
				}
				z := []uint64{}
				if !r.less(&z, prev) {
					return even
				}
				if square {
					w := []uint64{}
					if !r.less(&w, t) {
						return even
					}
				}
				prev = &z
			}
		}
		rho := func() bool {
			if st.rhoOne[c] {
				return true
			}
			for k := uint(0); ; k++ {
				d := st.rhoDigit(c, k)
				if r.s.bit() != d {
					return d == 1
				}
			}
		}
		if c < stripCount {
			t := []uint64{}
			if !chain(int64(c), 256, &t, false) || !chain(1, 512, &t, true) || !rho() {
				continue
			}
			return int64(c), t, stripShift
		}
		v := int64(0)
		for f.chain()%2 == 1 {
			v++
		}
		var t []uint64
		for {
			t = []uint64{}
			if r.vonNeumann(&t) {
				break
			}
		}
		if !f.bernExp(big.NewInt(v*v), big.NewInt(128)) {
			continue
		}
		ok := true
		for w := v / 64; w > 0 && ok; w-- {
			ok = r.vonNeumann(&t)
		}
		if !ok || !chain(v%64, 64, &t, false) || !chain(1, 128, &t, true) || !rho() {
			continue
		}
		return 64 + v, t, tailShift
	}
}

func TestStripSamplerMatchesReference(t *testing.T) {
	st := theStrips()
	for i, c := range []struct {
		m uint64
		f uint
	}{{0xb504f333f9de6485, 49}, {3152519739159347, 52}, {3, 0}, {1, 0}, {5, 70}} {
		g, err := NewRoundedNormal(c.m, c.f)
		if err != nil {
			t.Fatal(err)
		}
		a, b := twin(uint64(i) + 500)
		ref := refNormal{s: b, m: new(big.Int).SetUint64(g.m), f: big.NewInt(int64(g.f))}
		sc := newNormalScratch()
		for j := 0; j < 1500; j++ {
			got := g.sample(a, sc)
			k, x, d := ref.strips(st)
			want := ref.round(k, x, g.f+d)
			if got != want {
				t.Fatalf("s = %d/2^%d, sample %d: fast %d, reference %d", c.m, c.f, j, got, want)
			}
		}
		if !samePosition(a, b) {
			t.Fatalf("s = %d/2^%d: fast and reference used different bits", c.m, c.f)
		}
	}
}

// The tail (component 128) and bernRho past the table's 64 digits, which
// random streams essentially never reach, against the reference on
// scripted streams: the alias draw forced to the tail bucket, and ρ's 64
// table digits fed back so that the comparison runs into rhoDigit.
func TestStripTailAndDeepDigits(t *testing.T) {
	st := theStrips()
	// bernRho on a stream that repeats ρ_c's 64 table digits, then random.
	for _, c := range []int{1, 17, 64, 127, stripCount} {
		for seed := 0; seed < 6; seed++ {
			var key [32]byte
			key[0], key[1] = byte(seed), byte(c)
			mk := func() *bitSrc {
				return &bitSrc{r: rand.New(&scripted{words: []uint64{st.rho[c]}, rest: rand.NewChaCha8(key)})}
			}
			a, b := mk(), mk()
			got := st.bernRho(a, c)
			want := func() bool {
				for k := uint(0); ; k++ {
					d := st.rhoDigit(c, k)
					if b.bit() != d {
						return d == 1
					}
				}
			}()
			if got != want || !samePosition(a, b) {
				t.Fatalf("component %d, seed %d: bernRho %v, digit by digit %v", c, seed, got, want)
			}
		}
	}
	// The table's digits are rhoDigit's.
	for _, c := range []int{1, 2, 50, 127, stripCount} {
		for k := uint(0); k < 64; k++ {
			if d := st.rhoDigit(c, k); d != st.rho[c]>>(63-k)&1 {
				t.Fatalf("ρ_%d digit %d: table %d, rhoDigit %d", c, k, st.rho[c]>>(63-k)&1, d)
			}
		}
	}
	// The tail, through halfNormal: find a bucket whose alias or own
	// component is the tail and script the alias draw onto it, then follow
	// with random bits; compare with the reference on the same stream.
	g, err := NewRoundedNormal(0xb504f333f9de6485, 49)
	if err != nil {
		t.Fatal(err)
	}
	tails := 0
	for j := 0; j < buckets; j++ {
		var total uint64
		for _, w := range st.weights {
			total += w
		}
		var u uint64
		switch {
		case j == stripCount && st.thresh[j] > 0:
			u = 0
		case int(st.alias[j]) == stripCount && st.thresh[j] < total:
			u = st.thresh[j]
		default:
			continue
		}
		// below(total) on k bits: x·total = q·2^k + l is accepted with q = u
		// when l ≥ 2^k mod total; search x from ⌈u·2^k/total⌉.
		k := st.lem.k
		pow := new(big.Int).Lsh(big.NewInt(1), k)
		tot := new(big.Int).SetUint64(total)
		x := new(big.Int).Mul(new(big.Int).SetUint64(u), pow)
		x.Add(x, new(big.Int).Sub(tot, big.NewInt(1)))
		x.Quo(x, tot)
		for ; ; x.Add(x, big.NewInt(1)) {
			q, l := new(big.Int).QuoRem(new(big.Int).Mul(x, tot), pow, new(big.Int))
			if q.Uint64() != u {
				t.Fatalf("bucket %d: no accepted draw for u = %d", j, u)
			}
			if l.Uint64() >= st.lem.thresh {
				break
			}
		}
		// The stream's first 8 + k bits: j, then x.
		v := new(big.Int).Lsh(big.NewInt(int64(j)), k)
		v.Or(v, x)
		v.Lsh(v, 128-8-k)
		words := []uint64{new(big.Int).Rsh(v, 64).Uint64(), new(big.Int).And(v, new(big.Int).SetUint64(^uint64(0))).Uint64()}
		for seed := 0; seed < 40; seed++ {
			var key [32]byte
			key[0], key[1] = byte(seed), byte(j)
			mk := func() *bitSrc {
				return &bitSrc{r: rand.New(&scripted{words: append([]uint64(nil), words...), rest: rand.NewChaCha8(key)})}
			}
			a, b := mk(), mk()
			sc := newNormalScratch()
			if c := st.component(mk()); c != stripCount {
				t.Fatalf("bucket %d: scripted draw gave component %d", j, c)
			}
			got := g.sample(a, sc)
			ref := refNormal{s: b, m: new(big.Int).SetUint64(g.m), f: big.NewInt(int64(g.f))}
			k, xs, d := ref.strips(st)
			want := ref.round(k, xs, g.f+d)
			if got != want || !samePosition(a, b) {
				t.Fatalf("bucket %d seed %d: fast %d, reference %d", j, seed, got, want)
			}
			tails++
		}
	}
	if tails == 0 {
		t.Fatal("no bucket reaches the tail")
	}
}

// The tables: weights are ⌈2³²·e^{−i²/512}⌉ (float64 check within one
// unit), ρ_c's digits match float64 values of 2^shift·e^{−n/512}/w, and the
// alias table gives every component exactly its weight.
func TestStripTables(t *testing.T) {
	st := theStrips()
	for c := 0; c <= stripCount; c++ {
		e := math.Exp(-float64(st.rhoN[c]) / 512)
		w := math.Ldexp(e, int(st.rhoShift[c]))
		if got := float64(st.weights[c]); got < w-1e-6*w || got > math.Ceil(w*(1+1e-12))+1e-9 {
			t.Errorf("component %d: weight %v, 2^shift·e^{−n/512} = %v", c, got, w)
		}
		rho := w / float64(st.weights[c])
		if st.rhoOne[c] {
			if c != 0 {
				t.Errorf("component %d has ρ = 1", c)
			}
			continue
		}
		if d := float64(st.rho[c]) / math.Ldexp(1, 64); math.Abs(d-rho) > 1e-12*rho+1e-18 {
			t.Errorf("component %d: ρ digits %v, float64 %v", c, d, rho)
		}
	}
	var total uint64
	for _, w := range st.weights {
		total += w
	}
	got := make([]uint64, buckets)
	for j := 0; j < buckets; j++ {
		got[j] += st.thresh[j]
		got[st.alias[j]] += total - st.thresh[j]
	}
	for c := 0; c < buckets; c++ {
		want := uint64(0)
		if c <= stripCount {
			want = buckets * st.weights[c]
		}
		if got[c] != want {
			t.Errorf("alias: component %d gets %d of %d·W, want %d", c, got[c], buckets, want)
		}
	}
	// expNeg512 brackets e^{−n/512} tightly (float64 reference).
	for _, n := range []uint64{0, 1, 511, 512, 4096, 16384} {
		lo, hi := expNeg512(n, 200)
		l, _ := new(big.Float).SetInt(lo).Float64()
		h, _ := new(big.Float).SetInt(hi).Float64()
		want := math.Exp(-float64(n) / 512)
		l, h = math.Ldexp(l, -200), math.Ldexp(h, -200)
		if l > h || math.Abs(l-want) > 1e-15*want || math.Abs(h-want) > 1e-15*want || new(big.Int).Sub(hi, lo).BitLen() > 40 {
			t.Errorf("e^{−%d/512}: [%v, %v], float64 %v (width %d bits)", n, l, h, want, new(big.Int).Sub(hi, lo).BitLen())
		}
	}
}
