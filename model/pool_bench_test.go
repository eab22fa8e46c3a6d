package model

import (
	"math/rand/v2"
	"testing"
)

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
	for b.Loop() {
		g.forward(in, n, out, arg, offs)
	}
}
