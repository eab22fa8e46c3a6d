package corruption

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestRatioAndSelection(t *testing.T) {
	cases := []struct {
		kind  string
		ratio float64
		n     int
		want  int
	}{
		{LabelFlip, 0.1, 60000, 6000},
		{Feature, 0.2, 1001, 200},    // round(200.2)
		{GradientNoise, 0.25, 10, 3}, // round(2.5) = 3 (half away from zero)
		{GradientSignFlip, 1, 7, 7},
		{TargetedLabelFlip, 0, 100, 0},
		{None, 0, 50, 0},
		{LabelFlip, 0.5, 0, 0},
	}
	for _, c := range cases {
		p, err := New(c.kind, c.ratio, c.n, 42)
		if err != nil {
			t.Fatal(err)
		}
		idx := p.Indices()
		if p.Count() != c.want || len(idx) != c.want {
			t.Fatalf("%s %v of %d: %d corrupted, want %d", c.kind, c.ratio, c.n, p.Count(), c.want)
		}
		if !slices.IsSorted(idx) || len(slices.Compact(slices.Clone(idx))) != len(idx) {
			t.Fatalf("indices not sorted and distinct: %v", idx)
		}
		marked := 0
		for i := -1; i <= c.n; i++ {
			if p.IsCorrupted(i) {
				marked++
				if _, ok := slices.BinarySearch(idx, i); !ok {
					t.Fatalf("IsCorrupted(%d) but not in Indices", i)
				}
			}
		}
		if marked != c.want {
			t.Fatalf("IsCorrupted marks %d, want %d", marked, c.want)
		}
	}
}

func TestSelectionIsUniform(t *testing.T) {
	// Each of 20 examples is chosen with probability k/n = 0.3; over 4000
	// seeds the counts are Binomial(4000, 0.3): mean 1200, sd ≈ 29.
	const n, trials = 20, 4000
	counts := make([]int, n)
	for s := uint64(0); s < trials; s++ {
		p, err := New(LabelFlip, 0.3, n, s)
		if err != nil {
			t.Fatal(err)
		}
		for _, i := range p.Indices() {
			counts[i]++
		}
	}
	for i, c := range counts {
		if math.Abs(float64(c)-1200) > 4.5*29 {
			t.Errorf("example %d chosen %d times, want ≈ 1200", i, c)
		}
	}
}

func TestLabelFlips(t *testing.T) {
	const n, classes = 5000, 10
	orig := make([]int, n)
	for i := range orig {
		orig[i] = i % classes
	}
	for _, kind := range []string{LabelFlip, TargetedLabelFlip} {
		p, err := New(kind, 0.4, n, 7)
		if err != nil {
			t.Fatal(err)
		}
		labels := slices.Clone(orig)
		if err := p.ApplyData(nil, 0, labels, classes); err != nil {
			t.Fatal(err)
		}
		hist := make([]int, classes)
		for i := range labels {
			switch {
			case !p.IsCorrupted(i) && labels[i] != orig[i]:
				t.Fatalf("%s: clean example %d changed", kind, i)
			case !p.IsCorrupted(i):
			case kind == TargetedLabelFlip && labels[i] != classes-1-orig[i]:
				t.Fatalf("targeted: %d → %d, want %d", orig[i], labels[i], classes-1-orig[i])
			case labels[i] == orig[i] || labels[i] < 0 || labels[i] >= classes:
				t.Fatalf("%s: example %d label %d → %d", kind, i, orig[i], labels[i])
			case kind == LabelFlip && orig[i] == 0:
				hist[labels[i]]++
			}
		}
		if kind == LabelFlip {
			// Corrupted examples with label 0 (≈ 200) spread uniformly
			// over labels 1..9: chi-square with 8 dof, 0.1% quantile ≈ 26.1.
			tot := 0
			for _, h := range hist[1:] {
				tot += h
			}
			e := float64(tot) / (classes - 1)
			chi := 0.0
			for _, h := range hist[1:] {
				chi += (float64(h) - e) * (float64(h) - e) / e
			}
			if hist[0] != 0 || chi > 26.1 {
				t.Errorf("label-flip from 0: histogram %v (χ² = %.1f)", hist, chi)
			}
		}
	}
}

func TestFeatureNoise(t *testing.T) {
	const n, d = 200, 784
	x := make([]float32, n*d)
	for i := range x {
		x[i] = float32(i%7) / 7
	}
	orig := slices.Clone(x)
	p, err := New(Feature, 0.1, n, 3)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.ApplyData(x, d, nil, 0); err != nil {
		t.Fatal(err)
	}
	var s, s2 float64
	cnt := 0
	for i := 0; i < n; i++ {
		for j := i * d; j < (i+1)*d; j++ {
			diff := float64(x[j]) - float64(orig[j])
			if !p.IsCorrupted(i) {
				if diff != 0 {
					t.Fatalf("clean example %d changed", i)
				}
				continue
			}
			s += diff
			s2 += diff * diff
			cnt++
		}
	}
	mean, v := s/float64(cnt), s2/float64(cnt)-(s/float64(cnt))*(s/float64(cnt))
	// cnt = 15680 draws: se(mean) ≈ 0.08, relative se(var) ≈ 1.1%.
	if math.Abs(mean) > 0.4 || math.Abs(v/100-1) > 0.06 {
		t.Errorf("feature noise mean %.3f variance %.2f, want 0 and 100", mean, v)
	}
}

func TestGradientCorruptions(t *testing.T) {
	const n, P = 50, 20000
	pn, _ := New(GradientNoise, 0.2, n, 1)
	ps, _ := New(GradientSignFlip, 0.2, n, 1)
	pl, _ := New(LabelFlip, 0.2, n, 1)
	rng := rand.New(rand.NewPCG(1, 2))
	base := make([]float32, P)
	for j := range base {
		base[j] = float32(j%13) - 6
	}
	bad, good := pn.Indices()[0], -1
	for i := 0; i < n; i++ {
		if !pn.IsCorrupted(i) {
			good = i
			break
		}
	}
	// Noise: variance 100 on a corrupted example, untouched otherwise.
	row := slices.Clone(base)
	if err := pn.CorruptGradient(bad, row, rng); err != nil {
		t.Fatal(err)
	}
	var s2 float64
	for j := range row {
		d := float64(row[j] - base[j])
		s2 += d * d
	}
	if v := s2 / P; math.Abs(v/100-1) > 0.04 {
		t.Errorf("gradient noise variance %.2f, want 100", v)
	}
	for _, p := range []*Plan{pn, ps, pl} {
		row := slices.Clone(base)
		if err := p.CorruptGradient(good, row, rng); err != nil || !slices.Equal(row, base) {
			t.Errorf("%s: clean example's gradient changed (err %v)", p.Kind(), err)
		}
	}
	row = slices.Clone(base)
	if err := pl.CorruptGradient(pl.Indices()[0], row, rng); err != nil || !slices.Equal(row, base) {
		t.Errorf("label-flip changed a gradient")
	}
	// Sign flip: exact negation.
	row = slices.Clone(base)
	if err := ps.CorruptGradient(ps.Indices()[0], row, nil); err != nil {
		t.Fatal(err)
	}
	for j := range row {
		if row[j] != -base[j] {
			t.Fatalf("sign flip coordinate %d: %v, want %v", j, row[j], -base[j])
		}
	}
}

func TestDeterminism(t *testing.T) {
	run := func(seed uint64) ([]int, []int, []float32) {
		p, err := New(LabelFlip, 0.3, 100, seed)
		if err != nil {
			t.Fatal(err)
		}
		labels := make([]int, 100)
		if err := p.ApplyData(nil, 0, labels, 10); err != nil {
			t.Fatal(err)
		}
		q, _ := New(Feature, 0.3, 100, seed)
		x := make([]float32, 300)
		if err := q.ApplyData(x, 3, nil, 0); err != nil {
			t.Fatal(err)
		}
		return p.Indices(), labels, x
	}
	i1, l1, x1 := run(5)
	i2, l2, x2 := run(5)
	i3, _, _ := run(6)
	if !slices.Equal(i1, i2) || !slices.Equal(l1, l2) || !slices.Equal(x1, x2) {
		t.Fatal("same seed, different corruption")
	}
	if slices.Equal(i1, i3) {
		t.Fatal("different seeds chose the same examples")
	}
	p, _ := New(GradientSignFlip, 0.3, 100, 5)
	b, err := json.Marshal(p.Record())
	if err != nil {
		t.Fatal(err)
	}
	var r Record
	if err := json.Unmarshal(b, &r); err != nil || !slices.Equal(r.Indices, i1) || r.Kind != GradientSignFlip || r.N != 100 {
		t.Fatalf("record round trip: %s", b)
	}
}

func TestInvalid(t *testing.T) {
	news := []struct {
		kind  string
		ratio float64
		n     int
		msg   string
	}{
		{"bitflip", 0.1, 10, "unknown kind"},
		{LabelFlip, -0.1, 10, "ratio"},
		{LabelFlip, math.NaN(), 10, "ratio"},
		{LabelFlip, 1.5, 10, "ratio"},
		{None, 0.1, 10, "ratio 0"},
		{Feature, 0.1, -1, "≥ 0"},
	}
	for _, c := range news {
		if _, err := New(c.kind, c.ratio, c.n, 1); err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("New(%q, %v, %d): error %v, want %q", c.kind, c.ratio, c.n, err, c.msg)
		}
	}
	p, _ := New(LabelFlip, 0.5, 4, 1)
	for _, c := range []struct {
		labels  []int
		classes int
		msg     string
	}{
		{[]int{0, 1, 2}, 3, "3 labels"},
		{[]int{0, 0, 0, 0}, 1, "2 classes"},
		{[]int{5, 5, 5, 5}, 3, "outside"},
	} {
		if err := p.ApplyData(nil, 0, c.labels, c.classes); err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("ApplyData(%v, %d): error %v, want %q", c.labels, c.classes, err, c.msg)
		}
	}
	f, _ := New(Feature, 0.5, 4, 1)
	if err := f.ApplyData(make([]float32, 7), 2, nil, 0); err == nil {
		t.Error("feature: wrong size accepted")
	}
	g, _ := New(GradientNoise, 1, 4, 1)
	if err := g.CorruptGradient(0, make([]float32, 3), nil); err == nil {
		t.Error("gradient noise: nil rng accepted")
	}
	if err := g.CorruptGradient(4, make([]float32, 3), nil); err == nil {
		t.Error("out-of-range index accepted")
	}
}
