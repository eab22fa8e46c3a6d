package aggregate

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// TestSumAggregateScaled checks the one-pass path against clipping the rows
// first and calling Aggregate: the same released vector bit for bit (same
// noise stream) for float and secure noise, norms of the scaled rows, and
// unchanged rows (float noise).
func TestSumAggregateScaled(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, p := range []int{3, 17, 16385, 40000} {
		for _, secure := range []bool{false, true} {
			const m, r = 7, 1.0
			g := make([]float32, m*p)
			for i := range g {
				g[i] = float32(rng.NormFloat64() * 0.5 / math.Sqrt(float64(p)))
			}
			scale := make([]float32, m)
			for i := range scale {
				scale[i] = 1
				if i%2 == 0 { // clip the even rows to ≈ R/2
					var ss float64
					for _, v := range g[i*p : (i+1)*p] {
						ss += float64(v) * float64(v)
					}
					scale[i] = float32(0.5 * r / math.Sqrt(ss))
				}
			}
			clipped := append([]float32(nil), g...)
			wantNorms := make([]float64, m)
			for i := 0; i < m; i++ {
				var ss float64
				for j := range clipped[i*p : (i+1)*p] {
					clipped[i*p+j] *= scale[i]
					ss += float64(clipped[i*p+j]) * float64(clipped[i*p+j])
				}
				wantNorms[i] = math.Sqrt(ss)
			}
			if wantNorms[1] > r {
				t.Fatalf("p=%d: test rows too long (%v)", p, wantNorms[1])
			}
			cfg := Config{Sigma: 0.8, ClipNorm: r, FloatNoise: !secure}
			a1, err := New("sum", cfg)
			if err != nil {
				t.Fatal(err)
			}
			a2, _ := New("sum", cfg)
			want := make([]float32, p)
			if _, err := a1.Aggregate(Grads{G: clipped, Norms: wantNorms, M: m, P: p, ClipNorm: r}, rand.New(rand.NewPCG(1, 2)), want); err != nil {
				t.Fatal(err)
			}
			h := append([]float32(nil), g...)
			norms := make([]float64, m)
			got := make([]float32, p)
			rep, err := a2.(ScaledAggregator).AggregateScaled(Grads{G: h, Norms: norms, M: m, P: p, ClipNorm: r}, scale, rand.New(rand.NewPCG(1, 2)), got)
			if err != nil {
				t.Fatalf("p=%d secure=%v: %v", p, secure, err)
			}
			if rep.Mechanism == nil {
				t.Errorf("p=%d secure=%v: no mechanism reported", p, secure)
			}
			for j := range got {
				if got[j] != want[j] {
					t.Fatalf("p=%d secure=%v: out[%d] = %v, want %v", p, secure, j, got[j], want[j])
				}
			}
			for i := range norms {
				if math.Abs(norms[i]-wantNorms[i]) > 1e-12*wantNorms[i] {
					t.Errorf("p=%d secure=%v: norm %d = %v, want %v", p, secure, i, norms[i], wantNorms[i])
				}
			}
			if !secure {
				for j := range h {
					if h[j] != g[j] {
						t.Fatalf("p=%d: AggregateScaled changed g[%d]", p, j)
					}
				}
			}
		}
	}
}

// TestSumAggregateScaledRejects checks that a factor leaving a row above R
// (here: 1 on a row of norm R·(1+2⁻²⁰)) is reported as ErrNotClipped before
// any noise is drawn, for float and secure noise.
func TestSumAggregateScaledRejects(t *testing.T) {
	for _, secure := range []bool{false, true} {
		a, err := New("sum", Config{Sigma: 1, ClipNorm: 1, FloatNoise: !secure})
		if err != nil {
			t.Fatal(err)
		}
		g := []float32{0.6, 0.8 * (1 + 0x1p-20), 0.1, 0.2}
		rng := rand.New(rand.NewPCG(3, 4))
		_, err = a.(ScaledAggregator).AggregateScaled(Grads{G: g, Norms: make([]float64, 2), M: 2, P: 2, ClipNorm: 1}, []float32{1, 1}, rng, make([]float32, 2))
		if !errors.Is(err, ErrNotClipped) {
			t.Errorf("secure=%v: got %v, want ErrNotClipped", secure, err)
		}
		if rng.Uint64() != rand.New(rand.NewPCG(3, 4)).Uint64() {
			t.Errorf("secure=%v: randomness drawn before the rejection", secure)
		}
	}
}
