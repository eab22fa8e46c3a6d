package datasets

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
)

const (
	cifarURL         = "https://www.cs.toronto.edu/~kriz/cifar.html (binary version, cifar-10-binary.tar.gz)"
	cifarDir         = "cifar-10-batches-bin"
	cifarTarball     = "cifar-10-binary.tar.gz"
	cifarRecord      = 1 + 3*32*32
	cifarPerBatch    = 10000
	cifarTarballMD5  = "c32a1d4ab5d03f1284b67883e8d87530"
	cifarTrainBatchs = 5
)

// cifarSpecs holds the CIFAR-10 binary batch files and the tarball, with
// their MD5s.
type cifarSpecs struct {
	batches map[string]fileSpec // by file name
	tarball fileSpec
}

var cifarFiles = cifarSpecs{
	batches: map[string]fileSpec{
		"data_batch_1.bin": {name: "data_batch_1.bin", sums: []checksum{md5sum("5dd7e06a14cb22eb9f671a540d1b7c25")}, url: cifarURL},
		"data_batch_2.bin": {name: "data_batch_2.bin", sums: []checksum{md5sum("5ea93a67294ea407fff1d09f752e9692")}, url: cifarURL},
		"data_batch_3.bin": {name: "data_batch_3.bin", sums: []checksum{md5sum("942cd6a4bcdd0dd3c604fbe906cb4421")}, url: cifarURL},
		"data_batch_4.bin": {name: "data_batch_4.bin", sums: []checksum{md5sum("ae636b3ba5c66a11e91e8cb52e771fcb")}, url: cifarURL},
		"data_batch_5.bin": {name: "data_batch_5.bin", sums: []checksum{md5sum("53f37980c15c3d472c316c40844f3f0d")}, url: cifarURL},
		"test_batch.bin":   {name: "test_batch.bin", sums: []checksum{md5sum("803d5f7f4d78ea53de84dbe85f74fb6d")}, url: cifarURL},
	},
	tarball: fileSpec{name: cifarTarball, sums: []checksum{md5sum(cifarTarballMD5)}, url: cifarURL},
}

// cifarBatchNames returns the batch files of a split, in order.
func cifarBatchNames(split string) ([]string, error) {
	switch split {
	case "train":
		names := make([]string, cifarTrainBatchs)
		for i := range names {
			names[i] = fmt.Sprintf("data_batch_%d.bin", i+1)
		}
		return names, nil
	case "test":
		return []string{"test_batch.bin"}, nil
	}
	return nil, splitError("cifar10", split, "train", "test")
}

// loadCIFAR10 loads <dataDir>/cifar-10-batches-bin/, or, when that folder
// is absent, the official tarball <dataDir>/cifar-10-binary.tar.gz.
func loadCIFAR10(split, dataDir string) (*Dataset, error) {
	if _, err := cifarBatchNames(split); err != nil {
		return nil, err
	}
	if err := requireDataDir("cifar10", dataDir); err != nil {
		return nil, err
	}
	return loadCIFAR10From(split, dataDir, cifarFiles)
}

// loadCIFAR10From loads a split with the given checksum table.
func loadCIFAR10From(split, dataDir string, specs cifarSpecs) (*Dataset, error) {
	names, err := cifarBatchNames(split)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(dataDir, cifarDir)
	tarPath := filepath.Join(dataDir, cifarTarball)
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) && fileExists(tarPath) {
		return loadCIFARTarball(split, tarPath, names, specs)
	}
	records := 0
	for _, name := range names {
		if st, err := os.Stat(filepath.Join(dir, name)); err == nil {
			records += int(st.Size() / cifarRecord)
		}
	}
	d := newCIFARDataset(split, records)
	for _, name := range names {
		spec := specs.batches[name]
		err := readVerified(filepath.Join(dir, name), spec, func(r io.Reader) error {
			return readCIFARBatch(r, d)
		})
		if err != nil {
			return nil, err
		}
	}
	return d, nil
}

// newCIFARDataset returns an empty CIFAR-10 dataset with room for n
// records.
func newCIFARDataset(split string, n int) *Dataset {
	n = max(0, min(n, 6*cifarPerBatch))
	return &Dataset{
		Name:    "cifar10/" + split,
		X:       make([]float32, 0, n*(cifarRecord-1)),
		Shape:   []int{3, 32, 32},
		Labels:  make([]int, 0, n),
		Classes: 10,
	}
}

// readCIFARBatch appends to d the records of one batch file: each record
// is a label byte followed by the 1024 red, 1024 green and 1024 blue bytes
// of a 32×32 image, each plane row-major. Official files hold 10,000
// records; any whole number of records is read (the checksum pins the
// official files).
func readCIFARBatch(r io.Reader, d *Dataset) error {
	buf := make([]byte, cifarRecord)
	for i := 0; ; i++ {
		n, err := io.ReadFull(r, buf)
		if n == 0 && err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading record %d: %w", i, io.ErrUnexpectedEOF)
		}
		if buf[0] >= 10 {
			return fmt.Errorf("record %d: label %d outside [0, 10)", i, buf[0])
		}
		d.Labels = append(d.Labels, int(buf[0]))
		off := len(d.X)
		d.X = append(d.X, make([]float32, cifarRecord-1)...)
		bytesToUnit(d.X[off:], buf[1:])
		d.N++
	}
}

// loadCIFARTarball streams the official tarball once, reading the split's
// batch files (each verified against its own MD5) and verifying the
// tarball's MD5.
func loadCIFARTarball(split, tarPath string, names []string, specs cifarSpecs) (*Dataset, error) {
	want := make(map[string]int, len(names))
	for k, n := range names {
		want[path.Join(cifarDir, n)] = k
	}
	// Members are read straight into d when they come in split order (as in
	// the official archive); others wait in parts until their turn.
	d := newCIFARDataset(split, 0)
	parts := make([]*Dataset, len(names))
	seen := make([]bool, len(names))
	next := 0
	err := readVerified(tarPath, specs.tarball, func(r io.Reader) error {
		tr := tar.NewReader(r)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return fmt.Errorf("tar: %w", err)
			}
			k, ok := want[path.Clean(h.Name)]
			if !ok || h.Typeflag != tar.TypeReg || seen[k] {
				continue
			}
			seen[k] = true
			spec := specs.batches[names[k]]
			member := tarPath + ":" + h.Name
			records := int(min(max(h.Size, 0)/cifarRecord, cifarPerBatch)) // capacity hint
			dst := d
			if k != next {
				parts[k] = newCIFARDataset(split, records)
				dst = parts[k]
			} else {
				d.X = slices.Grow(d.X, records*(cifarRecord-1))
				d.Labels = slices.Grow(d.Labels, records)
			}
			err = verifyStream(tr, spec, func(r io.Reader) error {
				return readCIFARBatch(r, dst)
			}, func(err error) error {
				return &FileError{Path: member, Expected: spec.expected(), URL: spec.url, Err: err}
			})
			if err != nil {
				return err
			}
			if k == next {
				for next++; next < len(names) && parts[next] != nil; next++ {
					p := parts[next]
					d.X, d.Labels, d.N = append(d.X, p.X...), append(d.Labels, p.Labels...), d.N+p.N
					parts[next] = nil
				}
			}
		}
	})
	if err != nil {
		return nil, err
	}
	for k, ok := range seen {
		if !ok {
			return nil, &FileError{Path: tarPath, Expected: specs.tarball.expected(), URL: specs.tarball.url,
				Err: fmt.Errorf("archive has no %s", path.Join(cifarDir, names[k]))}
		}
	}
	return d, nil
}
