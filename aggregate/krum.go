package aggregate

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
)

// Krum is Krum (Blanchard et al., NeurIPS 2017) with f = Config.F assumed
// Byzantine gradients: each gradient is scored by the sum of squared
// distances to its k = m−f−2 nearest other gradients (k clamped to [1, m−1]
// for small batches), and the lowest-scoring gradient g* (ties: lowest
// index) is released on the sum scale as m·g*. Cost O(m²·P) time and O(m²)
// memory for the pairwise distances — the only rule above O(m·P).
//
// The same type implements "multi-krum": the Select (default m−f, clamped
// to [1, m]) lowest scores are kept (ties: lowest index) and released on the
// sum scale as (m/s)·Σ_{selected} g_i; Report.Trimmed is m−s.
//
// Sensitivity: one added or removed gradient can change which gradients are
// selected, moving the sum-scale release by up to 2mR; Gaussian noise at
// that scale is useless, so both rules are offered only non-privately
// (σ = 0).
type Krum struct {
	clipNorm
	f     int
	multi bool
	sel   int
	dist  []float64
	row   []float64
	score []float64
	idx   []int
	acc   []float64
}

// KrumOptions are krum and multi-krum's settings (Config.Sigma, ClipNorm, F, Select); the
// rule is non-private, so σ must be 0.
type KrumOptions struct {
	// Sigma must be 0 (see Krum's sensitivity).
	Sigma float64
	// ClipNorm is R, the L2 bound of every gradient (0: not clipped).
	ClipNorm float64
	// F is the assumed number f of Byzantine gradients (≥ 0).
	F int
	// Multi selects multi-krum, which averages Select gradients.
	Multi bool
	// Select is the number multi-krum averages (0: m − F; ≥ 0).
	Select int
}

// krumOptions returns the translation of Config for krum (multi = false)
// or multi-krum.
func krumOptions(multi bool) func(Config) KrumOptions {
	return func(c Config) KrumOptions {
		o := KrumOptions{Sigma: c.Sigma, ClipNorm: c.ClipNorm, F: c.F, Multi: multi}
		if multi {
			o.Select = c.Select
		}
		return o
	}
}

// Validate checks R, F, σ = 0 and Select ≥ 0.
func (o KrumOptions) Validate() error {
	if err := checkNoise(o.Sigma, o.ClipNorm); err != nil {
		return err
	}
	if err := checkTrim(o.F); err != nil {
		return err
	}
	if !o.Multi {
		return nonPrivateOnly(o.Sigma, "Krum's selection can switch on one gradient, moving the sum-scale release by up to 2mR")
	}
	if err := nonPrivateOnly(o.Sigma, "Multi-Krum's selection can switch on one gradient, moving the sum-scale release by up to 2mR"); err != nil {
		return err
	}
	if o.Select < 0 {
		return fmt.Errorf("multi-krum: number selected must be ≥ 0 (0: m−F), got %d", o.Select)
	}
	return nil
}

// NewKrum returns the krum or multi-krum rule for validated options o.
func NewKrum(o KrumOptions) (*Krum, error) {
	return &Krum{clipNorm: clipNorm(o.ClipNorm), f: o.F, multi: o.Multi, sel: o.Select}, nil
}

// Name returns "krum" or "multi-krum".
func (a *Krum) Name() string {
	if a.multi {
		return "multi-krum"
	}
	return "krum"
}

// Aggregate writes the sum-scale (Multi-)Krum aggregate into out.
func (a *Krum) Aggregate(g Grads, _ *rand.Rand, out []float32) (Report, error) {
	if err := checkGrads(g, out, false, 0); err != nil {
		return Report{}, fmt.Errorf("%s: %w", a.Name(), err)
	}
	m := g.M
	if m == 0 {
		clear(out)
		return Report{}, nil
	}
	if cap(a.dist) < m*m {
		a.dist = make([]float64, m*m)
	}
	d := a.dist[:m*m]
	for i := 0; i < m; i++ {
		ri := row(g, i)
		for j := i + 1; j < m; j++ {
			s := 0.0
			for c, v := range row(g, j) {
				x := float64(ri[c]) - float64(v)
				s += x * x
			}
			d[i*m+j], d[j*m+i] = s, s
		}
	}
	k := min(max(m-a.f-2, 1), m-1)
	a.score = a.score[:0]
	for i := 0; i < m; i++ {
		a.row = a.row[:0]
		for j := 0; j < m; j++ {
			if j != i {
				a.row = append(a.row, d[i*m+j])
			}
		}
		slices.Sort(a.row)
		s := 0.0
		for _, v := range a.row[:k] {
			s += v
		}
		a.score = append(a.score, s)
	}
	a.idx = a.idx[:0]
	for i := 0; i < m; i++ {
		a.idx = append(a.idx, i)
	}
	slices.SortFunc(a.idx, func(x, y int) int {
		if c := cmp.Compare(a.score[x], a.score[y]); c != 0 {
			return c
		}
		return cmp.Compare(x, y)
	})
	s := 1
	if a.multi {
		s = a.sel
		if s == 0 {
			s = m - a.f
		}
		s = min(max(s, 1), m)
	}
	if len(a.acc) != g.P {
		a.acc = make([]float64, g.P)
	}
	sumRows(g, a.idx[:s], a.acc, out)
	scale := float32(float64(m) / float64(s))
	for j := range out {
		out[j] *= scale
	}
	if err := checkFinite(out); err != nil {
		return Report{}, fmt.Errorf("%s: %w", a.Name(), err)
	}
	return Report{Trimmed: m - s}, nil
}
