package audit

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sort"
	"sync"

	"github.com/privtrain/privtrain/privacy/audit"
)

// statistic maps one release (len P) to a real number.
type statistic struct {
	name string
	f    func(y []float32) float64
}

// statistics returns the candidate statistics, fitted on the selection
// halves a (releases on D) and b (on D′) of n releases each.
func statistics(a, b []float32, n, p int, floatTests bool) []statistic {
	mu0, mu1 := mean(a, n, p), mean(b, n, p)
	u := make([]float64, p)
	var norm float64
	jmax, dmax := 0, -1.0
	for j := range u {
		u[j] = mu1[j] - mu0[j]
		norm += u[j] * u[j]
		if d := math.Abs(u[j]); d > dmax {
			jmax, dmax = j, d
		}
	}
	norm = math.Sqrt(norm)
	if norm == 0 {
		u[0], norm = 1, 1
	}
	for j := range u {
		u[j] /= norm
	}
	dist := func(mu []float64) func([]float32) float64 {
		return func(y []float32) float64 {
			var s float64
			for j, v := range y {
				d := float64(v) - mu[j]
				s += d * d
			}
			return math.Sqrt(s)
		}
	}
	stats := []statistic{
		{"projection on the mean difference", func(y []float32) float64 {
			var s float64
			for j, v := range y {
				s += (float64(v) - mu0[j]) * u[j]
			}
			return s
		}},
		{"distance to the mean release on D", dist(mu0)},
		{"distance to the mean release on D′", dist(mu1)},
	}
	for j := 0; j < min(p, 8); j++ {
		j := j
		stats = append(stats, statistic{fmt.Sprintf("coordinate %d", j), func(y []float32) float64 { return float64(y[j]) }})
	}
	if floatTests {
		stats = append(stats, statistic{fmt.Sprintf("float32 granularity (exponent of the lowest set bit) of coordinate %d", jmax),
			func(y []float32) float64 { return lowestBit(y[jmax]) }})
	}
	return stats
}

// lowestBit returns the exponent e of the lowest set bit of v (v is an odd
// multiple of 2^e); +1000 for 0, which is a multiple of everything.
func lowestBit(v float32) float64 {
	b := math.Float32bits(v)
	exp := int(b>>23) & 0xff
	mant := b & 0x7fffff
	if exp == 0xff {
		return math.NaN()
	}
	if exp == 0 {
		if mant == 0 {
			return 1000
		}
		return float64(-149 + bits.TrailingZeros32(mant))
	}
	mant |= 1 << 23
	return float64(exp - 150 + bits.TrailingZeros32(mant))
}

func mean(x []float32, n, p int) []float64 {
	mu := make([]float64, p)
	for i := 0; i < n; i++ {
		for j, v := range x[i*p : (i+1)*p] {
			mu[j] += float64(v)
		}
	}
	for j := range mu {
		mu[j] /= float64(n)
	}
	return mu
}

// test is a chosen distinguishing test: guess "D" (or "D′" when favourD is
// false) when sign·stat(y) > threshold.
type test struct {
	stat      statistic
	sign      float64
	threshold float64
	favourD   bool
	selection float64 // ε bound on the selection half
}

func (t test) String() string {
	op := ">"
	thr := t.threshold
	if t.sign < 0 {
		op, thr = "<", -thr
	}
	side := "D"
	if !t.favourD {
		side = "D′"
	}
	return fmt.Sprintf("guess %s when %s %s %.6g", side, t.stat.name, op, thr)
}

// apply evaluates sign·stat on n releases.
func apply(s statistic, sign float64, x []float32, n, p int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = sign * s.f(x[i*p:(i+1)*p])
	}
	return out
}

// countAbove returns #{v ∈ sorted : v > thr}.
func countAbove(sorted []float64, thr float64) int {
	return len(sorted) - sort.Search(len(sorted), func(i int) bool { return sorted[i] > thr })
}

// ranks are the order statistics tried as thresholds: every rank up to 16,
// then geometrically spaced.
func ranks(n int) []int {
	var r []int
	for k := 0; k < n; {
		r = append(r, k)
		if k < 16 {
			k++
		} else {
			k = int(float64(k)*1.15) + 1
		}
	}
	return r
}

// choose picks the test with the largest ε lower bound (at δ, alpha) on
// the selection halves a, b; the statistics are scored in parallel.
func choose(stats []statistic, a, b []float32, n, p int, delta, alpha float64, workers int) (test, error) {
	best := make([]test, len(stats))
	errs := make([]error, len(stats))
	sem := make(chan struct{}, max(workers, 1))
	var wg sync.WaitGroup
	for i, s := range stats {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int, s statistic) {
			defer wg.Done()
			defer func() { <-sem }()
			best[i], errs[i] = chooseThreshold(s, a, b, n, p, delta, alpha)
		}(i, s)
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return test{}, err
	}
	out := best[0]
	for _, t := range best[1:] {
		if t.selection > out.selection {
			out = t
		}
	}
	return out, nil
}

// chooseThreshold finds the best event {±s > v} for one statistic.
func chooseThreshold(s statistic, a, b []float32, n, p int, delta, alpha float64) (test, error) {
	best := test{stat: s, sign: 1, selection: -1}
	xa, xb := apply(s, 1, a, n, p), apply(s, 1, b, n, p)
	if slices.ContainsFunc(xa, math.IsNaN) || slices.ContainsFunc(xb, math.IsNaN) {
		return test{}, fmt.Errorf("statistic %q is NaN on some release", s.name)
	}
	slices.Sort(xa)
	slices.Sort(xb)
	rk := ranks(n)
	for _, sign := range []float64{1, -1} {
		if sign < 0 {
			// −x sorted ascending is x reversed and negated.
			for _, x := range [][]float64{xa, xb} {
				slices.Reverse(x)
				for i := range x {
					x[i] = -x[i]
				}
			}
		}
		seen := map[float64]bool{}
		for _, src := range [][]float64{xa, xb} {
			for _, k := range rk {
				thr := src[n-1-k]
				if seen[thr] {
					continue
				}
				seen[thr] = true
				ca, cb := countAbove(xa, thr), countAbove(xb, thr)
				for _, favourD := range []bool{true, false} {
					c := audit.Counts{KA: ca, NA: n, KB: cb, NB: n}
					if !favourD {
						c = audit.Counts{KA: cb, NA: n, KB: ca, NB: n}
					}
					// Clopper–Pearson bounds lie on the far side of the
					// point estimates, so the bound never beats the point
					// estimate's ε: skip events that cannot win.
					pt, err := audit.EpsilonFromRates(float64(c.KB)/float64(n), 1-float64(c.KA)/float64(n), delta)
					if err != nil {
						return test{}, err
					}
					if pt <= best.selection {
						continue
					}
					e, err := audit.EmpiricalEpsilon(c, delta, alpha)
					if err != nil {
						return test{}, err
					}
					if e > best.selection {
						best = test{stat: s, sign: sign, threshold: thr, favourD: favourD, selection: e}
					}
				}
			}
		}
	}
	return best, nil
}

// evaluate runs t on the evaluation halves and returns the counts.
func evaluate(t test, a, b []float32, n, p int) audit.Counts {
	ca, cb := 0, 0
	for i := 0; i < n; i++ {
		if t.sign*t.stat.f(a[i*p:(i+1)*p]) > t.threshold {
			ca++
		}
		if t.sign*t.stat.f(b[i*p:(i+1)*p]) > t.threshold {
			cb++
		}
	}
	if t.favourD {
		return audit.Counts{KA: ca, NA: n, KB: cb, NB: n}
	}
	return audit.Counts{KA: cb, NA: n, KB: ca, NB: n}
}
