//go:build !amd64 || purego

package vec

// CPU is Go without assembly support.
func CPU() ISA { return Go }

func sumSquaresAVX2(x *float32, n int) float64 {
	panic("vec: sumSquaresAVX2 without assembly support")
}

func scaleSumSquaresAVX2(x *float32, n int, s float32) float64 {
	panic("vec: scaleSumSquaresAVX2 without assembly support")
}

func addScaledAVX2(y, x *float32, n int, s float32, store bool) float64 {
	panic("vec: addScaledAVX2 without assembly support")
}

func addScaledAVX512(y, x *float32, n int, s float32, store bool) float64 {
	panic("vec: addScaledAVX512 without assembly support")
}

func addGridAVX2(acc *int64, x *float32, n int, k float32) (int, uint64, uint64) {
	panic("vec: addGridAVX2 without assembly support")
}

func addGridAVX512(acc *int64, x *float32, n int, k float32) (int, uint64, uint64) {
	panic("vec: addGridAVX512 without assembly support")
}

func reluAVX2(y, x *float32, n int)   { panic("vec: reluAVX2 without assembly support") }
func reluAVX512(y, x *float32, n int) { panic("vec: reluAVX512 without assembly support") }

func reluBackAVX2(dx, y, dy *float32, n int) {
	panic("vec: reluBackAVX2 without assembly support")
}

func reluBackAVX512(dx, y, dy *float32, n int) {
	panic("vec: reluBackAVX512 without assembly support")
}

func addRowsAVX2(dst, m *float32, c, n, rows int) {
	panic("vec: addRowsAVX2 without assembly support")
}
