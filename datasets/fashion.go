package datasets

import "path/filepath"

const fashionURL = "https://github.com/zalandoresearch/fashion-mnist (files at http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/; or Debian package dataset-fashion-mnist)"

// fashionFiles are the official Fashion-MNIST files with their published
// MD5s, and the MD5s of their decompressed content, which Debian's
// dataset-fashion-mnist files (re-written gzip headers) also match.
var fashionFiles = map[string][2]fileSpec{
	"train": {
		{name: "train-images-idx3-ubyte.gz", url: fashionURL,
			sums:        []checksum{md5sum("8d4fb7e6c68d591d4c3dfef9ec88bf0d")},
			contentSums: []checksum{md5sum("f4a8712d7a061bf5bd6d2ca38dc4d50a")}},
		{name: "train-labels-idx1-ubyte.gz", url: fashionURL,
			sums:        []checksum{md5sum("25c81989df183df01b3e8a0aad5dffbe")},
			contentSums: []checksum{md5sum("9018921c3c673c538a1fc5bad174d6f9")}},
	},
	"test": {
		{name: "t10k-images-idx3-ubyte.gz", url: fashionURL,
			sums:        []checksum{md5sum("bef4ecab320f06d8554ea6380940ec79")},
			contentSums: []checksum{md5sum("8181f5470baa50b63fa0f6fddb340f0a")}},
		{name: "t10k-labels-idx1-ubyte.gz", url: fashionURL,
			sums:        []checksum{md5sum("bb300cfdad3c16e7a12a480ee83cd310")},
			contentSums: []checksum{md5sum("15d484375f8d13e6eb1aabb0c3f46965")}},
	},
}

// loadFashionMNIST loads <dataDir>/fashion-mnist/.
func loadFashionMNIST(split, dataDir string) (*Dataset, error) {
	files, ok := fashionFiles[split]
	if !ok {
		return nil, splitError("fashion-mnist", split, "train", "test")
	}
	if err := requireDataDir("fashion-mnist", dataDir); err != nil {
		return nil, err
	}
	dir := filepath.Join(dataDir, "fashion-mnist")
	return loadIDXPair(locate(dir, files[0]), files[0], locate(dir, files[1]), files[1],
		idxOptions{name: "fashion-mnist/" + split, classes: 10, rows: 28, cols: 28})
}
