package vec

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// exactSumSquares is Σ x[i]² in exact arithmetic (big.Float with enough
// bits for any float32 squares), rounded once to float64.
func exactSumSquares(x []float32) float64 {
	s := new(big.Float).SetPrec(2000)
	for _, v := range x {
		f := new(big.Float).SetPrec(2000).SetFloat64(float64(v))
		s.Add(s, f.Mul(f, f))
	}
	r, _ := s.Float64()
	return r
}

func randVec(rng *rand.Rand, n int, scale float64) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(scale * rng.NormFloat64())
	}
	return x
}

// TestSumSquares checks the assembly kernel and the Go fallback against the
// exact sum (relative error within the documented bound) and against each
// other (bit-identical: same lanes and order), for lengths around the
// 16-element blocks, magnitudes from subnormal to huge, and NaN/Inf.
func TestSumSquares(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 7, 15, 16, 17, 31, 33, 100, 1040, 26010} {
		for _, scale := range []float64{1e-42, 1e-20, 1, 1e18} {
			x := randVec(rng, n, scale)
			want := exactSumSquares(x)
			bound := float64(n/16+5) * 0x1p-53 * want
			got := []float64{sumSquaresGo(x)}
			if CPU() >= AVX2 && n > 0 {
				got = append(got, sumSquaresAVX2(&x[0], n))
			}
			for i, g := range got {
				if math.Abs(g-want) > bound {
					t.Errorf("n=%d scale=%g kernel %d: %v, want %v ± %v", n, scale, i, g, want, bound)
				}
				if g != got[0] {
					t.Errorf("n=%d scale=%g: assembly %v and Go %v differ", n, scale, g, got[0])
				}
			}
		}
	}
	for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(-1))} {
		x := randVec(rng, 37, 1)
		x[20] = bad
		if s := SumSquares(x); !math.IsNaN(s) && !math.IsInf(s, 1) {
			t.Errorf("SumSquares with %v = %v, want NaN or +Inf", bad, s)
		}
	}
}

// TestScaleSumSquares checks that the kernel stores exactly fl32(s·x[i])
// and returns the sum of squares of what it stored.
func TestScaleSumSquares(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 15, 16, 17, 63, 1000, 26010} {
		x := randVec(rng, n, 3)
		s := float32(rng.Float64())
		want := make([]float32, n)
		for i, v := range x {
			want[i] = s * v
		}
		levels := []ISA{Go}
		if CPU() >= AVX2 {
			levels = append(levels, AVX2)
		}
		for _, l := range levels {
			y := append([]float32(nil), x...)
			var got float64
			if l == Go {
				for i := range y {
					y[i] *= s
				}
				got = sumSquaresGo(y)
			} else {
				got = scaleSumSquaresAVX2(&y[0], n, s)
			}
			for i := range y {
				if y[i] != want[i] {
					t.Fatalf("%v n=%d: x[%d] = %v, want fl32(s·x) = %v", l, n, i, y[i], want[i])
				}
			}
			if ref := sumSquaresGo(want); got != ref {
				t.Errorf("%v n=%d: returned %v, want SumSquares of the stored row %v", l, n, got, ref)
			}
		}
	}
}

func TestSelect(t *testing.T) {
	tests := []struct {
		env  string
		best ISA
		want ISA
		err  bool
	}{
		{"", AVX512, AVX512, false}, {"", AVX2, AVX2, false}, {"avx512", Go, Go, false},
		{"avx2", AVX512, AVX2, false}, {"off", AVX512, Go, false}, {"go", AVX2, Go, false},
		{"sse", AVX512, Go, true}, {"AVX2", AVX512, Go, true},
	}
	for _, tc := range tests {
		got, err := Select(tc.env, tc.best)
		if got != tc.want || (err != nil) != tc.err {
			t.Errorf("Select(%q, %v) = %v, %v; want %v, error %v", tc.env, tc.best, got, err, tc.want, tc.err)
		}
	}
}

// BenchmarkSumSquares runs the assembly kernel beside its Go fallback on one
// per-example gradient of the MNIST CNN (26,010 values, in L2);
// scripts/bench.sh prints their ratio.
func BenchmarkSumSquares(b *testing.B) {
	x := randVec(rand.New(rand.NewPCG(1, 1)), 26010, 1)
	b.Run("go", func(b *testing.B) {
		b.SetBytes(int64(4 * len(x)))
		for range b.N {
			sumSquaresGo(x)
		}
	})
	if CPU() >= AVX2 {
		b.Run("asm", func(b *testing.B) {
			b.SetBytes(int64(4 * len(x)))
			for range b.N {
				sumSquaresAVX2(&x[0], len(x))
			}
		})
	}
}

// BenchmarkScaleSumSquares is BenchmarkSumSquares for the clip scaling.
func BenchmarkScaleSumSquares(b *testing.B) {
	x := randVec(rand.New(rand.NewPCG(1, 1)), 26010, 1)
	const s = 0.999999
	b.Run("go", func(b *testing.B) {
		b.SetBytes(int64(4 * len(x)))
		for range b.N {
			for i := range x {
				x[i] *= s
			}
			sumSquaresGo(x)
		}
	})
	if CPU() >= AVX2 {
		b.Run("asm", func(b *testing.B) {
			b.SetBytes(int64(4 * len(x)))
			for range b.N {
				scaleSumSquaresAVX2(&x[0], len(x), s)
			}
		})
	}
}
