package datasets

import (
	"slices"
	"strings"
	"testing"
)

// unregister removes a dataset registered by a test.
func unregister(name string) {
	loaders.Unregister(name)
}

// TestRegisterDataset: a dataset registered from outside loads by name,
// its splits are the loader's, and Load still validates what it returns.
func TestRegisterDataset(t *testing.T) {
	const name = "test-tiny"
	Register(name, func(split, dataDir string) (*Dataset, error) {
		switch split {
		case "train":
			return &Dataset{Name: name + "/train", X: []float32{0, 1, 1, 0}, Shape: []int{2}, Labels: []int{0, 1}, Classes: 2, N: 2}, nil
		case "broken":
			return &Dataset{Name: name + "/broken", X: []float32{0, 1, 1}, Shape: []int{2}, Labels: []int{0, 1}, Classes: 2, N: 2}, nil
		case "nil":
			return nil, nil
		}
		return nil, splitError(name, split, "train")
	})
	defer unregister(name)

	if !slices.Contains(Names(), name) || !slices.IsSorted(Names()) {
		t.Fatalf("Names() = %v", Names())
	}
	d, err := Load(name, "train", "")
	if err != nil || d.N != 2 || !slices.Equal(d.X, []float32{0, 1, 1, 0}) {
		t.Fatalf("Load(train) = %+v, %v", d, err)
	}
	for split, want := range map[string]string{
		"broken": "len(X) = 3",
		"nil":    "no dataset",
		"test":   `no split "test" (valid: train)`,
	} {
		if _, err := Load(name, split, ""); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Load(%s): err = %v, want mention of %q", split, err, want)
		}
	}
	_, err = Load("nope", "train", "")
	if want := "registered: " + strings.Join(Names(), ", "); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("unknown dataset: err = %v, want %q", err, want)
	}
}

func TestRegisterDatasetPanics(t *testing.T) {
	load := func(string, string) (*Dataset, error) { return nil, nil }
	for _, tc := range []struct {
		name string
		load Loader
		want string
	}{
		{"", load, "empty"},
		{"test-nil", nil, "nil loader"},
		{"mnist", load, "twice"},
	} {
		func() {
			defer func() {
				if s, _ := recover().(string); !strings.Contains(s, tc.want) {
					t.Errorf("Register(%q): panic %q, want one mentioning %q", tc.name, s, tc.want)
				}
			}()
			Register(tc.name, tc.load)
		}()
	}
	for _, n := range []string{"cifar10", "emnist-balanced", "emnist-letters", "fashion-mnist", "ijcnn1", "mnist", "svhn"} {
		if !slices.Contains(Names(), n) {
			t.Errorf("Names() = %v lacks the built-in %q", Names(), n)
		}
	}
}
