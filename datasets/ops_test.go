package datasets

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func smallDataset() *Dataset {
	return &Dataset{
		Name:    "small",
		X:       []float32{0, 1, 10, 11, 20, 21, 30, 31},
		Shape:   []int{2},
		Labels:  []int{0, 1, 2, 1},
		Targets: []float32{-1, 1, 1, -1},
		Classes: 3,
		N:       4,
	}
}

func TestGatherSubset(t *testing.T) {
	d := smallDataset()
	idx := []int{3, 0, 3}
	x := make([]float32, 6)
	labels := make([]int, 3)
	targets := make([]float32, 3)
	if err := d.Gather(idx, x, labels, targets); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(x, []float32{30, 31, 0, 1, 30, 31}) || !slices.Equal(labels, []int{1, 0, 1}) || !slices.Equal(targets, []float32{-1, -1, -1}) {
		t.Errorf("Gather: x %v labels %v targets %v", x, labels, targets)
	}
	// nil buffers are skipped.
	x2 := make([]float32, 2)
	if err := d.Gather([]int{2}, x2, nil, nil); err != nil || !slices.Equal(x2, []float32{20, 21}) {
		t.Errorf("Gather x only: %v %v", x2, err)
	}
	s := d.Subset(idx)
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	if s.N != 3 || !slices.Equal(s.X, x) || !slices.Equal(s.Labels, labels) || s.Classes != 3 {
		t.Errorf("Subset: %+v", s)
	}
	s.X[0] = 99
	if d.X[6] != 30 {
		t.Error("Subset shares memory with its parent")
	}

	for _, tc := range []struct {
		name    string
		idx     []int
		x       []float32
		labels  []int
		targets []float32
		d       *Dataset
		want    string
	}{
		{"index too large", []int{0, 4}, make([]float32, 4), nil, nil, d, "index 4 (position 1) outside [0, 4)"},
		{"negative index", []int{-1}, nil, nil, nil, d, "index -1"},
		{"short x", []int{0, 1}, make([]float32, 3), nil, nil, d, "x buffer has 3 values, need 4"},
		{"short labels", []int{0, 1}, nil, make([]int, 1), nil, d, "labels buffer"},
		{"short targets", []int{0, 1}, nil, nil, make([]float32, 1), d, "targets buffer"},
		{"no targets", []int{0}, nil, nil, make([]float32, 1), &Dataset{Name: "n", X: []float32{1}, Shape: []int{1}, Labels: []int{0}, Classes: 1, N: 1}, "has none"},
	} {
		err := tc.d.Gather(tc.idx, tc.x, tc.labels, tc.targets)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want error mentioning %q", tc.name, err, tc.want)
		}
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		modify func(d *Dataset)
		want   string
	}{
		{"valid", func(d *Dataset) {}, ""},
		{"short X", func(d *Dataset) { d.X = d.X[:7] }, "len(X) = 7"},
		{"bad shape", func(d *Dataset) { d.Shape = []int{0} }, "invalid shape"},
		{"label range", func(d *Dataset) { d.Labels[2] = 3 }, "label 3 of example 2"},
		{"label count", func(d *Dataset) { d.Labels = d.Labels[:3] }, "3 labels for 4 examples"},
		{"no classes", func(d *Dataset) { d.Classes = 0 }, "0 classes"},
		{"NaN feature", func(d *Dataset) { d.X[5] = float32(math.NaN()) }, "feature 1 of example 2"},
		{"Inf target", func(d *Dataset) { d.Targets[1] = float32(math.Inf(1)) }, "target of example 1"},
		{"no outputs", func(d *Dataset) { d.Labels, d.Targets = nil, nil }, "neither labels nor targets"},
	} {
		d := smallDataset()
		tc.modify(d)
		err := d.Validate()
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want error mentioning %q", tc.name, err, tc.want)
		}
	}
	var nilDS *Dataset
	if nilDS.Validate() == nil {
		t.Error("nil dataset validated")
	}
}
