package datasets

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadWithChecksums loads small CIFAR-10 and EMNIST files in the
// official layout against a sha256sum manifest, and refuses altered and
// unlisted files.
func TestLoadWithChecksums(t *testing.T) {
	dir := t.TempDir()
	cdir := filepath.Join(dir, cifarDir)
	edir := filepath.Join(dir, "emnist")
	var manifest strings.Builder
	put := func(p string, b []byte) {
		writeFile(t, p, b)
		fmt.Fprintf(&manifest, "%s  %s\n", sha256Hex(b), filepath.Base(p))
	}
	for i := 1; i <= 5; i++ {
		put(filepath.Join(cdir, fmt.Sprintf("data_batch_%d.bin", i)), cifarBatch([]byte{byte(i), byte(9 - i)}, i))
	}
	put(filepath.Join(cdir, "test_batch.bin"), cifarBatch([]byte{3, 1, 4}, 100))
	for _, split := range []string{"train", "test"} {
		var pix []byte
		for k := 0; k < 3; k++ {
			pix = append(pix, emnistImage(k)...)
		}
		put(filepath.Join(edir, "emnist-letters-"+split+"-images-idx3-ubyte.gz"), gz(idxBytes(0x803, []int{3, 28, 28}, pix)))
		put(filepath.Join(edir, "emnist-letters-"+split+"-labels-idx1-ubyte.gz"), gz(idxBytes(0x801, []int{3}, []byte{1, 26, 13})))
	}
	mpath := filepath.Join(dir, "SHA256SUMS")
	writeFile(t, mpath, []byte("# made by the test\n"+manifest.String()))
	sums, err := ReadChecksumFile(mpath)
	if err != nil {
		t.Fatal(err)
	}
	if len(sums) != 10 {
		t.Fatalf("manifest has %d files, want 10", len(sums))
	}
	d, err := LoadWithChecksums("cifar10", "train", dir, sums)
	if err != nil {
		t.Fatal(err)
	}
	if d.N != 10 || d.Classes != 10 || d.Labels[0] != 1 || d.Labels[9] != 4 || d.Dim() != 3072 {
		t.Errorf("cifar10 train: N %d classes %d labels %v", d.N, d.Classes, d.Labels)
	}
	e, err := LoadWithChecksums("emnist-letters", "test", dir, sums)
	if err != nil {
		t.Fatal(err)
	}
	if e.N != 3 || e.Classes != 26 || e.Labels[1] != 25 {
		t.Errorf("emnist test: N %d classes %d labels %v", e.N, e.Classes, e.Labels)
	}
	// The official checksums refuse these files.
	var fe *FileError
	if _, err := Load("cifar10", "train", dir); !errors.As(err, &fe) {
		t.Errorf("Load with official checksums: %v", err)
	}
	// An altered file and an unlisted file are refused.
	writeFile(t, filepath.Join(cdir, "test_batch.bin"), cifarBatch([]byte{3, 1, 5}, 100))
	if _, err := LoadWithChecksums("cifar10", "test", dir, sums); !errors.Is(err, errChecksum) {
		t.Errorf("altered file: %v", err)
	}
	delete(sums, "data_batch_3.bin")
	if _, err := LoadWithChecksums("cifar10", "train", dir, sums); err == nil || !strings.Contains(err.Error(), "no checksum") {
		t.Errorf("unlisted file: %v", err)
	}
	if _, err := LoadWithChecksums("mnist", "train", dir, sums); err == nil {
		t.Error("mnist with a manifest accepted")
	}
	for _, bad := range []string{"", "abc  x.bin\n", strings.Repeat("0", 64) + "\n"} {
		p := filepath.Join(dir, "bad")
		os.WriteFile(p, []byte(bad), 0o644)
		if _, err := ReadChecksumFile(p); err == nil {
			t.Errorf("manifest %q accepted", bad)
		}
	}
}
