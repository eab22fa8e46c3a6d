package vec

import "fmt"

// AddRows adds the rows of the rows × len(dst) row-major matrix m to dst:
// dst[k] += m[r·c + k] for r = 0, 1, …, rows−1 in order (c = len(dst)),
// each addition rounded to float32, so every column is summed exactly as
// the plain loop sums it; the kernels only add several columns at once.
// It panics if m has fewer than rows·c values.
func AddRows(dst, m []float32, rows int) { addRowsWith(level, dst, m, rows) }

func addRowsWith(l ISA, dst, m []float32, rows int) {
	c := len(dst)
	if rows < 0 || len(m) < rows*c {
		panic(fmt.Sprintf("vec: AddRows of %d rows of %d values from %d values", rows, c, len(m)))
	}
	done := 0
	if l >= AVX2 && c >= 8 && rows > 0 {
		done = c &^ 7
		addRowsAVX2(&dst[0], &m[0], c, done, rows)
	}
	if done == c {
		return
	}
	for r := 0; r < rows; r++ {
		row := m[r*c+done : (r+1)*c]
		for k, v := range row {
			dst[done+k] += v
		}
	}
}
