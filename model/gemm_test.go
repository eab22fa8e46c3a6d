package model

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/privtrain/privtrain/internal/vec"
)

// TestGemm checks the tiled gemm against a naive triple loop for every
// transposition and sizes on both sides of the tile boundaries.
func TestGemm(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, sz := range [][3]int{{1, 1, 1}, {3, 5, 7}, {64, 16, 64}, {193, 16, 75}, {130, 200, 9}, {65, 400, 16}, {16, 120, 400}, {401, 32, 64}, {16, 64, 700}, {33, 47, 300}} {
		m, n, k := sz[0], sz[1], sz[2]
		for _, tr := range [][2]bool{{false, false}, {false, true}, {true, false}, {true, true}} {
			tA, tB := tr[0], tr[1]
			a := make([]float32, m*k)
			b := make([]float32, k*n)
			c := make([]float32, m*n)
			for _, s := range [][]float32{a, b, c} {
				for i := range s {
					s[i] = float32(rng.NormFloat64())
				}
			}
			lda, ldb := k, n
			at := func(i, l int) float32 { return a[i*k+l] }
			if tA {
				lda = m
				at = func(i, l int) float32 { return a[l*m+i] }
			}
			bt := func(l, j int) float32 { return b[l*n+j] }
			if tB {
				ldb = k
				bt = func(l, j int) float32 { return b[j*k+l] }
			}
			for _, beta := range []float32{0, 1, 0.5} {
				for _, alpha := range []float32{1, 2} {
					for _, fast := range testLevels() {
						want := make([]float64, m*n)
						for i := 0; i < m; i++ {
							for j := 0; j < n; j++ {
								s := float64(beta) * float64(c[i*n+j])
								for l := 0; l < k; l++ {
									s += float64(alpha) * float64(at(i, l)) * float64(bt(l, j))
								}
								want[i*n+j] = s
							}
						}
						got := append([]float32(nil), c...)
						gemmWith(fast, tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, got, n)
						for i, w := range want {
							if math.Abs(float64(got[i])-w) > 1e-4*(1+math.Abs(w))*math.Sqrt(float64(k)) {
								t.Fatalf("%v tA=%v tB=%v alpha=%v beta=%v fast=%v: c[%d] = %v, want %v", sz, tA, tB, alpha, beta, fast, i, got[i], w)
							}
						}
					}
				}
			}
		}
	}
}

// testLevels lists every kernel level the machine supports, whatever
// PRIVTRAIN_ASM says, so that each kernel is checked against the fallback.
func testLevels() []vec.ISA {
	var l []vec.ISA
	for i := vec.Go; i <= vec.CPU(); i++ {
		l = append(l, i)
	}
	return l
}
