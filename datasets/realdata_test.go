package datasets

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testDataDir returns $PRIVTRAIN_DATA, else the project's shared dataset
// folder (../../shared/datasets from this package), skipping the test if
// neither holds sub.
func testDataDir(t *testing.T, sub string) string {
	t.Helper()
	for _, dir := range []string{os.Getenv(DataDirEnv), filepath.Join("..", "..", "shared", "datasets")} {
		if dir == "" {
			continue
		}
		if st, err := os.Stat(filepath.Join(dir, sub)); err == nil && st.IsDir() {
			return dir
		}
	}
	t.Skipf("%s not found: set %s to a data directory holding %s/ (see docs/datasets.md)", sub, DataDirEnv, sub)
	return ""
}

func TestLoadFashionMNIST(t *testing.T) {
	dir := testDataDir(t, "fashion-mnist")
	for _, tc := range []struct {
		split       string
		n           int
		firstLabels []int
		// first non-zero pixels of image 0 (independently read from the IDX bytes)
		pixIdx []int
		pixVal []byte
		pixSum int // sum of the 784 bytes of image 0
	}{
		{"train", 60000, []int{9, 0, 0, 3, 0}, []int{96, 99, 100}, []byte{1, 13, 73}, 76247},
		{"test", 10000, []int{9, 2, 1, 1, 6}, []int{215, 216, 219}, []byte{3, 1, 7}, 33456},
	} {
		t.Run(tc.split, func(t *testing.T) {
			if tc.split == "train" && testing.Short() {
				t.Skip("train split skipped in -short mode")
			}
			d, err := Load("fashion-mnist", tc.split, dir)
			if err != nil {
				t.Fatal(err)
			}
			if d.N != tc.n || d.Classes != 10 || d.Dim() != 784 {
				t.Fatalf("N %d classes %d dim %d", d.N, d.Classes, d.Dim())
			}
			hist := make([]int, 10)
			for _, y := range d.Labels {
				hist[y]++
			}
			for c, h := range hist {
				if h != tc.n/10 {
					t.Errorf("class %d has %d examples, want %d", c, h, tc.n/10)
				}
			}
			for i, y := range tc.firstLabels {
				if d.Labels[i] != y {
					t.Errorf("label %d = %d, want %d", i, d.Labels[i], y)
				}
			}
			var sum float64
			first := -1
			for i, v := range d.X[:784] {
				sum += float64(v) * 255
				if v != 0 && first < 0 {
					first = i
				}
			}
			if first != tc.pixIdx[0] || int(sum+0.5) != tc.pixSum {
				t.Errorf("image 0: first non-zero pixel %d, byte sum %.1f; want %d, %d", first, sum, tc.pixIdx[0], tc.pixSum)
			}
			for k, i := range tc.pixIdx {
				if d.X[i] != float32(tc.pixVal[k])/255 {
					t.Errorf("pixel %d = %v, want %d/255", i, d.X[i], tc.pixVal[k])
				}
			}
		})
	}
}

// debianGzip rewrites a gzip file's header the way Debian's
// dataset-fashion-mnist package does (no file name, zero mtime), keeping the
// deflate stream: the file md5 changes, the decompressed content does not.
func debianGzip(t *testing.T, b []byte) []byte {
	t.Helper()
	const fname = 1 << 3
	if b[3] != fname {
		t.Fatalf("unexpected gzip flags %#x", b[3])
	}
	end := bytes.IndexByte(b[10:], 0) + 10 // end of the file name
	out := append([]byte{}, b[:10]...)
	out[3] = 0
	copy(out[4:8], []byte{0, 0, 0, 0})
	return append(out, b[end+1:]...)
}

func TestFashionMNISTDebianAndCorruptFiles(t *testing.T) {
	src := filepath.Join(testDataDir(t, "fashion-mnist"), "fashion-mnist")
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	imgs, labs := read("t10k-images-idx3-ubyte.gz"), read("t10k-labels-idx1-ubyte.gz")
	write := func(img, lab []byte) string {
		dir := t.TempDir()
		os.Mkdir(filepath.Join(dir, "fashion-mnist"), 0o755)
		for name, b := range map[string][]byte{"t10k-images-idx3-ubyte.gz": img, "t10k-labels-idx1-ubyte.gz": lab} {
			if err := os.WriteFile(filepath.Join(dir, "fashion-mnist", name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}

	// Debian's files: different gz bytes, same content: accepted.
	debImgs, debLabs := debianGzip(t, imgs), debianGzip(t, labs)
	if bytes.Equal(debLabs, labs) {
		t.Fatal("Debian-style rewrite left the file unchanged")
	}
	d, err := Load("fashion-mnist", "test", write(debImgs, debLabs))
	if err != nil {
		t.Fatalf("Debian-style files rejected: %v", err)
	}
	if d.N != 10000 || d.Labels[0] != 9 {
		t.Errorf("Debian-style files: N %d, first label %d", d.N, d.Labels[0])
	}

	// Unpacked IDX files under the official names without ".gz": accepted
	// by their decompressed-content MD5.
	unpacked := t.TempDir()
	for name, b := range map[string][]byte{"t10k-images-idx3-ubyte": imgs, "t10k-labels-idx1-ubyte": labs} {
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(zr)
		writeFile(t, filepath.Join(unpacked, "fashion-mnist", name), raw)
	}
	if d, err := Load("fashion-mnist", "test", unpacked); err != nil || d.N != 10000 {
		t.Fatalf("unpacked files: %v", err)
	}

	// A valid gzip of altered content: rejected by checksum.
	zr, _ := gzip.NewReader(bytes.NewReader(labs))
	raw, _ := io.ReadAll(zr)
	raw[100] = (raw[100] + 1) % 10
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(raw)
	zw.Close()

	for _, tc := range []struct {
		name     string
		img, lab []byte
		bad      string // file the error must name
		want     []string
	}{
		{"altered label", imgs, buf.Bytes(), "t10k-labels-idx1-ubyte.gz", []string{"checksum mismatch", "bb300cfdad3c16e7a12a480ee83cd310", "15d484375f8d13e6eb1aabb0c3f46965"}},
		{"truncated images", imgs[:len(imgs)/2], labs, "t10k-images-idx3-ubyte.gz", []string{"truncated", "bef4ecab320f06d8554ea6380940ec79"}},
		{"altered raw IDX labels", imgs, raw, "t10k-labels-idx1-ubyte.gz", []string{"checksum mismatch"}},
		{"empty labels", imgs, nil, "t10k-labels-idx1-ubyte.gz", []string{"truncated"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := write(tc.img, tc.lab)
			_, err := Load("fashion-mnist", "test", dir)
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Fatalf("got %v, want a *FileError", err)
			}
			msg := err.Error()
			for _, w := range append(tc.want, filepath.Join(dir, "fashion-mnist", tc.bad), "zalandoresearch") {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not mention %q", msg, w)
				}
			}
		})
	}
}

func TestLoadIJCNN1(t *testing.T) {
	dir := testDataDir(t, "ijcnn1")
	for _, tc := range []struct {
		split   string
		n, pos  int
		row0    map[int]float32 // non-zero features of row 0 (0-based)
		lastRow map[int]float32
		short   bool
	}{
		{"train", 49990, 4853,
			map[int]float32{5: 1, 10: -0.731854, 11: 0.173431, 13: 0.00027, 21: -0.00081}, nil, true},
		{"test", 91701, 8712,
			map[int]float32{6: 1, 10: -0.659091, 21: 0.006842},
			map[int]float32{0: 1, 10: -0.735794, 21: 0.023989}, false},
		{"all", 141691, 4853 + 8712,
			map[int]float32{5: 1, 10: -0.731854, 21: -0.00081},
			map[int]float32{0: 1, 10: -0.735794, 21: 0.023989}, false},
	} {
		t.Run(tc.split, func(t *testing.T) {
			if testing.Short() && !tc.short {
				t.Skip("skipped in -short mode")
			}
			d, err := Load("ijcnn1", tc.split, dir)
			if err != nil {
				t.Fatal(err)
			}
			if d.N != tc.n || d.Dim() != 22 || d.Classes != 2 || len(d.Targets) != d.N {
				t.Fatalf("N %d dim %d classes %d targets %d", d.N, d.Dim(), d.Classes, len(d.Targets))
			}
			pos := 0
			for i, y := range d.Labels {
				if (y == 1) != (d.Targets[i] == 1) || (y == 0) != (d.Targets[i] == -1) {
					t.Fatalf("example %d: label %d target %v", i, y, d.Targets[i])
				}
				pos += y
			}
			if pos != tc.pos {
				t.Errorf("%d positive examples, want %d", pos, tc.pos)
			}
			checkRow := func(r int, want map[int]float32) {
				for j, v := range want {
					if got := d.X[r*22+j]; got != v {
						t.Errorf("row %d feature %d = %v, want %v", r, j, got, v)
					}
				}
				if want != nil && (d.X[r*22+1] != 0 || d.X[r*22+8] != 0) {
					t.Errorf("row %d: absent features are non-zero", r)
				}
			}
			checkRow(0, tc.row0)
			checkRow(d.N-1, tc.lastRow)
			if d.Targets[0] != -1 {
				t.Errorf("target 0 = %v, want -1", d.Targets[0])
			}
		})
	}
}
