package vec

import (
	"math"
	"math/rand/v2"
	"testing"
)

// reluInput returns n values with every class the kernels treat apart:
// positive, negative, ±0, subnormal, ±Inf and NaN of either sign, or (bits
// set) uniformly random bit patterns.
func reluInput(rng *rand.Rand, n int, bits bool) []float32 {
	x := make([]float32, n)
	for i := range x {
		if bits {
			x[i] = math.Float32frombits(rng.Uint32())
			continue
		}
		switch rng.IntN(10) {
		case 0:
			x[i] = float32(math.Copysign(0, float64(rng.IntN(2)*2-1)))
		case 1:
			x[i] = math.Float32frombits(rng.Uint32()&0x807fffff | 1)
		case 2:
			x[i] = []float32{float32(math.Inf(1)), float32(math.Inf(-1)), math.Float32frombits(0x7fc00001), math.Float32frombits(0xffc00000)}[rng.IntN(4)]
		default:
			x[i] = float32(rng.NormFloat64())
		}
	}
	return x
}

// TestRelu checks every level against Go's max(x, 0), bit for bit except
// that a NaN only has to give a NaN.
func TestRelu(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 48, 100, 3136} {
		for _, bits := range []bool{false, true} {
			x := reluInput(rng, n, bits)
			want := make([]float32, n+1)
			for i, v := range x {
				want[i] = max(v, 0)
			}
			for _, l := range levels() {
				y := make([]float32, n+1)
				y[n] = 7
				reluWith(l, y, x)
				for i := range y {
					w := want[i]
					if i == n {
						w = 7
					}
					if w != w && y[i] != y[i] {
						continue
					}
					if math.Float32bits(y[i]) != math.Float32bits(w) {
						t.Fatalf("%v n=%d: y[%d] = %#x, want %#x (x = %#x)", l, n, i, math.Float32bits(y[i]), math.Float32bits(w), math.Float32bits(x[i]))
					}
				}
			}
		}
	}
}

// TestReluBack checks every level against the mask's definition (dy where
// the 32-bit negation of y's bits is negative, +0 elsewhere), bit for bit,
// on Relu outputs and on arbitrary bit patterns.
func TestReluBack(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 48, 100, 3136} {
		for _, bits := range []bool{false, true} {
			y := reluInput(rng, n, bits)
			if !bits {
				reluGo(y, y)
			}
			if n > 0 {
				y[0] = math.Float32frombits(0x80000000) // −0: the mask's edge case
			}
			dy := reluInput(rng, n, true)
			for _, l := range levels() {
				dx := make([]float32, n+1)
				dx[n] = 7
				reluBackWith(l, dx[:n], y, dy)
				for i := 0; i < n; i++ {
					var w uint32
					if b := math.Float32bits(y[i]); int32(-b) < 0 || b == 0x80000000 {
						w = math.Float32bits(dy[i])
					}
					if math.Float32bits(dx[i]) != w {
						t.Fatalf("%v n=%d: dx[%d] = %#x, want %#x (y bits %#x)", l, n, i, math.Float32bits(dx[i]), w, math.Float32bits(y[i]))
					}
				}
				if dx[n] != 7 {
					t.Fatalf("%v n=%d: wrote past the end", l, n)
				}
			}
		}
	}
}

// BenchmarkRelu and BenchmarkReluBack run one MNIST conv1 activation of a
// 64-example chunk (64 × 3,136 values, in L2) at every level.
func BenchmarkRelu(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	x := randVec(rng, 64*3136, 1)
	y := make([]float32, len(x))
	for _, l := range levels() {
		b.Run(l.String(), func(b *testing.B) {
			b.SetBytes(int64(8 * len(x)))
			for range b.N {
				reluWith(l, y, x)
			}
		})
	}
}

func BenchmarkReluBack(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	y := randVec(rng, 64*3136, 1)
	reluGo(y, y)
	dy := randVec(rng, len(y), 1)
	dx := make([]float32, len(y))
	for _, l := range levels() {
		b.Run(l.String(), func(b *testing.B) {
			b.SetBytes(int64(12 * len(y)))
			for range b.N {
				reluBackWith(l, dx, y, dy)
			}
		})
	}
}
