package vec

import (
	"math"
	"math/rand/v2"
	"testing"
)

// levels returns the kernel levels this machine can run.
func levels() []ISA {
	var ls []ISA
	for l := Go; l <= CPU(); l++ {
		ls = append(ls, l)
	}
	return ls
}

// TestAddScaled checks every level against the definition: y[i] + fl32(s·x[i])
// with the product rounded first (or the product alone with store), and the
// returned value equal to sumSquaresGo of the scaled values, for lengths
// around the 16-element blocks.
func TestAddScaled(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{0, 1, 15, 16, 17, 31, 32, 33, 100, 4096, 4099} {
		x := randVec(rng, n, 3)
		y0 := randVec(rng, n+3, 2)
		s := float32(rng.Float64())
		v := make([]float32, n)
		for i, xi := range x {
			v[i] = s * xi
		}
		wantSS := sumSquaresGo(v)
		for _, store := range []bool{false, true} {
			for _, l := range levels() {
				y := append([]float32(nil), y0...)
				got := addScaledWith(l, y, x, s, store)
				for i := range y {
					want := y0[i]
					switch {
					case i < n && store:
						want = v[i]
					case i < n:
						want = y0[i] + v[i]
					}
					if y[i] != want {
						t.Fatalf("%v n=%d store=%v: y[%d] = %v, want %v", l, n, store, i, y[i], want)
					}
				}
				if got != wantSS {
					t.Errorf("%v n=%d store=%v: returned %v, want SumSquares of the scaled values %v", l, n, store, got, wantSS)
				}
			}
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("AddScaled into a shorter y did not panic")
		}
	}()
	AddScaled(make([]float32, 3), make([]float32, 4), 1, false)
}

// TestSumScaledRows checks the sum bit for bit against the plain float32
// loop in row order, the sums of squares against the exact value within
// SumScaledRowsNormErr (squared), and that neither depends on the number of
// workers or the level.
func TestSumScaledRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, p := range []int{1, 17, 4096, 16384, 16385, 26010, 50001} {
		m := 9
		x := randVec(rng, m*p, 1)
		idx := []int{3, 0, 8, 8, 5}
		scale := []float32{0.5, 1, 1e-3, 0.25, 3}
		want := make([]float32, p)
		for k, i := range idx {
			for j := range want {
				want[j] += float32(scale[k] * x[i*p+j])
			}
		}
		var ref []float64
		for _, l := range levels() {
			for _, workers := range []int{1, 2, 3} {
				out := randVec(rng, p, 1) // overwritten, not added to
				ss := make([]float64, len(idx))
				sumScaledRowsWith(l, out, x, p, idx, scale, ss, workers)
				for j := range out {
					if out[j] != want[j] {
						t.Fatalf("%v p=%d workers=%d: out[%d] = %v, want %v", l, p, workers, j, out[j], want[j])
					}
				}
				if ref == nil {
					ref = ss
					for k, i := range idx {
						v := make([]float32, p)
						for j := range v {
							v[j] = scale[k] * x[i*p+j]
						}
						exact := exactSumSquares(v)
						// (1+e)² − 1 ≤ 3e bounds the squared norm's error.
						if d := math.Abs(ss[k] - exact); d > 3*SumScaledRowsNormErr(p)*exact {
							t.Errorf("p=%d row %d: sum of squares %v, exact %v (error %.3g > bound)", p, k, ss[k], exact, d/exact)
						}
					}
					continue
				}
				for k := range ss {
					if ss[k] != ref[k] {
						t.Errorf("%v p=%d workers=%d: ss[%d] = %v, differs from %v", l, p, workers, k, ss[k], ref[k])
					}
				}
			}
		}
		if p <= maxRowBlock && SumScaledRowsNormErr(p) != NormErr(p) {
			t.Errorf("p=%d: one block, error bound %v, want NormErr %v", p, SumScaledRowsNormErr(p), NormErr(p))
		}
	}
	for _, p := range []int{1, 16, 16384, 16385, 26010, 32768, 32769, 50001, 1 << 20} {
		b, nb := rowBlocks(p)
		if b%16 != 0 || b*nb < p || b*(nb-1) >= p || b > maxRowBlock || (nb > 1 && nb%2 == 1) {
			t.Errorf("rowBlocks(%d) = %d, %d: want blocks of ≤ %d (multiple of 16), an even count covering p", p, b, nb, maxRowBlock)
		}
	}
	out := []float32{1, 2}
	SumScaledRows(out, nil, 2, nil, nil, nil, 2)
	if out[0] != 0 || out[1] != 0 {
		t.Errorf("no rows: out = %v, want zeros", out)
	}
}

// BenchmarkAddScaled runs the fused clip-scale-and-sum kernel at every level
// on 4096 values of a per-example gradient (y in L1);
// scripts/bench.sh prints the ratios.
func BenchmarkAddScaled(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	x := randVec(rng, 4096, 1)
	y := randVec(rng, 4096, 1)
	for _, l := range levels() {
		b.Run(l.String(), func(b *testing.B) {
			b.SetBytes(int64(4 * len(x)))
			for range b.N {
				addScaledWith(l, y, x, 0.5, false)
			}
		})
	}
}

// BenchmarkSumScaledRows is the whole clip-scale-sum pass of an MNIST DP
// step (256 rows of 26,010) at every level, two workers.
func BenchmarkSumScaledRows(b *testing.B) {
	const m, p = 256, 26010
	rng := rand.New(rand.NewPCG(1, 1))
	x := randVec(rng, m*p, 1)
	idx := make([]int, m)
	scale := make([]float32, m)
	for i := range idx {
		idx[i], scale[i] = i, 0.5
	}
	out := make([]float32, p)
	ss := make([]float64, m)
	for _, l := range levels() {
		b.Run(l.String(), func(b *testing.B) {
			b.SetBytes(int64(4 * len(x)))
			for range b.N {
				sumScaledRowsWith(l, out, x, p, idx, scale, ss, 2)
			}
		})
	}
}
