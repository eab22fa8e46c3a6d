package vec

// SumSquares returns Σ x[i]² with every square exact (float32 widened to
// float64) and float64 accumulation, so for n values the relative error is
// at most (n/16 + 4)·2⁻⁵³ (nonnegative terms, 16 lanes plus the final
// combination). NaN and ±Inf propagate.
func SumSquares(x []float32) float64 {
	if level >= AVX2 && len(x) > 0 {
		return sumSquaresAVX2(&x[0], len(x))
	}
	return sumSquaresGo(x)
}

// ScaleSumSquares sets x[i] = fl32(s·x[i]) and returns Σ x[i]² of the
// stored values, as SumSquares would compute it, in one pass.
func ScaleSumSquares(x []float32, s float32) float64 {
	if level >= AVX2 && len(x) > 0 {
		return scaleSumSquaresAVX2(&x[0], len(x), s)
	}
	for i := range x {
		x[i] *= s
	}
	return sumSquaresGo(x)
}

// sumSquaresGo is SumSquares in Go, in the assembly kernel's order: lanes
// j = 0..15 take the elements ≡ j (mod 16) of the whole 16-blocks, the
// lanes are combined as ((l0+l4)+(l8+l12)) + ... (see reduce16) and the
// tail is added in order.
func sumSquaresGo(x []float32) float64 {
	var l [16]float64
	n16 := len(x) &^ 15
	for i := 0; i < n16; i += 16 {
		b := x[i : i+16 : i+16]
		for j, v := range b {
			f := float64(v)
			l[j] += f * f
		}
	}
	s := reduce16(&l)
	for _, v := range x[n16:] {
		f := float64(v)
		s += f * f
	}
	return s
}

// reduce16 combines 16 lane sums as the assembly does: four Y registers
// Y_r = lanes 4r..4r+3; Y0 = (Y0+Y1) + (Y2+Y3) lane-wise; then the upper
// half is added to the lower half and the two results are added.
func reduce16(l *[16]float64) float64 {
	var y [4]float64
	for k := 0; k < 4; k++ {
		y[k] = (l[k] + l[4+k]) + (l[8+k] + l[12+k])
	}
	return (y[0] + y[2]) + (y[1] + y[3])
}
