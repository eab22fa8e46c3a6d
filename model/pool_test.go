package model

import (
	"math/rand/v2"
	"testing"

	"github.com/privtrain/privtrain/internal/vec"
)

// TestPoolTies checks that max-pooling routes the gradient of a tied window
// to its first maximum and handles negative inputs.
func TestPoolTies(t *testing.T) {
	g := &poolGeom{c: 1, inH: 2, inW: 3, k: 2, stride: 1, outH: 1, outW: 2}
	in := []float32{-1, -3, -2, -1, -5, -2}
	out := make([]float32, 2)
	arg := make([]int32, 2)
	g.forward(in, 1, out, arg, g.windowOffsets())
	if out[0] != -1 || arg[0] != 0 || out[1] != -2 || arg[1] != 2 {
		t.Errorf("forward: out %v arg %v, want [-1 -2] [0 2]", out, arg)
	}
	din := make([]float32, 6)
	g.backward([]float32{10, 20}, arg, 1, din)
	if want := []float32{10, 0, 20, 0, 0, 0}; !equalF32(din, want) {
		t.Errorf("backward: %v, want %v", din, want)
	}
}

func equalF32(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestPoolAVX2 checks the assembly kernels (AVX2, and AVX-512 where the
// CPU has it) against the Go loop on data with
// many ties and negative values.
func TestPoolAVX2(t *testing.T) {
	if vec.CPU() < vec.AVX2 {
		t.Skip("no AVX2/FMA")
	}
	rng := rand.New(rand.NewPCG(3, 3))
	for _, g := range []*poolGeom{
		{c: 16, inH: 14, inW: 14, k: 2, stride: 1, outH: 13, outW: 13},
		{c: 32, inH: 5, inW: 5, k: 2, stride: 1, outH: 4, outW: 4},
		{c: 8, inH: 10, inW: 10, k: 2, stride: 2, outH: 5, outW: 5},
		{c: 24, inH: 7, inW: 9, k: 3, stride: 2, outH: 3, outW: 4},
		{c: 48, inH: 6, inW: 5, k: 3, stride: 1, outH: 4, outW: 3},
	} {
		n := 3
		in := make([]float32, n*g.inSize())
		for i := range in {
			in[i] = float32(rng.IntN(7) - 3) // ties and negatives
		}
		offs := g.windowOffsets()
		y1, y2 := make([]float32, n*g.outSize()), make([]float32, n*g.outSize())
		a1, a2 := make([]int32, n*g.outSize()), make([]int32, n*g.outSize())
		g.forwardWith(vec.Go, in, n, y1, a1, offs)
		for _, level := range testLevels()[1:] {
			g.forwardWith(level, in, n, y2, a2, offs)
			for i := range y1 {
				if y1[i] != y2[i] || a1[i] != a2[i] {
					t.Fatalf("%+v: output %d: Go (%v at %d), %v (%v at %d)", *g, i, y1[i], a1[i], level, y2[i], a2[i])
				}
			}
		}
	}
}
