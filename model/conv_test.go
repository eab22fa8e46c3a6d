package model

import (
	"math/rand/v2"
	"testing"
)

func BenchmarkIm2col(b *testing.B) {
	for _, c := range []struct {
		name string
		g    convGeom
	}{
		{"mnist-conv1", convGeom{inC: 1, inH: 28, inW: 28, outC: 16, k: 8, stride: 2, pad: 3, outH: 14, outW: 14}},
		{"mnist-conv2", convGeom{inC: 16, inH: 13, inW: 13, outC: 32, k: 4, stride: 2, outH: 5, outW: 5}},
	} {
		b.Run(c.name, func(b *testing.B) {
			n := 64
			rng := rand.New(rand.NewPCG(1, 1))
			in := make([]float32, n*c.g.inSize())
			for i := range in {
				in[i] = rng.Float32()
			}
			cols := make([]float32, n*c.g.rows()*c.g.cols())
			b.ResetTimer()
			for range b.N {
				c.g.im2col(in, n, cols)
			}
		})
	}
}
