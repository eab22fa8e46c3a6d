package model

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/privtrain/privtrain/internal/vec"
)

// FuzzGemm checks every kernel level against a naive float64 triple loop on
// random shapes, transpositions, leading dimensions larger than the rows
// and beta ∈ {0, 1, 0.5}; the padding between and after the rows of C is
// filled with a sentinel that must survive (no kernel writes outside C).
// `go test` runs the seeds; `go test -fuzz FuzzGemm ./model/` explores.
func FuzzGemm(f *testing.F) {
	for _, s := range [][4]int{{1, 1, 1, 0}, {8, 32, 1, 0}, {9, 33, 7, 3}, {17, 65, 300, 5}, {4, 16, 0, 1}, {31, 47, 129, 2}, {64, 96, 257, 0}, {3, 200, 5, 7}} {
		f.Add(uint8(s[0]), uint8(s[1]), uint16(s[2]), uint8(s[3]), uint64(s[0]*31+s[2]))
	}
	f.Fuzz(func(t *testing.T, mu, nu uint8, ku uint16, pad uint8, seed uint64) {
		m, n, k := int(mu%80), int(nu%100), int(ku%600)
		rng := rand.New(rand.NewPCG(seed, 7))
		tA, tB := rng.IntN(2) == 1, rng.IntN(2) == 1
		beta := []float32{0, 1, 0.5}[rng.IntN(3)]
		alpha := float32(1)
		if rng.IntN(4) == 0 {
			alpha = 1.5
		}
		p := int(pad % 9)
		// Stored shapes and leading dimensions.
		ar, ac := m, k
		if tA {
			ar, ac = k, m
		}
		br, bc := k, n
		if tB {
			br, bc = n, k
		}
		lda, ldb, ldc := ac+p, bc+rng.IntN(5), n+rng.IntN(5)
		fill := func(rows, ld int) []float32 {
			s := make([]float32, max(0, (rows-1)*ld)+ld)
			for i := range s {
				s[i] = float32(rng.NormFloat64())
			}
			if rows == 0 {
				return s[:0]
			}
			return s
		}
		a, b := fill(ar, lda), fill(br, ldb)
		const sentinel = float32(-12345.5)
		c0 := make([]float32, m*ldc+3)
		for i := range c0 {
			c0[i] = sentinel
		}
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				c0[i*ldc+j] = float32(rng.NormFloat64())
			}
		}
		at := func(i, l int) float64 {
			if tA {
				return float64(a[l*lda+i])
			}
			return float64(a[i*lda+l])
		}
		bt := func(l, j int) float64 {
			if tB {
				return float64(b[j*ldb+l])
			}
			return float64(b[l*ldb+j])
		}
		for _, level := range testLevels() {
			c := append([]float32(nil), c0...)
			gemmWith(level, tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
			for i := 0; i < m; i++ {
				for j := 0; j < ldc && i*ldc+j < len(c); j++ {
					got := c[i*ldc+j]
					if j >= n {
						if got != sentinel {
							t.Fatalf("%v m=%d n=%d k=%d: padding C[%d,%d] overwritten with %v", level, m, n, k, i, j, got)
						}
						continue
					}
					want, mag := float64(beta)*float64(c0[i*ldc+j]), math.Abs(float64(beta)*float64(c0[i*ldc+j]))
					for l := 0; l < k; l++ {
						want += float64(alpha) * at(i, l) * bt(l, j)
						mag += math.Abs(float64(alpha) * at(i, l) * bt(l, j))
					}
					// float32 accumulation: error ≤ about k·2⁻²⁴·Σ|terms|.
					if d := math.Abs(float64(got) - want); d > float64(k+2)*6e-8*mag+1e-30 {
						t.Fatalf("%v tA=%v tB=%v m=%d n=%d k=%d lds=%d,%d,%d beta=%v: C[%d,%d] = %v, want %v", level, tA, tB, m, n, k, lda, ldb, ldc, beta, i, j, got, want)
					}
				}
			}
			for _, v := range c[m*ldc:] {
				if v != sentinel {
					t.Fatalf("%v m=%d n=%d k=%d: wrote past the end of C", level, m, n, k)
				}
			}
		}
	})
}

// TestGemmBoundsPanic checks that a slice too short for its shape, or a
// leading dimension smaller than a row, panics before any kernel runs.
func TestGemmBoundsPanic(t *testing.T) {
	const m, n, k = 8, 32, 5
	a, b, c := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
	tests := []struct {
		name string
		call func(vec.ISA)
		want string
	}{
		{"short A", func(l vec.ISA) { gemmWith(l, false, false, m, n, k, 1, a[:m*k-1], k, b, n, 0, c, n) }, "A (8×5"},
		{"short B", func(l vec.ISA) { gemmWith(l, false, false, m, n, k, 1, a, k, b[:k*n-1], n, 0, c, n) }, "B (5×32"},
		{"short C", func(l vec.ISA) { gemmWith(l, false, false, m, n, k, 1, a, k, b, n, 1, c[:m*n-1], n) }, "C (8×32"},
		{"short transposed A", func(l vec.ISA) { gemmWith(l, true, false, m, n, k, 1, a[:m*k-1], m, b, n, 0, c, n) }, "A (5×8"},
		{"small ldc", func(l vec.ISA) { gemmWith(l, false, false, m, n, k, 1, a, k, b, n, 0, c, n-1) }, "leading dimension is 31"},
		{"negative m", func(l vec.ISA) { gemmWith(l, false, false, -1, n, k, 1, a, k, b, n, 0, c, n) }, "negative shape"},
	}
	for _, level := range testLevels() {
		for _, tc := range tests {
			func() {
				defer func() {
					r := recover()
					if s, ok := r.(string); !ok || !strings.Contains(s, tc.want) {
						t.Errorf("%v %s: panic %v, want one containing %q", level, tc.name, r, tc.want)
					}
				}()
				tc.call(level)
			}()
		}
	}
}
