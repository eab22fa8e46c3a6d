package privacy

import (
	"math"
	"math/big"
	"math/rand/v2"
	"syscall"
	"testing"

	"gonum.org/v1/gonum/dsp/fourier"
)

// gonumConvolve is the convolution the fast path used before it moved onto
// certConvolve: gonum's mixed-radix real FFT at a 2^i·3^j·5^k length. Kept
// as the speed baseline of BenchmarkConvolve.
func gonumConvolve(a, b []float64, size int) []float64 {
	fft := fourier.NewFFT(size)
	buf := make([]float64, size)
	copy(buf, a)
	fa := fft.Coefficients(nil, buf)
	clear(buf)
	copy(buf, b)
	fb := fft.Coefficients(nil, buf)
	for i := range fa {
		fa[i] *= fb[i]
	}
	out := fft.Sequence(buf, fa)
	c := make([]float64, len(a)+len(b)-1)
	for i := range c {
		c[i] = math.Max(out[i]/float64(size), 0)
	}
	return c
}

// cpuTime is the process's user+system CPU time in ns (less sensitive to
// other processes on a loaded machine than wall time).
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkConvolve compares the fast path's convolution (certConvolve)
// with gonum's mixed-radix FFT convolution it replaced, at sizes an
// ordinary query (BenchmarkPLDOrdinary) convolves.
func BenchmarkConvolve(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, c := range []struct {
		name         string
		na, nb, size int
	}{{"66159x66159", 66159, 66159, 0}, {"52511x92794", 52511, 92794, 0}, {"17493x17493", 17493, 17493, 0}} {
		x := make([]float64, c.na)
		y := make([]float64, c.nb)
		for i := range x {
			x[i] = r.Float64()
		}
		for i := range y {
			y[i] = r.Float64()
		}
		c.size = fastLen(c.na + c.nb - 1)
		b.Run("gonum/"+c.name, func(b *testing.B) {
			t0 := cpuTime()
			for i := 0; i < b.N; i++ {
				gonumConvolve(x, y, c.size)
			}
			b.ReportMetric(float64(cpuTime()-t0)/float64(b.N), "cpu-ns/op")
		})
		b.Run("cert/"+c.name, func(b *testing.B) {
			t0 := cpuTime()
			for i := 0; i < b.N; i++ {
				convolve(x, y)
			}
			b.ReportMetric(float64(cpuTime()-t0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// fastLen returns the smallest 2^i·3^j·5^k ≥ n (lengths gonum's FFT handles
// with radix 2, 3, 4 and 5 passes).
func fastLen(n int) int {
	if n <= 1 {
		return 1
	}
	best := math.MaxInt
	for p5 := 1; p5 < 2*n; p5 *= 5 {
		for p3 := p5; p3 < 2*n; p3 *= 3 {
			v := p3
			for v < n {
				v *= 2
			}
			if v < best && fftpackFactors(v) <= fftpackMaxFactors {
				best = v
			}
		}
	}
	return best
}

// fftpackMaxFactors is how many prime-power factors gonum's fftpack can
// hold (its work array keeps 13; a length with more panics inside
// Rffti).
const fftpackMaxFactors = 13

// fftpackFactors counts the factors fftpack splits v (a product of 2, 3
// and 5) into: fours first, then a two, threes and fives.
func fftpackFactors(v int) int {
	f, twos := 0, 0
	for v%2 == 0 {
		v /= 2
		twos++
	}
	f += twos/2 + twos%2
	for _, p := range []int{3, 5} {
		for v%p == 0 {
			v /= p
			f++
		}
	}
	return f
}

// fftRadix2Textbook is the radix-2 decimation-in-time loop of Higham's
// Theorem 24.2 written stage by stage with strided twiddles: the reference
// fftRadix2Staged must reproduce bit for bit.
func fftRadix2Textbook(x []complex128, w []complex128, inverse bool) {
	n := len(x)
	for i, j := 0, 0; i < n; i++ {
		if j > i {
			x[i], x[j] = x[j], x[i]
		}
		m := n >> 1
		for ; m >= 1 && j&m != 0; m >>= 1 {
			j ^= m
		}
		j |= m
	}
	for size := 2; size <= n; size <<= 1 {
		half, step := size/2, n/size
		for start := 0; start < n; start += size {
			for k := 0; k < half; k++ {
				t := w[k*step]
				if inverse {
					t = complex(real(t), -imag(t))
				}
				b := t * x[start+k+half]
				a := x[start+k]
				x[start+k] = a + b
				x[start+k+half] = a - b
			}
		}
	}
}

// The staged, two-stages-per-pass FFT performs exactly the textbook
// radix-2 algorithm (bitwise equal outputs), so Theorem 24.2 covers it.
func TestFFTStagedMatchesTextbook(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{2, 4, 8, 16, 32, 1 << 10, 1 << 11, 1 << 15} {
		w := fftTwiddles(n)
		for _, inverse := range []bool{false, true} {
			x := make([]complex128, n)
			for i := range x {
				x[i] = complex(r.NormFloat64(), r.NormFloat64()*math.Exp(20*r.Float64()))
			}
			y := append([]complex128(nil), x...)
			fftRadix2(x, w, inverse)
			fftRadix2Textbook(y, w, inverse)
			for i := range x {
				if x[i] != y[i] {
					t.Fatalf("n=%d inverse=%v entry %d: %v ≠ %v", n, inverse, i, x[i], y[i])
				}
			}
		}
	}
}

// convolve's ℓ1 bound (the round-off the fast path charges to δ) holds
// against the exact convolution (math/big, 300 bits, every entry) on
// random and adversarial non-negative inputs past the direct-convolution
// size, and stays useful (≤ 1e-10 of ‖a‖₁‖b‖₁) — except for inputs whose
// ℓ2 norms are below certConvolve's range, where it must be +Inf.
func TestConvolveL1Bound(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	gen := map[string]func(i int) float64{
		"uniform":    func(int) float64 { return r.Float64() },
		"exp-range":  func(int) float64 { return math.Exp(-700 * r.Float64()) },
		"spike":      func(i int) float64 { return map[bool]float64{true: 1, false: 1e-300}[i%37 == 3] },
		"tiny":       func(i int) float64 { return 1e-300 * (1 + r.Float64()) }, // ‖·‖₂ < 2⁻³⁰⁰: bound +Inf
		"alternate":  func(i int) float64 { return []float64{1, 1e-17, 0, 1e-8}[i%4] },
		"geometric":  func(i int) float64 { return math.Pow(0.97, float64(i)) },
		"constant":   func(int) float64 { return 0.125 },
		"pld-like":   func(i int) float64 { x := float64(i-150) / 40; return math.Exp(-x * x / 2) },
		"heavy-tail": func(i int) float64 { return 1 / (1 + float64(i)*float64(i)) },
	}
	sizes := [][2]int{{257, 257}, {300, 1000}, {1500, 50}, {1024, 1025}}
	for name, g := range gen {
		for _, sz := range sizes {
			a := make([]float64, sz[0])
			b := make([]float64, sz[1])
			for i := range a {
				a[i] = g(i)
			}
			for i := range b {
				b[i] = g(i + 7)
			}
			got, bound := convolve(a, b)
			var errL1 float64
			for k := range got {
				ex := new(big.Float).SetPrec(300)
				for i := max(0, k-len(b)+1); i <= min(k, len(a)-1); i++ {
					ex.Add(ex, new(big.Float).SetPrec(300).Mul(big.NewFloat(a[i]), big.NewFloat(b[k-i])))
				}
				ex.Sub(ex, big.NewFloat(got[k]))
				d, _ := ex.Float64()
				errL1 += math.Abs(d)
			}
			a1, _ := norms(a)
			b1, _ := norms(b)
			if !(errL1 <= bound) {
				t.Errorf("%s %v: ℓ1 error %g > bound %g", name, sz, errL1, bound)
			}
			if name == "tiny" {
				if !math.IsInf(bound, 1) {
					t.Errorf("%s %v: finite bound %g outside certConvolve's range", name, sz, bound)
				}
			} else if bound > 1e-10*a1*b1 {
				t.Errorf("%s %v: bound %g vs ‖a‖₁‖b‖₁ = %g", name, sz, bound, a1*b1)
			}
			t.Logf("%-10s %v: ℓ1 error %.3g, bound %.3g (ratio %.2g)", name, sz, errL1, bound, errL1/bound)
		}
	}
}
