package datasets

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestLoadLIBSVM(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      string
		dim     int
		x       []float32
		targets []float32
		labels  []int
		classes int
	}{
		{"binary ±1, inferred dim", "+1 1:0.5 3:-2\n-1 2:1e-3\n", 0,
			[]float32{0.5, 0, -2, 0, 1e-3, 0}, []float32{1, -1}, []int{1, 0}, 2},
		{"fixed dim, unsorted, comments, blank lines", "# header\n\n-1 4:1 2:2 # note\n1\n", 5,
			[]float32{0, 2, 0, 1, 0, 0, 0, 0, 0, 0}, []float32{-1, 1}, []int{0, 1}, 2},
		{"multiclass", "0 1:1\n2 1:2\n1 1:3\n", 0,
			[]float32{1, 2, 3}, []float32{0, 2, 1}, []int{0, 2, 1}, 3},
		{"regression", "0.5 1:1\n-3.25 2:1\n", 0,
			[]float32{1, 0, 0, 1}, []float32{0.5, -3.25}, nil, 0},
		{"CRLF and tabs", "1\t1:2\r\n-1 1:3\r\n", 0,
			[]float32{2, 3}, []float32{1, -1}, []int{1, 0}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := LoadLIBSVM(strings.NewReader(tc.in), tc.dim)
			if err != nil {
				t.Fatal(err)
			}
			if err := d.Validate(); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(d.X, tc.x) || !slices.Equal(d.Targets, tc.targets) || !slices.Equal(d.Labels, tc.labels) || d.Classes != tc.classes {
				t.Errorf("got X %v targets %v labels %v classes %d", d.X, d.Targets, d.Labels, d.Classes)
			}
		})
	}
}

func TestLoadLIBSVMErrors(t *testing.T) {
	for _, tc := range []struct {
		in   string
		dim  int
		want string
	}{
		{"", 0, "no examples"},
		{"1\n-1\n", 0, "no features"},
		{"1 0:1\n", 0, "line 1: invalid feature index"},
		{"1 1:1\n1 3:1\n", 2, "line 2: feature index 3 exceeds dimension 2"},
		{"1 1:1 1:2\n", 0, "line 1: feature index 1 repeated"},
		{"1 1:x\n", 0, "line 1: invalid value"},
		{"x 1:1\n", 0, "line 1: invalid label"},
		{"1 1:1\n1 2\n", 0, `line 2: "2" is not index:value`},
		{"1 qid:3 1:1\n", 0, "invalid feature index"},
		{"1 1:nan\n", 0, "invalid value"},
		{"1 1:1\n", -1, "dimension -1"},
	} {
		_, err := LoadLIBSVM(strings.NewReader(tc.in), tc.dim)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("LoadLIBSVM(%q, %d): %v, want error mentioning %q", tc.in, tc.dim, err, tc.want)
		}
	}
}

func TestIJCNN1Errors(t *testing.T) {
	dataDir := t.TempDir()
	// Missing files name the path, the expected MD5 and the LIBSVM page.
	_, err := Load("ijcnn1", "all", dataDir)
	for _, w := range []string{filepath.Join(dataDir, "ijcnn1", "ijcnn1."), "file not found", "csie.ntu.edu.tw"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("missing: error %v does not mention %q", err, w)
		}
	}
	// A valid LIBSVM file that is not the official one fails its checksum.
	writeFile(t, filepath.Join(dataDir, "ijcnn1", "ijcnn1.bz2"), []byte("-1 1:1\n"))
	_, err = Load("ijcnn1", "train", dataDir)
	if err == nil || !strings.Contains(err.Error(), "checksum mismatch") || !strings.Contains(err.Error(), "ccb639c7cca405cd3c88b97a8555c8a9") {
		t.Errorf("wrong file: %v", err)
	}
	if _, err := Load("ijcnn1", "val", dataDir); err == nil || !strings.Contains(err.Error(), `"val"`) {
		t.Errorf("bad split: %v", err)
	}
}

// TestLIBSVMFileCompression reads the same content plain, gzip and bzip2
// (bzip2 from the real ijcnn1 file: the standard library only decodes it).
func TestLIBSVMFileCompression(t *testing.T) {
	content := []byte("1 2:0.5\n-1 1:1\n")
	dir := t.TempDir()
	for name, b := range map[string][]byte{"plain": content, "gz": gz(content)} {
		p := filepath.Join(dir, name)
		writeFile(t, p, b)
		d, err := loadLIBSVMFile(p, fileSpec{name: name, contentSums: []checksum{md5sum(md5Hex(content))}}, 3)
		if err != nil {
			t.Fatal(err)
		}
		if d.N != 2 || d.X[1] != 0.5 || d.Dim() != 3 {
			t.Errorf("%s: N %d X %v", name, d.N, d.X)
		}
	}
	src := filepath.Join(testDataDir(t, "ijcnn1"), "ijcnn1", "ijcnn1.bz2")
	d, err := loadLIBSVMFile(src, fileSpec{name: "ijcnn1.bz2", contentSums: []checksum{md5sum("22a1163cb407a2f1561f9678765acebf")}}, 22)
	if err != nil {
		t.Fatal(err)
	}
	if d.N != 49990 {
		t.Errorf("N = %d", d.N)
	}
}
