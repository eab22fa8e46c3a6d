package optim

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// exceedsExactly reports whether the exact L2 norm of row exceeds r, in
// exact arithmetic (big.Float: every float32 square and their sum exact).
func exceedsExactly(row []float32, r float64) bool {
	const prec = 2000
	s := new(big.Float).SetPrec(prec)
	for _, v := range row {
		f := new(big.Float).SetPrec(prec).SetFloat64(float64(v))
		s.Add(s, f.Mul(f, f))
	}
	rr := new(big.Float).SetPrec(prec).SetFloat64(r)
	rr.Mul(rr, rr)
	return s.Cmp(rr) > 0
}

// naiveClip is the clipping this package used before: scale by
// fl32(r/‖g‖) with no margin.
func naiveClip(row []float32, r float64) {
	n := rowNorm(row)
	if n > r {
		s := float32(r / n)
		for i := range row {
			row[i] *= s
		}
	}
}

// TestClipExactBound checks ‖clipped row‖ ≤ R in exact arithmetic on rows
// built so that naive scaling by fl32(R/‖g‖) lands above R: constant rows
// (every rounding goes the same way), rows whose norm is R·(1+δ) for tiny
// δ, rows of norm exactly R, rows whose clipped values are subnormal, and
// random rows. The test also requires that naive scaling does exceed R on
// some of these rows (else it would not test anything), and that clipping
// shrinks rows by no more than the margin.
func TestClipExactBound(t *testing.T) {
	cases := exactBoundCases()
	naiveFails := 0
	for k, c := range cases {
		naive := append([]float32(nil), c.row...)
		naiveClip(naive, c.r)
		if exceedsExactly(naive, c.r) {
			naiveFails++
		}
		row := append([]float32(nil), c.row...)
		norms := make([]float64, 1)
		if err := clipRows(row, 1, len(row), c.r, nil, norms, 1); err != nil {
			t.Fatalf("case %d (%s): %v", k, c.name, err)
		}
		if exceedsExactly(row, c.r) {
			t.Errorf("case %d (%s, p=%d, R=%v): clipped row has exact norm > R (computed %v)", k, c.name, len(row), c.r, norms[0])
		}
		if norms[0] > c.r {
			t.Errorf("case %d (%s): reported norm %v > R = %v", k, c.name, norms[0], c.r)
		}
		exact := rowNorm(row)
		if math.Abs(norms[0]-exact) > 1e-12*exact {
			t.Errorf("case %d (%s): reported norm %v, norm of the stored row %v", k, c.name, norms[0], exact)
		}
		if orig := rowNorm(c.row); orig > c.r && c.name != "subnormal" && exact < c.r*(1-3*clipMargin) {
			t.Errorf("case %d (%s): clipped to %v, more than the margin below R = %v", k, c.name, exact, c.r)
		}
	}
	if naiveFails == 0 {
		t.Fatalf("naive scaling never exceeded R on %d rows: the cases are not adversarial", len(cases))
	}
	t.Logf("naive fl32(R/‖g‖) scaling exceeded R on %d of %d rows; clipRows on none", naiveFails, len(cases))
}

// exactBoundCase is one row and bound of the exact clipping tests.
type exactBoundCase struct {
	name string
	row  []float32
	r    float64
}

// exactBoundCases builds the rows of TestClipExactBound.
func exactBoundCases() []exactBoundCase {
	rng := rand.New(rand.NewPCG(11, 13))
	type tc = exactBoundCase
	var cases []tc
	for _, p := range []int{1, 2, 3, 5, 17, 100, 1000, 4099} {
		for trial := 0; trial < 12; trial++ {
			r := []float64{1, 0.1, 3.7, 1e-3, 0.3}[trial%5]
			v := float32(0.5 + rng.Float64())
			row := make([]float32, p)
			for i := range row {
				row[i] = v
			}
			cases = append(cases, tc{"constant", row, r})
			// Norm R·(1+δ): a random direction rescaled in float64.
			dir := make([]float64, p)
			var ss float64
			for i := range dir {
				dir[i] = rng.NormFloat64()
				ss += dir[i] * dir[i]
			}
			for _, d := range []float64{0x1p-30, 1e-9, 0x1p-24, 1e-6} {
				row := make([]float32, p)
				for i := range row {
					row[i] = float32(dir[i] / math.Sqrt(ss) * r * (1 + d))
				}
				cases = append(cases, tc{"just-above", row, r})
			}
			rnd := make([]float32, p)
			for i := range rnd {
				rnd[i] = float32(rng.NormFloat64() * 10)
			}
			cases = append(cases, tc{"random", rnd, r})
		}
	}
	cases = append(cases,
		tc{"exactly-R", []float32{3, 4}, 5},
		tc{"exactly-R", []float32{0.6, 0.8}, 1},
		tc{"subnormal", []float32{3e-39, 3e-39, 3e-39, 3e-39}, 1e-39},
		tc{"subnormal", []float32{1e-44, 2e-44, 3e-45}, 1e-44},
		tc{"huge", []float32{3e38, -3e38, 1e38}, 1},
	)
	return cases
}
