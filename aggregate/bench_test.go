package aggregate

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkRules runs each rule on a batch of 256 gradients of dimension
// 26,010 (the TF-Privacy MNIST CNN's parameter count).
func BenchmarkRules(b *testing.B) {
	const m, p = 256, 26010
	g := batch(randRows(rand.New(rand.NewPCG(1, 1)), m, p, 1), 1)
	cfgs := map[string]Config{
		"sum":                {Sigma: 1.1, ClipNorm: 1, FloatNoise: true},
		"tsum":               {Sigma: 0.7, ClipNorm: 1, F: 64, FloatNoise: true},
		"ptr-tsum":           {Sigma: 1.1, ClipNorm: 1, Tau: 0.5, B: 1, Delta0: 1e-8, F: 64, FloatNoise: true},
		"coord-median":       {},
		"coord-trimmed-mean": {TrimFraction: 0.1},
		"krum":               {F: 25},
		"multi-krum":         {F: 25},
		"geomed":             {MaxIter: 20},
		"centered-clip":      {Radius: 0.5, Iters: 3},
	}
	for _, name := range Names() {
		cfg, ok := cfgs[name]
		if !ok {
			continue
		}
		b.Run(name, func(b *testing.B) {
			a, err := New(name, cfg)
			if err != nil {
				b.Fatal(err)
			}
			out := make([]float32, p)
			rng := rand.New(rand.NewPCG(2, 2))
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if _, err := a.Aggregate(g, rng, out); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
