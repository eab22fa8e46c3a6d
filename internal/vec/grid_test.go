package vec

import (
	"math"
	"math/rand/v2"
	"testing"
)

// gridRef is AddGrid computed independently of addGridGo, with big
// integers' semantics spelled out: n = the float32 product truncated
// toward zero when it fits in int64, else −2⁶³ (the amd64 conversion of
// out-of-range values, NaN and ±Inf); the sum of squares and the OR of
// |n| modulo 2⁶⁴.
func gridRef(acc []int64, x []float32, k float32) (sq, or uint64) {
	for j, v := range x {
		p := float64(v * k) // the float32 product, exactly
		n := int64(math.MinInt64)
		if !math.IsNaN(p) && p > -0x1p63 && p < 0x1p63 {
			n = int64(math.Trunc(p))
		}
		acc[j] += n
		a := uint64(n)
		if n < 0 {
			a = -uint64(n)
		}
		or |= a
		sq += a * a
	}
	return sq, or
}

// gridInput returns n values whose products with k span every range the
// kernels distinguish: small, near 2³¹ on both sides, beyond 2⁶³, ±0,
// subnormal, NaN and ±Inf (special values only with specials set).
func gridInput(rng *rand.Rand, n int, k float32, specials bool) []float32 {
	x := make([]float32, n)
	for i := range x {
		var v float64
		switch r := rng.IntN(20); {
		case r < 12:
			v = rng.NormFloat64() * 3
		case r < 15:
			v = rng.NormFloat64() * 0x1p20 / float64(k)
		case r < 17:
			v = (0x1p31 + float64(rng.IntN(512)-256)) / float64(k)
			if rng.IntN(2) == 0 {
				v = -v
			}
		case r < 18:
			v = rng.NormFloat64() * 1e-42
		default:
			v = float64(math.Float32frombits(rng.Uint32() & 0x807fffff)) // ±subnormal or ±0
		}
		x[i] = float32(v)
		if specials && rng.IntN(50) == 0 {
			x[i] = []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 0x1p40, -0x1p70}[rng.IntN(5)]
		}
	}
	return x
}

// TestAddGrid checks every level against the reference bit for bit (the
// accumulators, the sum of squares and the OR), for lengths around the
// 8- and 16-value groups, with and without values the kernels must hand
// back to the Go loop.
func TestAddGrid(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, k := range []float32{0x1p14, 0x1p-3, 3} {
		for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100, 4096, 4099} {
			for _, specials := range []bool{false, true} {
				x := gridInput(rng, n, k, specials)
				acc0 := make([]int64, n+2)
				for i := range acc0 {
					acc0[i] = rng.Int64() >> 8
					if rng.IntN(2) == 0 {
						acc0[i] = -acc0[i]
					}
				}
				want := append([]int64(nil), acc0...)
				wsq, wor := gridRef(want, x, k)
				for _, l := range levels() {
					acc := append([]int64(nil), acc0...)
					sq, or := addGridWith(l, acc, x, k)
					if sq != wsq || or != wor {
						t.Fatalf("%v k=%v n=%d specials=%v: (sq, or) = (%d, %#x), want (%d, %#x)", l, k, n, specials, sq, or, wsq, wor)
					}
					for i := range acc {
						if acc[i] != want[i] {
							t.Fatalf("%v k=%v n=%d specials=%v: acc[%d] = %d, want %d (x = %v)", l, k, n, specials, i, acc[i], want[i], x[i])
						}
					}
				}
			}
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("AddGrid into a shorter acc did not panic")
		}
	}()
	AddGrid(make([]int64, 3), make([]float32, 4), 1)
}

// BenchmarkAddGrid is one 4096-column block of the secure release's exact
// integer sum (accumulators in L1) at every level.
func BenchmarkAddGrid(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	x := randVec(rng, 4096, 1e-3)
	acc := make([]int64, len(x))
	for _, l := range levels() {
		b.Run(l.String(), func(b *testing.B) {
			b.SetBytes(int64(4 * len(x)))
			for range b.N {
				addGridWith(l, acc, x, 0x1p14)
			}
		})
	}
}
