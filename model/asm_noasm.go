//go:build !amd64 || purego

package model

func kern4x16(k int, a *float32, ai, al int, b *float32, ldb int, c *float32, ldc int, store bool) {
	panic("model: kern4x16 without assembly support")
}

func kern8x32(k int, a *float32, ai, al int, b *float32, ldb int, c *float32, ldc int, store bool) {
	panic("model: kern8x32 without assembly support")
}

func poolMaxAVX2(x *float32, first int, offs *int, noffs int, c int, y *float32, arg *int32) {
	panic("model: poolMaxAVX2 without assembly support")
}

func fmaPeakAVX2(iters int) { panic("model: fmaPeakAVX2 without assembly support") }

func fmaPeakAVX512(iters int) { panic("model: fmaPeakAVX512 without assembly support") }

func poolMaxAVX512(x *float32, first int, offs *int, noffs int, c int, y *float32, arg *int32) {
	panic("model: poolMaxAVX512 without assembly support")
}
