package vec

import (
	"fmt"
	"math"
)

// Relu sets y[i] = max(x[i], 0) for i < len(x) (−0 gives +0, NaN gives
// a NaN). It panics if y is shorter than x. Every level gives the same
// bits except for the payload and sign of a NaN (a NaN activation makes
// the loss and the gradients NaN, which are refused downstream).
func Relu(y, x []float32) { reluWith(level, y, x) }

func reluWith(l ISA, y, x []float32) {
	if len(y) < len(x) {
		panic(fmt.Sprintf("vec: Relu into %d values from %d", len(y), len(x)))
	}
	done := 0
	switch {
	case l >= AVX512 && len(x) >= 16:
		done = len(x) &^ 15
		reluAVX512(&y[0], &x[0], done)
	case l >= AVX2 && len(x) >= 8:
		done = len(x) &^ 7
		reluAVX2(&y[0], &x[0], done)
	}
	reluGo(y[done:len(x)], x[done:])
}

func reluGo(y, x []float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] = max(v, 0)
	}
}

// ReluBack sets dx[i] = dy[i] where the bits b of y[i] (a Relu output)
// satisfy int32(−b) < 0 — for y ≥ +0 or NaN exactly when y ≠ +0 — and +0
// elsewhere, for i < len(dx): the gradient of Relu, as a mask without a
// data-dependent branch. It panics if y or dy is shorter than dx.
func ReluBack(dx, y, dy []float32) { reluBackWith(level, dx, y, dy) }

func reluBackWith(l ISA, dx, y, dy []float32) {
	if len(y) < len(dx) || len(dy) < len(dx) {
		panic(fmt.Sprintf("vec: ReluBack of %d values from %d outputs and %d gradients", len(dx), len(y), len(dy)))
	}
	done := 0
	switch {
	case l >= AVX512 && len(dx) >= 16:
		done = len(dx) &^ 15
		reluBackAVX512(&dx[0], &y[0], &dy[0], done)
	case l >= AVX2 && len(dx) >= 8:
		done = len(dx) &^ 7
		reluBackAVX2(&dx[0], &y[0], &dy[0], done)
	}
	reluBackGo(dx[done:], y[done:len(dx)], dy[done:len(dx)])
}

func reluBackGo(dx, y, dy []float32) {
	y, dy = y[:len(dx)], dy[:len(dx)]
	for i := range dx {
		m := -int32(math.Float32bits(y[i])) >> 31
		dx[i] = math.Float32frombits(math.Float32bits(dy[i]) & uint32(m))
	}
}
