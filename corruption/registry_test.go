package corruption

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// unregister removes a kind registered by a test.
func unregister(name string) {
	kinds.Unregister(name)
}

// TestRegisterKind: a kind registered from outside (here: zero the
// features of a corrupted example and scale its gradient by 3) is applied
// by a Plan exactly to the chosen examples.
func TestRegisterKind(t *testing.T) {
	const name = "test-zero-and-scale"
	Register(name, Kind{
		Data: func(ts TrainingSet, idx []int, _ *rand.Rand) error {
			for _, i := range idx {
				clear(ts.X[i*ts.D : (i+1)*ts.D])
			}
			return nil
		},
		Gradient: func(row []float32, _ *rand.Rand) error {
			for j := range row {
				row[j] *= 3
			}
			return nil
		},
	})
	defer unregister(name)
	if k := Kinds(); k[0] != None || !slices.IsSorted(k[1:]) || !slices.Contains(k, name) {
		t.Fatalf("Kinds() = %v", k)
	}
	const n, d = 10, 2
	p, err := New(name, 0.3, n, 4)
	if err != nil {
		t.Fatal(err)
	}
	if !p.CorruptsData() || !p.CorruptsGradients() || p.Count() != 3 {
		t.Fatalf("plan: data %v gradients %v count %d", p.CorruptsData(), p.CorruptsGradients(), p.Count())
	}
	x := make([]float32, n*d)
	for i := range x {
		x[i] = 1
	}
	if err := p.ApplyData(x, d, nil, 0); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		want := float32(1)
		if p.IsCorrupted(i) {
			want = 0
		}
		if x[i*d] != want || x[i*d+1] != want {
			t.Fatalf("example %d: features %v, want %v", i, x[i*d:(i+1)*d], want)
		}
	}
	row := []float32{1, -2}
	if err := p.CorruptGradient(p.Indices()[0], row, nil); err != nil || !slices.Equal(row, []float32{3, -6}) {
		t.Fatalf("gradient %v (%v), want [3 -6]", row, err)
	}
	_, err = New("nope", 0.1, 10, 1)
	if want := "registered: " + strings.Join(Kinds(), ", "); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("unknown kind: err = %v, want %q", err, want)
	}
}

func TestRegisterKindPanics(t *testing.T) {
	flip := Kind{Gradient: signFlip}
	for _, tc := range []struct {
		name string
		k    Kind
		want string
	}{
		{"", flip, "reserved"},
		{None, flip, "reserved"},
		{"test-empty", Kind{}, "neither"},
		{LabelFlip, flip, "twice"},
	} {
		func() {
			defer func() {
				if s, _ := recover().(string); !strings.Contains(s, tc.want) {
					t.Errorf("Register(%q): panic %q, want one mentioning %q", tc.name, s, tc.want)
				}
			}()
			Register(tc.name, tc.k)
		}()
	}
	want := []string{None, Feature, GradientNoise, GradientSignFlip, LabelFlip, TargetedLabelFlip}
	if got := Kinds(); !slices.Equal(got, want) {
		t.Fatalf("Kinds() = %v, want %v", got, want)
	}
}
