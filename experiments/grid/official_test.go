package grid

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/privtrain/privtrain/runner"
)

// officialLayout writes small CIFAR-10 (binary batches) and EMNIST letters
// (gzipped IDX) files in the official layout under dir, with a sha256sum
// manifest, and returns the manifest's path. CIFAR-10 has 1,050 training
// images (the preset's batch is 1,024, so the Poisson rate stays ≤ 1),
// EMNIST 20,000 (q = 256/20000, so that two steps fit in ε = 2.5).
func officialLayout(t *testing.T, dir string) string {
	t.Helper()
	var manifest strings.Builder
	put := func(p string, b []byte) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		s := sha256.Sum256(b)
		fmt.Fprintf(&manifest, "%s  %s\n", hex.EncodeToString(s[:]), filepath.Base(p))
	}
	cifar := func(n, seed int) []byte {
		var b []byte
		for k := 0; k < n; k++ {
			label := (k + seed) % 10
			b = append(b, byte(label))
			for i := 0; i < 3072; i++ {
				// class-dependent mean so a few steps can learn something
				b = append(b, byte((label*20+i*7+k*13)%251))
			}
		}
		return b
	}
	for i := 1; i <= 5; i++ {
		put(filepath.Join(dir, "cifar-10-batches-bin", fmt.Sprintf("data_batch_%d.bin", i)), cifar(210, i))
	}
	put(filepath.Join(dir, "cifar-10-batches-bin", "test_batch.bin"), cifar(50, 0))
	idx := func(magic uint32, dims []int, data []byte) []byte {
		var b bytes.Buffer
		binary.Write(&b, binary.BigEndian, magic)
		for _, d := range dims {
			binary.Write(&b, binary.BigEndian, uint32(d))
		}
		b.Write(data)
		var z bytes.Buffer
		w := gzip.NewWriter(&z)
		w.Write(b.Bytes())
		w.Close()
		return z.Bytes()
	}
	for split, n := range map[string]int{"train": 20000, "test": 40} {
		pix := make([]byte, n*784)
		lab := make([]byte, n)
		for k := 0; k < n; k++ {
			lab[k] = byte(1 + k%26)
			for i := 0; i < 784; i++ {
				pix[k*784+i] = byte((int(lab[k])*9 + i) % 256)
			}
		}
		put(filepath.Join(dir, "emnist", "emnist-letters-"+split+"-images-idx3-ubyte.gz"), idx(0x803, []int{n, 28, 28}, pix))
		put(filepath.Join(dir, "emnist", "emnist-letters-"+split+"-labels-idx1-ubyte.gz"), idx(0x801, []int{n}, lab))
	}
	p := filepath.Join(dir, "SHA256SUMS")
	if err := os.WriteFile(p, []byte(manifest.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCIFARAndEMNISTRowsEndToEnd runs the ptr-cifar10 and ptr-emnist
// presets' grids (the paper's budgets, TSGD+PTR and TSGD+Gaussian, at most
// two steps each) on small files in the official layout: cells train, the
// table has the paper's numbers beside them, and the Slurm scripts name the
// data.
func TestCIFARAndEMNISTRowsEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("trains the CIFAR-10 CNN")
	}
	data := t.TempDir()
	manifest := officialLayout(t, data)
	for _, c := range []struct {
		preset string
		eps    float64
		paper  string
	}{
		{"ptr-cifar10", 7, "| cifar10 | 7 | label-flip | 0.1 | tsgd-ptr | "},
		{"ptr-emnist", 2.5, "| emnist-letters | 2.5 | label-flip | 0.1 | tsgd-ptr | "},
	} {
		t.Run(c.preset, func(t *testing.T) {
			g, err := PTRTable{Preset: c.preset, DataDir: data, DataChecksums: manifest, Epsilons: []float64{c.eps},
				Methods: []string{"tsgd-ptr", "tsgd-gaussian"}, Corruptions: []runner.Corruption{{Kind: "label-flip", Ratio: 0.1}},
				Seeds: []uint64{1}, Steps: 2}.Grid()
			if err != nil {
				t.Fatal(err)
			}
			out := t.TempDir()
			var log bytes.Buffer
			if err := g.RunAll(context.Background(), out, nil, 2, &log); err != nil {
				t.Fatalf("%v\n%s", err, log.String())
			}
			tab, err := g.Collect(out)
			if err != nil {
				t.Fatal(err)
			}
			if len(tab.Missing) != 0 || len(tab.Cells) != 2 {
				t.Fatalf("missing %v, %d cells", tab.Missing, len(tab.Cells))
			}
			for _, r := range tab.Cells {
				// Two steps at most; on 1,050 CIFAR images the rate q ≈ 0.98
				// leaves room for one step in ε = 7.
				if r.Steps < 1 || r.Steps > 2 || !(r.TestAccuracy >= 0 && r.TestAccuracy <= 1) || !(r.Epsilon > 0 && r.Epsilon <= c.eps) {
					t.Errorf("cell %d: %+v", r.Index, r)
				}
			}
			paper := PTRPaperAccuracy(c.preset, c.eps, runner.Corruption{Kind: "label-flip", Ratio: 0.1}, "tsgd-ptr")
			md := tab.Markdown()
			if !strings.Contains(md, c.paper) || !strings.Contains(md, fmt.Sprintf("| 1/1 | %.2f |", paper)) {
				t.Errorf("table:\n%s", md)
			}
			if _, err := g.WriteSlurm(out, SlurmOptions{Trainer: "/opt/trainer", Args: []string{"experiment", "ptr-table",
				"--preset=" + c.preset, "--data-dir=" + data, "--data-checksums=" + manifest, "--out=" + out}}); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join(out, "slurm", "array-tsgd-ptr.sbatch"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), "--data-checksums="+manifest) || !strings.Contains(string(b), "--mem=6144M") {
				t.Errorf("array script:\n%s", b)
			}
		})
	}
}
