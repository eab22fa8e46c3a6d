package model

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"

	"github.com/privtrain/privtrain/internal/vec"
)

// Every assembly kernel is benchmarked beside its pure-Go fallback, with the
// level as the last part of the name (go, avx2, avx512); scripts/bench.sh
// prints the ratios and fails when an assembly level is not faster than go.

// gemmShapes are the products of one MNIST CNN step (chunk of 64 examples).
var gemmShapes = []struct {
	name    string
	tA      bool
	m, n, k int
}{
	{"perex-conv1", true, 16, 64, 196},   // per-example weight gradient, conv 1
	{"perex-conv2", true, 32, 256, 25},   // per-example weight gradient, conv 2
	{"perex-dense1", false, 32, 512, 1},  // per-example outer product, dense 1
	{"fwd-conv1", false, 12544, 16, 64},  // forward conv 1 (64·196 patches)
	{"fwd-conv2", false, 1600, 32, 256},  // forward conv 2
	{"batch-conv2", true, 32, 256, 1600}, // summed weight gradient, conv 2
	{"bwd-conv2", false, 1600, 256, 32},  // patch gradients, conv 2
}

func BenchmarkGemm(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 5))
	for _, s := range gemmShapes {
		a := randF32(rng, s.m*s.k)
		bm := randF32(rng, s.k*s.n)
		c := alignedF32(s.m * s.n)
		lda := s.k
		if s.tA {
			lda = s.m
		}
		for _, level := range testLevels() {
			b.Run(fmt.Sprintf("%s/%v", s.name, level), func(b *testing.B) {
				for range b.N {
					gemmWith(level, s.tA, false, s.m, s.n, s.k, 1, a, lda, bm, s.n, 0, c, s.n)
				}
				b.ReportMetric(2*float64(s.m*s.n*s.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

func randF32(rng *rand.Rand, n int) []float32 {
	x := alignedF32(n)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	return x
}

// BenchmarkPoolForward is the first max-pool of the MNIST CNN on 64
// examples, with the AVX-512 and AVX2 kernels and with the Go loop.
func BenchmarkPoolForward(b *testing.B) {
	g := &poolGeom{c: 16, inH: 14, inW: 14, k: 2, stride: 1, outH: 13, outW: 13}
	n := 64
	rng := rand.New(rand.NewPCG(1, 1))
	in := make([]float32, n*g.inSize())
	for i := range in {
		in[i] = max(0, float32(rng.NormFloat64()))
	}
	out := make([]float32, n*g.outSize())
	arg := make([]int32, n*g.outSize())
	offs := g.windowOffsets()
	for _, level := range testLevels() {
		b.Run(level.String(), func(b *testing.B) {
			for range b.N {
				g.forwardWith(level, in, n, out, arg, offs)
			}
		})
	}
}

// BenchmarkFMAPeak measures the machine's single-precision FMA peak: 12
// independent FMA chains per core on every core the benchmark may use
// (GOMAXPROCS goroutines), reported in GFLOP/s. scripts/bench.sh takes the
// larger of the two as the peak.
func BenchmarkFMAPeak(b *testing.B) {
	kernels := []struct {
		level vec.ISA
		run   func(int)
		flop  float64 // per round
	}{{vec.AVX2, fmaPeakAVX2, 12 * 8 * 2}, {vec.AVX512, fmaPeakAVX512, 12 * 16 * 2}}
	for _, k := range kernels {
		if vec.CPU() < k.level {
			continue
		}
		b.Run(k.level.String(), func(b *testing.B) {
			const rounds = 1 << 20
			workers := runtime.GOMAXPROCS(0)
			var wg sync.WaitGroup
			for range b.N {
				for w := 0; w < workers; w++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						k.run(rounds)
					}()
				}
				wg.Wait()
			}
			b.ReportMetric(k.flop*rounds*float64(workers)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
