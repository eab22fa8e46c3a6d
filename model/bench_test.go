package model

import (
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"gonum.org/v1/gonum/blas/blas32"
)

var benchCases = []struct {
	name string
	spec Spec
	m    int
}{
	{"MNIST-256", Spec{Arch: "tfp-cnn", InputShape: []int{1, 28, 28}, Classes: 10}, 256},
	{"CIFAR-1024", Spec{Arch: "tfp-cnn", InputShape: []int{3, 32, 32}, Classes: 10}, 1024},
}

func benchSetup(b *testing.B, s Spec, m int) (Model, Batch) {
	b.Helper()
	mod, err := New(s, 1)
	if err != nil {
		b.Fatal(err)
	}
	return mod, randomBatch(s, m, rand.New(rand.NewPCG(2, 2)))
}

func reportExPerSec(b *testing.B, m int) {
	b.ReportMetric(float64(b.N*m)/b.Elapsed().Seconds(), "ex/s")
}

// flopsPerExample counts the multiply-adds (×2) of one example's forward
// and backward pass: forward products, weight gradients, and input
// gradients of every parameterised layer but the first (which has none).
// Per-example and summed weight gradients cost the same. For the MNIST
// CNN it is 2.13 MFLOP. scripts/bench.sh turns it into GFLOP/s.
func flopsPerExample(m Model) float64 {
	var macs float64
	first := true
	for _, l := range m.(*net).layers {
		var f float64
		switch l.desc.(type) {
		case Conv:
			f = float64(l.out.H * l.out.W * l.sizes[0])
		case Dense:
			f = float64(l.sizes[0])
		default:
			continue
		}
		macs += 2 * f // forward and weight gradient
		if !first {
			macs += f // input gradient
		}
		first = false
	}
	return 2 * macs
}

func BenchmarkBatchGrad(b *testing.B) {
	for _, c := range benchCases {
		b.Run(c.name, func(b *testing.B) {
			mod, batch := benchSetup(b, c.spec, c.m)
			g := make([]float32, mod.NumParams())
			b.ResetTimer()
			for range b.N {
				if _, err := mod.BatchGrad(batch, g); err != nil {
					b.Fatal(err)
				}
			}
			reportExPerSec(b, c.m)
		})
	}
}

func BenchmarkPerExampleGrads(b *testing.B) {
	for _, c := range benchCases {
		b.Run(c.name, func(b *testing.B) {
			mod, batch := benchSetup(b, c.spec, c.m)
			g := make([]float32, c.m*mod.NumParams())
			l := make([]float32, c.m)
			b.ResetTimer()
			for range b.N {
				if err := mod.PerExampleGrads(batch, g, l); err != nil {
					b.Fatal(err)
				}
			}
			reportExPerSec(b, c.m)
		})
	}
}

// BenchmarkModelStep measures whole SGD steps as the trainer runs them:
// "nonprivate" is BatchGrad + update; "dp" is per-example gradients,
// clipping each to L2 norm 1, summing, adding N(0, σ²) noise and updating.
func BenchmarkModelStep(b *testing.B) {
	for _, c := range benchCases {
		b.Run("nonprivate/"+c.name, func(b *testing.B) {
			mod, batch := benchSetup(b, c.spec, c.m)
			P := mod.NumParams()
			g := make([]float32, P)
			b.ResetTimer()
			for range b.N {
				if _, err := mod.BatchGrad(batch, g); err != nil {
					b.Fatal(err)
				}
				for i := range g {
					g[i] *= 0.01 / float32(c.m)
				}
				if err := mod.Step(g); err != nil {
					b.Fatal(err)
				}
			}
			reportExPerSec(b, c.m)
		})
		b.Run("dp/"+c.name, func(b *testing.B) {
			mod, batch := benchSetup(b, c.spec, c.m)
			P := mod.NumParams()
			grads := make([]float32, c.m*P)
			losses := make([]float32, c.m)
			sum := make([]float32, P)
			scales := make([]float32, c.m)
			rng := rand.New(rand.NewPCG(3, 3))
			const clip, sigma, lr = 1, 1.1, 0.15
			b.ResetTimer()
			for range b.N {
				if err := mod.PerExampleGrads(batch, grads, losses); err != nil {
					b.Fatal(err)
				}
				clipSumNoise(grads, c.m, P, clip, sigma, lr, scales, sum, rng)
				if err := mod.Step(sum); err != nil {
					b.Fatal(err)
				}
			}
			reportExPerSec(b, c.m)
			b.ReportMetric(flopsPerExample(mod)/1e6, "MFLOP/ex")
		})
	}
}

// clipSumNoise is the DP part of a step, on two goroutines: per-example
// clipping factors min(1, R/‖g_i‖), the clipped sum, Gaussian noise
// N(0, (σR)²) and the scaling lr/M into an update.
func clipSumNoise(grads []float32, m, p int, clip, sigma, lr float64, scales, sum []float32, rng *rand.Rand) {
	const workers = 2
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w * m / workers; i < (w+1)*m/workers; i++ {
				row := blas32.Vector{N: p, Inc: 1, Data: grads[i*p : (i+1)*p]}
				scales[i] = float32(math.Min(1, clip/math.Sqrt(float64(blas32.Dot(row, row)))))
			}
		}()
	}
	wg.Wait()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lo, hi := w*p/workers, (w+1)*p/workers
			s := blas32.Vector{N: hi - lo, Inc: 1, Data: sum[lo:hi]}
			clear(s.Data)
			for i := 0; i < m; i++ {
				blas32.Axpy(scales[i], blas32.Vector{N: hi - lo, Inc: 1, Data: grads[i*p+lo : i*p+hi]}, s)
			}
		}()
	}
	wg.Wait()
	for k := range sum {
		sum[k] = float32(lr * (float64(sum[k]) + sigma*clip*rng.NormFloat64()) / float64(m))
	}
}

func TestFlopsPerExample(t *testing.T) {
	mod, err := New(Spec{Arch: "tfp-cnn", InputShape: []int{1, 28, 28}, Classes: 10}, 1)
	if err != nil {
		t.Fatal(err)
	}
	// conv1 196·1024 + conv2 25·8192 + dense 16384 + 320 MACs forward, the
	// same for weight gradients, and all but conv1 again for input gradients.
	want := 2 * float64(2*(196*1024+25*8192+16384+320)+(25*8192+16384+320))
	if got := flopsPerExample(mod); got != want {
		t.Errorf("flopsPerExample = %v, want %v", got, want)
	}
}
