package datasets

import (
	"fmt"
	"path/filepath"
)

const emnistURL = "https://www.nist.gov/itl/products-and-services/emnist-dataset (archive https://biometrics.nist.gov/cs_links/EMNIST/gzip.zip, folder gzip/)"

// emnistSHA256 are SHA-256s of the members of NIST's gzip.zip, as recorded
// by a third party (NIST publishes none); see docs/datasets.md.
var emnistSHA256 = map[string]string{
	"emnist-letters-train-images-idx3-ubyte.gz":  "6288f418a917e007bf5fddb823a2dc7a5c6a35031401b93292a539cb12bd881f",
	"emnist-letters-train-labels-idx1-ubyte.gz":  "9759af91ea6bccdf07a6040fd085861f2ec88e37f7c3f5760f6feb57106fbe5c",
	"emnist-letters-test-images-idx3-ubyte.gz":   "50f0e93d75b99b463e9760b8345866f22587fa2c2fba472730a5ba09c693412d",
	"emnist-letters-test-labels-idx1-ubyte.gz":   "924955c31fe7fd809b7303b5c0141282955f4b8390c74cdfd5d80435e0f4b4cb",
	"emnist-balanced-train-images-idx3-ubyte.gz": "74295e75e4e9fa2c102147460ee7eb763653d5132d883a84fb88932bfb8d2db4",
	"emnist-balanced-train-labels-idx1-ubyte.gz": "b46d41e5156a0a8aaaa4d18979fdd1588850fa8571018acffd5d93b325a7d6ed",
	"emnist-balanced-test-images-idx3-ubyte.gz":  "117fc12b015e37ea98bfb2cbba3f77c3782c056cdbd219b87abfc8661d7135db",
	"emnist-balanced-test-labels-idx1-ubyte.gz":  "a67cac948379b67270b9a4d0a01c8ec661598accf2f2b1964340b7c83cb175cd",
}

// emnistVariant describes one EMNIST split family.
type emnistVariant struct {
	classes    int
	labelShift int
}

var emnistVariants = map[string]emnistVariant{
	"letters":  {classes: 26, labelShift: 1}, // labels 1..26 stored
	"balanced": {classes: 47, labelShift: 0}, // labels 0..46 stored
}

// emnistFiles returns the specs of the image and label files of a variant
// ("letters", "balanced") and split ("train", "test").
func emnistFiles(variant, split string) [2]fileSpec {
	var f [2]fileSpec
	for i, kind := range []string{"images-idx3", "labels-idx1"} {
		name := fmt.Sprintf("emnist-%s-%s-%s-ubyte.gz", variant, split, kind)
		f[i] = fileSpec{name: name, sums: []checksum{sha256sum(emnistSHA256[name])}, url: emnistURL}
	}
	return f
}

// loadEMNIST loads <dataDir>/emnist/.
func loadEMNIST(variant, split, dataDir string) (*Dataset, error) {
	if split != "train" && split != "test" {
		return nil, splitError("emnist-"+variant, split, "train", "test")
	}
	if err := requireDataDir("emnist-"+variant, dataDir); err != nil {
		return nil, err
	}
	return loadEMNISTFiles(variant, split, filepath.Join(dataDir, "emnist"), emnistFiles(variant, split))
}

// loadEMNISTFiles loads an EMNIST variant from dir with the given file
// specs: images are transposed to MNIST orientation and labels shifted to
// start at 0.
func loadEMNISTFiles(variant, split, dir string, files [2]fileSpec) (*Dataset, error) {
	v, ok := emnistVariants[variant]
	if !ok {
		return nil, fmt.Errorf("datasets: unknown EMNIST variant %q", variant)
	}
	return loadIDXPair(filepath.Join(dir, files[0].name), files[0], filepath.Join(dir, files[1].name), files[1],
		idxOptions{name: "emnist-" + variant + "/" + split, classes: v.classes, labelShift: v.labelShift,
			transpose: true, rows: 28, cols: 28})
}
