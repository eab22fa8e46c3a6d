package aggregate

// colBlock is the number of coordinates gathered at once by the
// coordinate-wise rules, so that reads of G stay contiguous.
const colBlock = 32

// forColumns calls fn(j, col) for every coordinate j with col holding the m
// values g_1[j], …, g_m[j] (fn may reorder col). buf is reused scratch.
func forColumns(g Grads, buf []float32, fn func(j int, col []float32)) []float32 {
	m := g.M
	if cap(buf) < colBlock*m {
		buf = make([]float32, colBlock*m)
	}
	buf = buf[:colBlock*m]
	for j0 := 0; j0 < g.P; j0 += colBlock {
		w := min(colBlock, g.P-j0)
		for i := 0; i < m; i++ {
			r := g.G[i*g.P+j0 : i*g.P+j0+w]
			for c, v := range r {
				buf[c*m+i] = v
			}
		}
		for c := 0; c < w; c++ {
			fn(j0+c, buf[c*m:(c+1)*m])
		}
	}
	return buf
}

// nth reorders a so that a[k] is its k-th smallest element (0-based), with
// a[:k] ≤ a[k] ≤ a[k+1:] (Hoare quickselect, median-of-three pivot;
// deterministic).
func nth(a []float32, k int) {
	lo, hi := 0, len(a)-1
	for hi > lo {
		mid := lo + (hi-lo)/2
		if a[mid] < a[lo] {
			a[mid], a[lo] = a[lo], a[mid]
		}
		if a[hi] < a[lo] {
			a[hi], a[lo] = a[lo], a[hi]
		}
		if a[hi] < a[mid] {
			a[hi], a[mid] = a[mid], a[hi]
		}
		pivot := a[mid]
		i, j := lo, hi
		for i <= j {
			for a[i] < pivot {
				i++
			}
			for a[j] > pivot {
				j--
			}
			if i <= j {
				a[i], a[j] = a[j], a[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return
		}
	}
}
