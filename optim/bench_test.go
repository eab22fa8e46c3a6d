package optim

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/privtrain/privtrain/aggregate"
	"github.com/privtrain/privtrain/datasets"
	"github.com/privtrain/privtrain/model"
	"github.com/privtrain/privtrain/privacy"
	"github.com/privtrain/privtrain/randstream"
)

// fixedSampler yields consecutive fixed-size batches, as the Opacus
// reference measurements do, so throughput is comparable.
type fixedSampler struct{ n, b int }

func (f fixedSampler) Batch(step int) []int {
	start := (step * f.b) % (f.n - f.b + 1)
	idx := make([]int, f.b)
	for i := range idx {
		idx[i] = start + i
	}
	return idx
}

func (f fixedSampler) ExpectedBatchSize() float64 { return float64(f.b) }

// benchData returns real MNIST for the MNIST case. No CIFAR-10 files exist
// on these machines, so the CIFAR case uses uniform random pixels of the
// CIFAR shape: the step's cost does not depend on pixel values.
func benchData(b *testing.B, shape []int, n int) *datasets.Dataset {
	if shape[0] == 1 {
		d, err := datasets.Load("mnist", "train", "")
		if err != nil {
			b.Fatal(err)
		}
		return d.Subset(seq(n))
	}
	dim := shape[0] * shape[1] * shape[2]
	rng := rand.New(rand.NewPCG(1, 2))
	d := &datasets.Dataset{Name: "cifar-shaped-random", X: make([]float32, n*dim), Labels: make([]int, n), Shape: shape, Classes: 10, N: n}
	for i := range d.X {
		d.X[i] = rng.Float32()
	}
	for i := range d.Labels {
		d.Labels[i] = rng.IntN(10)
	}
	return d
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// BenchmarkStep measures whole optimizer steps of the TF-Privacy CNN:
// non-private SGD versus a DP-SGD step (per-example gradients, clipping,
// Gaussian noise, update and accounting) and a DP-SGD step with secure
// noise ("dp-secure": exact integer sum on the grid, exactly rounded Gaussian noise;
// aggregate.Config.FloatNoise unset). scripts/bench.sh reports the ratios.
func BenchmarkStep(b *testing.B) {
	cases := []struct {
		name  string
		shape []int
		batch int
	}{
		{"MNIST-256", []int{1, 28, 28}, 256},
		{"CIFAR-1024", []int{3, 32, 32}, 1024},
	}
	for _, method := range []string{"nonprivate", "dp", "dp-secure"} {
		for _, c := range cases {
			b.Run(fmt.Sprintf("%s/%s", method, c.name), func(b *testing.B) {
				data := benchData(b, c.shape, 4*c.batch)
				m, err := model.New(model.Spec{Arch: "tfp-cnn", InputShape: c.shape, Classes: 10}, 1)
				if err != nil {
					b.Fatal(err)
				}
				cfg := Config{Model: m, Data: data, Labels: true, Sampler: fixedSampler{data.N, c.batch}, LR: 0.1, Seed: 1}
				if method != "nonprivate" {
					secure := method == "dp-secure"
					agg, err := aggregate.New("sum", aggregate.Config{Sigma: 1.1, ClipNorm: 1, FloatNoise: !secure})
					if err != nil {
						b.Fatal(err)
					}
					acct, err := privacy.NewRDPAccountant(nil)
					if err != nil {
						b.Fatal(err)
					}
					// A private run needs Poisson subsampling: batches of
					// mean c.batch from the 4·c.batch examples.
					ps, err := datasets.NewPoissonSampler(data.N, float64(c.batch)/float64(data.N), 1)
					if err != nil {
						b.Fatal(err)
					}
					cfg.Aggregator, cfg.ClipNorm, cfg.Accountant, cfg.Sampler = agg, 1, &privacy.RDPAccounting{Acc: acct}, ps
					cfg.Delta, cfg.NoiseKey = 1e-5, randstream.FromSeed(1)
				}
				tr, err := NewTrainer(cfg)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := tr.Step(0); err != nil { // warm-up: buffers, caches
					b.Fatal(err)
				}
				b.ResetTimer()
				cpu0 := processCPUSeconds()
				examples := 0
				for i := 0; i < b.N; i++ {
					res, err := tr.Step(i + 1)
					if err != nil {
						b.Fatal(err)
					}
					examples += res.BatchSize
				}
				b.ReportMetric(float64(examples)/b.Elapsed().Seconds(), "ex/s")
				if cpu := processCPUSeconds() - cpu0; cpu > 0 {
					b.ReportMetric(1000*cpu/float64(b.N), "cpu-ms/op")
				}
			})
		}
	}
}
