package model

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestSaveLoadRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for _, s := range testSpecs {
		t.Run(specName(s), func(t *testing.T) {
			m := perturbed(t, s, 11)
			path := filepath.Join(dir, "m.bin")
			if err := Save(path, m); err != nil {
				t.Fatal(err)
			}
			got, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			gs, ws := got.Spec(), m.Spec()
			if gs.Arch != ws.Arch || !slices.Equal(gs.InputShape, ws.InputShape) || gs.Classes != ws.Classes || gs.L2 != ws.L2 {
				t.Errorf("spec %+v, want %+v", gs, ws)
			}
			if !slices.Equal(got.Params(), m.Params()) {
				t.Error("parameters differ after round trip")
			}
			// The loaded model computes the same outputs.
			b := randomBatch(s, 5, rand.New(rand.NewPCG(1, 2)))
			o1 := make([]float32, 5*s.Classes)
			o2 := make([]float32, 5*s.Classes)
			if err := m.Predict(b.X, 5, o1); err != nil {
				t.Fatal(err)
			}
			if err := got.Predict(b.X, 5, o2); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(o1, o2) {
				t.Errorf("Predict differs after round trip: %v vs %v", o1, o2)
			}
			// No temporary files are left behind.
			ents, _ := os.ReadDir(dir)
			if len(ents) != 1 {
				t.Errorf("directory holds %d entries after Save, want 1", len(ents))
			}
		})
	}
}

func TestLoadCorrupt(t *testing.T) {
	dir := t.TempDir()
	s := Spec{Arch: "logreg", InputShape: []int{4}, Classes: 3}
	m := perturbed(t, s, 1)
	path := filepath.Join(dir, "good.bin")
	if err := Save(path, m); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	mutate := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "bad magic"},
		{"magic", mutate(func(b []byte) []byte { b[0] = 'X'; return b }), "bad magic"},
		{"version", mutate(func(b []byte) []byte { binary.LittleEndian.PutUint32(b[8:], 99); return b }), "version 99"},
		{"truncated header", good[:14], "truncated"},
		{"truncated params", good[:len(good)-40], "truncated"},
		{"truncated checksum", good[:len(good)-1], "truncated"},
		{"trailing", append(bytes.Clone(good), 0), "trailing"},
		{"flipped param bit", mutate(func(b []byte) []byte { b[len(b)-40] ^= 1; return b }), "checksum"},
		{"flipped checksum bit", mutate(func(b []byte) []byte { b[len(b)-1] ^= 0x80; return b }), "checksum"},
	} {
		p := filepath.Join(dir, tc.name)
		if err := os.WriteFile(p, tc.data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(p)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: Load error %v, want one naming the file and containing %q", tc.name, err, tc.want)
		}
	}
	if _, err := Load(filepath.Join(dir, "missing")); err == nil {
		t.Error("Load of a missing file: no error")
	}
	if err := Save(filepath.Join(dir, "no", "such", "dir", "m.bin"), m); err == nil {
		t.Error("Save into a missing directory: no error")
	}
}

// TestDeterminism checks that a seed fixes initialisation and that results
// are bit-identical across runs and models.
func TestDeterminism(t *testing.T) {
	for _, s := range testSpecs[:3] {
		a, _ := New(s, 42)
		b, _ := New(s, 42)
		c, _ := New(s, 43)
		if !slices.Equal(a.Params(), b.Params()) {
			t.Errorf("%s: same seed, different parameters", specName(s))
		}
		if slices.Equal(a.Params(), c.Params()) {
			t.Errorf("%s: different seeds, same parameters", specName(s))
		}
		batch := randomBatch(s, 150, rand.New(rand.NewPCG(5, 5)))
		P := a.NumParams()
		ga, gb := make([]float32, P), make([]float32, P)
		la, _ := a.BatchGrad(batch, ga)
		lb, _ := b.BatchGrad(batch, gb)
		if la != lb || !slices.Equal(ga, gb) {
			t.Errorf("%s: BatchGrad not reproducible", specName(s))
		}
		pa, pb := make([]float32, 150*P), make([]float32, 150*P)
		l1, l2 := make([]float32, 150), make([]float32, 150)
		if err := a.PerExampleGrads(batch, pa, l1); err != nil {
			t.Fatal(err)
		}
		if err := b.PerExampleGrads(batch, pb, l2); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(pa, pb) || !slices.Equal(l1, l2) {
			t.Errorf("%s: PerExampleGrads not reproducible", specName(s))
		}
	}
}

func TestInitialisation(t *testing.T) {
	// Keras defaults for tfp-cnn: Glorot-uniform kernels, zero biases.
	m, _ := New(Spec{Arch: "tfp-cnn", InputShape: []int{1, 28, 28}, Classes: 10}, 7)
	p := m.Params()
	for _, l := range []struct {
		off, nW, nB   int
		fanIn, fanOut int
	}{
		{0, 1024, 16, 64, 1024},
		{1040, 8192, 32, 256, 512},
		{9264, 16384, 32, 512, 32},
		{25680, 320, 10, 32, 10},
	} {
		lim := float32(math.Sqrt(6 / float64(l.fanIn+l.fanOut)))
		var maxAbs float32
		for _, v := range p[l.off : l.off+l.nW] {
			maxAbs = max(maxAbs, float32(math.Abs(float64(v))))
		}
		if maxAbs > lim || maxAbs < 0.9*lim {
			t.Errorf("layer at %d: max |w| = %v, want just below the Glorot limit %v", l.off, maxAbs, lim)
		}
		for _, v := range p[l.off+l.nW : l.off+l.nW+l.nB] {
			if v != 0 {
				t.Fatalf("layer at %d: non-zero bias %v", l.off, v)
			}
		}
	}
}

func TestBadInput(t *testing.T) {
	s := Spec{Arch: "tfp-cnn", InputShape: []int{1, 28, 28}, Classes: 10}
	m, _ := New(s, 1)
	P := m.NumParams()
	good := randomBatch(s, 2, rand.New(rand.NewPCG(1, 1)))
	for _, tc := range []struct {
		name string
		b    Batch
	}{
		{"short X", Batch{X: good.X[:100], Labels: good.Labels, M: 2}},
		{"missing labels", Batch{X: good.X, M: 2}},
		{"label out of range", Batch{X: good.X, Labels: []int{0, 10}, M: 2}},
		{"negative label", Batch{X: good.X, Labels: []int{-1, 0}, M: 2}},
		{"negative M", Batch{M: -1}},
	} {
		if _, err := m.BatchGrad(tc.b, make([]float32, P)); err == nil {
			t.Errorf("BatchGrad(%s): no error", tc.name)
		}
		if err := m.PerExampleGrads(tc.b, make([]float32, max(tc.b.M, 0)*P), make([]float32, max(tc.b.M, 0))); err == nil {
			t.Errorf("PerExampleGrads(%s): no error", tc.name)
		}
	}
	if _, err := m.BatchGrad(good, make([]float32, P-1)); err == nil {
		t.Error("BatchGrad with a short gradient: no error")
	}
	if err := m.PerExampleGrads(good, make([]float32, P), make([]float32, 2)); err == nil {
		t.Error("PerExampleGrads with a short gradient matrix: no error")
	}
	if err := m.PerExampleGrads(good, make([]float32, 2*P), make([]float32, 1)); err == nil {
		t.Error("PerExampleGrads with short losses: no error")
	}
	if err := m.Predict(good.X, 2, make([]float32, 19)); err == nil {
		t.Error("Predict with a short output: no error")
	}
	if err := m.SetParams(make([]float32, P+1)); err == nil {
		t.Error("SetParams with the wrong length: no error")
	}
	if err := m.Step(make([]float32, 3)); err == nil {
		t.Error("Step with the wrong length: no error")
	}
	r, _ := New(Spec{Arch: "linreg", InputShape: []int{3}, Classes: 1}, 1)
	if _, err := r.BatchGrad(Batch{X: make([]float32, 3), Labels: []int{0}, M: 1}, make([]float32, 3)); err == nil {
		t.Error("linreg BatchGrad without targets: no error")
	}
}

func TestStepAndSetParams(t *testing.T) {
	s := Spec{Arch: "linreg", InputShape: []int{3}, Classes: 1}
	m, _ := New(s, 1)
	if err := m.SetParams([]float32{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	if err := m.Step([]float32{0.5, -1, 3}); err != nil {
		t.Fatal(err)
	}
	if got, want := m.Params(), []float32{0.5, 3, 0}; !slices.Equal(got, want) {
		t.Errorf("after Step: %v, want %v", got, want)
	}
	p := m.Params()
	p[0] = 99 // Params returns a copy
	out := make([]float32, 2)
	if err := m.Predict([]float32{1, 1, 1, 2, 0, 1}, 2, out); err != nil {
		t.Fatal(err)
	}
	if want := []float32{3.5, 1}; !slices.Equal(out, want) {
		t.Errorf("Predict = %v, want %v", out, want)
	}
}

func TestInitialisationOthers(t *testing.T) {
	// PyTorch defaults for the PDP-SGD CNNs: kernels and biases U(±1/√fan_in).
	m, _ := New(Spec{Arch: "pdp-cnn-svhn", InputShape: []int{3, 32, 32}, Classes: 10}, 7)
	p := m.Params()
	off := 0
	for _, l := range []struct{ nW, nB, fanIn int }{
		{450, 6, 75}, {2400, 16, 150}, {48000, 120, 400}, {10080, 84, 120}, {840, 10, 84},
	} {
		lim := float32(1 / math.Sqrt(float64(l.fanIn)))
		for _, part := range [][]float32{p[off : off+l.nW], p[off+l.nW : off+l.nW+l.nB]} {
			var maxAbs float32
			for _, v := range part {
				maxAbs = max(maxAbs, float32(math.Abs(float64(v))))
			}
			if maxAbs > lim || maxAbs < 0.5*lim {
				t.Errorf("layer at %d: max |θ| = %v, want below the PyTorch bound %v", off, maxAbs, lim)
			}
		}
		off += l.nW + l.nB
	}
	if off != len(p) {
		t.Fatalf("layers cover %d of %d parameters", off, len(p))
	}
	// Convex models start at zero.
	for _, s := range []Spec{{Arch: "logreg", InputShape: []int{5}, Classes: 3}, {Arch: "linreg", InputShape: []int{5}, Classes: 1}} {
		m, _ := New(s, 7)
		for _, v := range m.Params() {
			if v != 0 {
				t.Fatalf("%s: non-zero initial parameter %v", s.Arch, v)
			}
		}
	}
}
