package exactnoise

import (
	"math"
	"math/big"
	"testing"

	"github.com/privtrain/privtrain/randstream"
)

// LaplaceTail's frequency against P[Lap(b) > t] for t on both sides of 0,
// with |t|/b fitting 64 bits and not (t with a 100-bit denominator).
func TestLaplaceTail(t *testing.T) {
	r := randstream.FromSeed(21).Stream("tail", 0)
	const n = 200000
	huge := new(big.Int).Lsh(big.NewInt(1), 100)
	for _, c := range []struct {
		t  *big.Rat
		b  float64
		bf float64 // t as a float, for the expected value
	}{
		{big.NewRat(0, 1), 1, 0},
		{big.NewRat(3, 2), 0.5, 1.5},
		{big.NewRat(-3, 2), 0.5, -1.5},
		{big.NewRat(-1, 4), 2, -0.25},
		{big.NewRat(7, 1), 3, 7},
		{new(big.Rat).SetFrac(new(big.Int).Add(huge, big.NewInt(1)), huge), 1, 1}, // 1 + 2⁻¹⁰⁰
		{new(big.Rat).SetFrac(new(big.Int).Neg(huge), new(big.Int).Add(huge, big.NewInt(3))), 0.25, -1},
	} {
		b := new(big.Rat).SetFloat64(c.b)
		k := 0
		for i := 0; i < n; i++ {
			if LaplaceTail(r, c.t, b) {
				k++
			}
		}
		want := 0.5 * math.Exp(-c.bf/c.b)
		if c.bf < 0 {
			want = 1 - 0.5*math.Exp(c.bf/c.b)
		}
		zWithin(t, "LaplaceTail("+c.t.String()+")", k, n, want)
	}
}

// PTRThreshold: ½e^{−B/b} ≤ δ₀, B within 10⁻⁸ (relative) of
// b·log(1/(2δ₀)); and the certificate refuses a B just below the exact
// threshold.
func TestPTRThreshold(t *testing.T) {
	for _, c := range []struct{ b, delta0 float64 }{{1, 1e-5}, {0.5, 1e-6}, {3.7, 0.01}, {100, 1e-12}, {0.05, 0.49}} {
		B, err := PTRThreshold(c.b, c.delta0)
		if err != nil {
			t.Fatal(err)
		}
		bf, _ := B.Float64()
		exact := c.b * math.Log(1/(2*c.delta0))
		if bf < exact || bf > exact*(1+1e-8) {
			t.Errorf("b = %v, δ₀ = %v: B = %v, b·log(1/(2δ₀)) = %v", c.b, c.delta0, bf, exact)
		}
		if p := 0.5 * math.Exp(-bf/c.b); p > c.delta0*(1+1e-14) {
			t.Errorf("b = %v, δ₀ = %v: P[Lap > B] = %v", c.b, c.delta0, p)
		}
	}
	if B, err := PTRThreshold(2, 0.5); err != nil || B.Sign() != 0 {
		t.Errorf("δ₀ = ½: B = %v, %v; want 0", B, err)
	}
	// e^y ≥ c is certified for y = log c + 10⁻⁹ and refused for y = log c − 10⁻⁹.
	c := new(big.Rat).SetFloat64(1e5)
	if !expLowerAtLeast(new(big.Rat).SetFloat64(math.Log(1e5)+1e-9), c) {
		t.Error("e^{log c + 1e-9} ≥ c not certified")
	}
	if expLowerAtLeast(new(big.Rat).SetFloat64(math.Log(1e5)-1e-9), c) {
		t.Error("e^{log c − 1e-9} ≥ c certified")
	}
	for _, bad := range [][2]float64{{0, 1e-5}, {1, 0}, {1, 0.51}, {math.Inf(1), 1e-5}} {
		if _, err := PTRThreshold(bad[0], bad[1]); err == nil {
			t.Errorf("PTRThreshold(%v, %v) accepted", bad[0], bad[1])
		}
	}
}
