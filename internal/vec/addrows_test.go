package vec

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestAddRows checks every level against the plain loop, bit for bit, for
// widths around the 8- and 32-column blocks and row counts from 0, with
// values of very different magnitudes (so that the order of the additions
// shows in the result), and that a short matrix panics.
func TestAddRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for _, c := range []int{0, 1, 7, 8, 9, 16, 31, 32, 33, 40, 64, 70} {
		for _, rows := range []int{0, 1, 2, 25, 195} {
			m := make([]float32, rows*c+3)
			for i := range m {
				m[i] = float32(rng.NormFloat64() * math.Pow(10, float64(rng.IntN(13)-6)))
			}
			dst0 := randVec(rng, c, 1)
			want := append([]float32(nil), dst0...)
			for r := 0; r < rows; r++ {
				for k := range want {
					want[k] += m[r*c+k]
				}
			}
			for _, l := range levels() {
				dst := append([]float32(nil), dst0...)
				addRowsWith(l, dst, m, rows)
				for k := range dst {
					if math.Float32bits(dst[k]) != math.Float32bits(want[k]) {
						t.Fatalf("%v c=%d rows=%d: dst[%d] = %v, want %v", l, c, rows, k, dst[k], want[k])
					}
				}
			}
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("AddRows from a short matrix did not panic")
		}
	}()
	AddRows(make([]float32, 8), make([]float32, 15), 2)
}

// BenchmarkAddRows is one example's conv1 bias gradient of the MNIST CNN
// (196 rows of 16) in Go and with the AVX2 kernel (the only one: the
// AVX-512 level uses it too).
func BenchmarkAddRows(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	m := randVec(rng, 196*16, 1)
	dst := make([]float32, 16)
	for _, l := range levels() {
		if l > AVX2 {
			break
		}
		b.Run(l.String(), func(b *testing.B) {
			for range b.N {
				addRowsWith(l, dst, m, 196)
			}
		})
	}
}
