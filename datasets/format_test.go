package datasets

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/md5"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// idxBytes encodes an IDX unsigned-byte file with the given dimensions.
func idxBytes(magic uint32, dims []int, data []byte) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.BigEndian, magic)
	for _, d := range dims {
		binary.Write(&b, binary.BigEndian, uint32(d))
	}
	b.Write(data)
	return b.Bytes()
}

func gz(b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func sha256Hex(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }
func md5Hex(b []byte) string    { s := md5.Sum(b); return hex.EncodeToString(s[:]) }

// emnistImage is an asymmetric 28×28 test pattern in MNIST orientation.
func emnistImage(k int) []byte {
	img := make([]byte, 784)
	for r := 0; r < 28; r++ {
		for c := 0; c < 28; c++ {
			img[r*28+c] = byte((r*9 + c*2 + k*31) % 256)
		}
	}
	return img
}

func TestEMNISTFormat(t *testing.T) {
	for _, tc := range []struct {
		variant string
		stored  []byte // labels as stored in the file
		want    []int  // labels after loading
		classes int
		bad     byte // a stored label that must be rejected
	}{
		{"letters", []byte{1, 26, 13}, []int{0, 25, 12}, 26, 0},
		{"balanced", []byte{0, 46, 10}, []int{0, 46, 10}, 47, 47},
	} {
		t.Run(tc.variant, func(t *testing.T) {
			n := len(tc.stored)
			var pix []byte
			for k := 0; k < n; k++ { // EMNIST stores each image transposed
				img := emnistImage(k)
				for c := 0; c < 28; c++ {
					for r := 0; r < 28; r++ {
						pix = append(pix, img[r*28+c])
					}
				}
			}
			imgFile := gz(idxBytes(idxImagesMagic, []int{n, 28, 28}, pix))
			lblFile := gz(idxBytes(idxLabelsMagic, []int{n}, tc.stored))
			dataDir := t.TempDir()
			dir := filepath.Join(dataDir, "emnist")
			files := emnistFiles(tc.variant, "test")
			writeFile(t, filepath.Join(dir, files[0].name), imgFile)
			writeFile(t, filepath.Join(dir, files[1].name), lblFile)
			if !strings.HasPrefix(files[0].name, "emnist-"+tc.variant+"-test-images-idx3-ubyte") {
				t.Fatalf("unexpected official name %q", files[0].name)
			}

			// Load checks the official checksums: these small files must fail,
			// naming the official SHA-256 and the download page.
			_, err := Load("emnist-"+tc.variant, "test", dataDir)
			if err == nil || !strings.Contains(err.Error(), "checksum mismatch") ||
				!strings.Contains(err.Error(), emnistSHA256[files[0].name]) || !strings.Contains(err.Error(), "nist.gov") {
				t.Fatalf("official checksums: got %v", err)
			}

			// With a checksum table for these files, the format is decoded.
			files[0].sums = []checksum{sha256sum(sha256Hex(imgFile))}
			files[1].sums = []checksum{sha256sum(sha256Hex(lblFile))}
			d, err := loadEMNISTFiles(tc.variant, "test", dir, files)
			if err != nil {
				t.Fatal(err)
			}
			if err := d.Validate(); err != nil {
				t.Fatal(err)
			}
			if d.N != n || d.Classes != tc.classes {
				t.Fatalf("N %d classes %d", d.N, d.Classes)
			}
			for k := 0; k < n; k++ {
				if d.Labels[k] != tc.want[k] {
					t.Errorf("label %d = %d, want %d", k, d.Labels[k], tc.want[k])
				}
				img := emnistImage(k)
				for i := range img {
					if d.X[k*784+i] != float32(img[i])/255 {
						t.Fatalf("image %d pixel (%d, %d) = %v, want %d/255 (not transposed back?)", k, i/28, i%28, d.X[k*784+i], img[i])
					}
				}
			}

			// A label outside the variant's range is an error naming the file.
			badLbl := gz(idxBytes(idxLabelsMagic, []int{n}, append([]byte{tc.bad}, tc.stored[1:]...)))
			writeFile(t, filepath.Join(dir, files[1].name), badLbl)
			files[1].sums = []checksum{sha256sum(sha256Hex(badLbl))}
			_, err = loadEMNISTFiles(tc.variant, "test", dir, files)
			if err == nil || !strings.Contains(err.Error(), files[1].name) || !strings.Contains(err.Error(), "outside") {
				t.Errorf("bad label: got %v", err)
			}
		})
	}
}

func TestIDXErrors(t *testing.T) {
	img := idxBytes(idxImagesMagic, []int{2, 28, 28}, make([]byte, 2*784))
	lbl := idxBytes(idxLabelsMagic, []int{2}, []byte{1, 2})
	for _, tc := range []struct {
		name     string
		img, lbl []byte
		want     string
	}{
		{"raw (uncompressed) files", img, lbl, ""},
		{"gzip files", gz(img), gz(lbl), ""},
		{"swapped files", lbl, img, "magic number"},
		{"count mismatch", img, idxBytes(idxLabelsMagic, []int{3}, []byte{1, 2, 3}), "2 images but"},
		{"wrong image size", idxBytes(idxImagesMagic, []int{1, 32, 32}, make([]byte, 1024)), lbl, "want 28×28"},
		{"trailing data", append(append([]byte{}, img...), 0), lbl, "trailing data"},
		{"truncated header", img[:10], lbl, "truncated"},
		{"truncated pixels", gz(img[:500]), lbl, "truncated"},
		{"huge header", idxBytes(idxImagesMagic, []int{1 << 30, 28, 28}, nil), lbl, "too large"},
		{"corrupt gzip", gz(img)[:30], lbl, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			ip, lp := filepath.Join(dir, "img"), filepath.Join(dir, "lbl")
			writeFile(t, ip, tc.img)
			writeFile(t, lp, tc.lbl)
			is := fileSpec{name: "img", sums: []checksum{md5sum(md5Hex(tc.img))}, url: "http://example.org/img"}
			ls := fileSpec{name: "lbl", sums: []checksum{md5sum(md5Hex(tc.lbl))}, url: "http://example.org/lbl"}
			d, err := loadIDXPair(ip, is, lp, ls, idxOptions{name: "t", classes: 10, rows: 28, cols: 28})
			if tc.want == "" && tc.name != "corrupt gzip" {
				if err != nil {
					t.Fatal(err)
				}
				if d.N != 2 || d.Labels[1] != 2 {
					t.Errorf("N %d labels %v", d.N, d.Labels)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error mentioning %q", err, tc.want)
			}
		})
	}
}

// cifarBatch encodes records in the CIFAR-10 binary layout.
func cifarBatch(labels []byte, seed int) []byte {
	var b []byte
	for k, l := range labels {
		b = append(b, l)
		for i := 0; i < 3072; i++ {
			b = append(b, byte((i*7+k*13+seed)%251))
		}
	}
	return b
}

func TestCIFAR10Format(t *testing.T) {
	trainLabels := [][]byte{{0, 1}, {2, 3}, {4, 5}, {6, 7}, {8, 9}}
	testLabels := []byte{3, 1, 4}
	files := map[string][]byte{"test_batch.bin": cifarBatch(testLabels, 100)}
	for i, l := range trainLabels {
		files[fmt.Sprintf("data_batch_%d.bin", i+1)] = cifarBatch(l, i)
	}
	specs := cifarSpecs{batches: map[string]fileSpec{}}
	for name, b := range files {
		specs.batches[name] = fileSpec{name: name, sums: []checksum{md5sum(md5Hex(b))}, url: cifarURL}
	}

	check := func(t *testing.T, d *Dataset, split string) {
		t.Helper()
		if err := d.Validate(); err != nil {
			t.Fatal(err)
		}
		var want []byte
		var seeds []int
		if split == "test" {
			want = testLabels
			seeds = []int{100, 100, 100}
		} else {
			for i, l := range trainLabels {
				want = append(want, l...)
				seeds = append(seeds, i, i)
			}
		}
		if d.N != len(want) || d.Dim() != 3072 || d.Shape[0] != 3 || d.Classes != 10 {
			t.Fatalf("N %d shape %v classes %d", d.N, d.Shape, d.Classes)
		}
		for k := range want {
			if d.Labels[k] != int(want[k]) {
				t.Errorf("label %d = %d, want %d", k, d.Labels[k], want[k])
			}
			kk := k
			if split == "train" {
				kk = k % 2
			}
			// Channel-major: value i of the record is channel i/1024, pixel i%1024.
			for _, i := range []int{0, 1023, 1024, 2048 + 32*5 + 7, 3071} {
				if got, w := d.X[k*3072+i], float32((i*7+kk*13+seeds[k])%251)/255; got != w {
					t.Fatalf("example %d value %d = %v, want %v", k, i, got, w)
				}
			}
		}
	}

	t.Run("batches", func(t *testing.T) {
		dataDir := t.TempDir()
		for name, b := range files {
			writeFile(t, filepath.Join(dataDir, cifarDir, name), b)
		}
		for _, split := range []string{"train", "test"} {
			d, err := loadCIFAR10From(split, dataDir, specs)
			if err != nil {
				t.Fatal(err)
			}
			check(t, d, split)
		}
		// Official checksums reject these files, naming file, md5 and URL.
		_, err := Load("cifar10", "test", dataDir)
		for _, w := range []string{filepath.Join(dataDir, cifarDir, "test_batch.bin"), "803d5f7f4d78ea53de84dbe85f74fb6d", "cs.toronto.edu"} {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("official checksum: error %v does not mention %q", err, w)
			}
		}
		// A truncated record and a bad label.
		for name, b := range map[string][]byte{"truncated": files["test_batch.bin"][:3073+100], "bad label": cifarBatch([]byte{10}, 0)} {
			writeFile(t, filepath.Join(dataDir, cifarDir, "test_batch.bin"), b)
			s := specs
			s.batches = map[string]fileSpec{"test_batch.bin": {name: "test_batch.bin", sums: []checksum{md5sum(md5Hex(b))}}}
			if _, err := loadCIFAR10From("test", dataDir, s); err == nil {
				t.Errorf("%s: accepted", name)
			}
		}
		os.Remove(filepath.Join(dataDir, cifarDir, "data_batch_3.bin"))
		if _, err := loadCIFAR10From("train", dataDir, specs); err == nil || !strings.Contains(err.Error(), "data_batch_3.bin: file not found") {
			t.Errorf("missing batch: %v", err)
		}
	})

	t.Run("tarball", func(t *testing.T) {
		// Members out of split order, plus the archive's other files.
		order := []string{"batches.meta.txt", "data_batch_2.bin", "data_batch_1.bin", "test_batch.bin", "data_batch_4.bin", "data_batch_5.bin", "data_batch_3.bin"}
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		tw := tar.NewWriter(zw)
		tw.WriteHeader(&tar.Header{Name: cifarDir + "/", Typeflag: tar.TypeDir, Mode: 0o755})
		for _, name := range order {
			b, ok := files[name]
			if !ok {
				b = []byte("airplane\n")
			}
			tw.WriteHeader(&tar.Header{Name: cifarDir + "/" + name, Size: int64(len(b)), Mode: 0o644, Typeflag: tar.TypeReg})
			tw.Write(b)
		}
		tw.Close()
		zw.Close()
		tarball := buf.Bytes()
		dataDir := t.TempDir()
		writeFile(t, filepath.Join(dataDir, cifarTarball), tarball)
		s := specs
		s.tarball = fileSpec{name: cifarTarball, sums: []checksum{md5sum(md5Hex(tarball))}, url: cifarURL}
		for _, split := range []string{"train", "test"} {
			d, err := loadCIFAR10From(split, dataDir, s)
			if err != nil {
				t.Fatal(err)
			}
			check(t, d, split)
		}
		_, err := Load("cifar10", "train", dataDir)
		if err == nil || !strings.Contains(err.Error(), cifarTarballMD5) {
			t.Errorf("official tarball checksum: %v", err)
		}
		// A member with the wrong checksum is named.
		s.batches = map[string]fileSpec{}
		for k, v := range specs.batches {
			s.batches[k] = v
		}
		s.batches["data_batch_4.bin"] = fileSpec{name: "data_batch_4.bin", sums: []checksum{md5sum("00000000000000000000000000000000")}}
		_, err = loadCIFAR10From("train", dataDir, s)
		if err == nil || !strings.Contains(err.Error(), "cifar-10-binary.tar.gz:cifar-10-batches-bin/data_batch_4.bin") {
			t.Errorf("bad member: %v", err)
		}
	})
}

func TestReadVerifiedRefusesNoChecksum(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	writeFile(t, p, []byte("x"))
	err := readVerified(p, fileSpec{name: "f"}, func(io.Reader) error { return nil })
	var fe *FileError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "no checksum") {
		t.Errorf("got %v", err)
	}
}
