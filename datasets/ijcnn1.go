package datasets

import (
	"fmt"
	"path/filepath"
)

const ijcnn1URL = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary.html#ijcnn1 (LIBSVM publishes no checksums; the ones expected are of the copy described in docs/datasets.md)"

// ijcnn1Dim is the number of ijcnn1 features.
const ijcnn1Dim = 22

// ijcnn1Files are the LIBSVM ijcnn1 files. LIBSVM publishes no checksums:
// these MD5s are of the bzip2 files LIBSVM distributes, and of their
// decompressed content (for users who unpack them), as recorded in
// docs/datasets.md.
var ijcnn1Files = map[string]fileSpec{
	"train": {name: "ijcnn1.bz2", url: ijcnn1URL,
		sums:        []checksum{md5sum("ccb639c7cca405cd3c88b97a8555c8a9")},
		contentSums: []checksum{md5sum("22a1163cb407a2f1561f9678765acebf")}},
	"test": {name: "ijcnn1.t.bz2", url: ijcnn1URL,
		sums:        []checksum{md5sum("66433ab8089acee9e56dc61ac89a2fe2")},
		contentSums: []checksum{md5sum("8abe953368ee19cc41e5bb63b5f7abfc")}},
}

// loadIJCNN1 loads <dataDir>/ijcnn1/: "train" (49,990 rows), "test"
// (91,701 rows) or "all" (train then test, 141,691 rows).
func loadIJCNN1(split, dataDir string) (*Dataset, error) {
	var parts []string
	switch split {
	case "train", "test":
		parts = []string{split}
	case "all":
		parts = []string{"train", "test"}
	default:
		return nil, splitError("ijcnn1", split, "train", "test", "all")
	}
	if err := requireDataDir("ijcnn1", dataDir); err != nil {
		return nil, err
	}
	dir := filepath.Join(dataDir, "ijcnn1")
	ds := make([]*Dataset, len(parts))
	errs := make([]error, len(parts))
	done := make(chan int)
	for i, p := range parts {
		go func() {
			spec := ijcnn1Files[p]
			ds[i], errs[i] = loadLIBSVMFile(locate(dir, spec), spec, ijcnn1Dim)
			done <- i
		}()
	}
	for range parts {
		<-done
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	d := concat(ds)
	d.Name = "ijcnn1/" + split
	if d.Classes != 2 || d.Labels == nil {
		return nil, fmt.Errorf("datasets: ijcnn1: labels are not ±1")
	}
	return d, nil
}

// concat joins datasets of the same shape and label kind.
func concat(ds []*Dataset) *Dataset {
	if len(ds) == 1 {
		return ds[0]
	}
	out := &Dataset{Shape: ds[0].Shape, Classes: ds[0].Classes}
	for _, d := range ds {
		out.X = append(out.X, d.X...)
		out.Labels = append(out.Labels, d.Labels...)
		out.Targets = append(out.Targets, d.Targets...)
		out.Classes = max(out.Classes, d.Classes)
		out.N += d.N
	}
	return out
}
