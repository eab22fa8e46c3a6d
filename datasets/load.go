package datasets

import (
	"fmt"
	"os"
	"strings"
)

// DataDirEnv is the environment variable naming the data directory.
const DataDirEnv = "PRIVTRAIN_DATA"

// names lists the datasets Load knows.
var names = []string{"mnist", "fashion-mnist", "emnist-letters", "emnist-balanced", "cifar10", "svhn", "ijcnn1"}

// Names returns the dataset names accepted by Load.
func Names() []string { return append([]string(nil), names...) }

// ResolveDataDir returns the data directory: flag if non-empty, else the
// PRIVTRAIN_DATA environment variable, else "".
func ResolveDataDir(flag string) string {
	if flag != "" {
		return flag
	}
	return os.Getenv(DataDirEnv)
}

// Load reads split of the named dataset from dataDir and verifies every
// file against its checksum.
//
// Names are "mnist", "fashion-mnist", "emnist-letters", "emnist-balanced",
// "cifar10", "svhn" (cropped digits) and "ijcnn1". Splits are "train" and
// "test"; ijcnn1 also has "all" (train followed by test, 141,691 rows). MNIST needs no data
// directory: it is read from the GoMNIST module in the Go module cache
// unless <dataDir>/mnist/ holds the official files. See docs/datasets.md
// for the files each dataset expects.
//
// Images are float32 in [0, 1], channel-major (C, H, W); Labels are in
// [0, Classes). ijcnn1 has Shape (22), Targets ±1 and Labels 0/1.
func Load(name, split, dataDir string) (*Dataset, error) {
	var (
		d   *Dataset
		err error
	)
	switch name {
	case "mnist":
		d, err = loadMNIST(split, dataDir)
	case "fashion-mnist":
		d, err = loadFashionMNIST(split, dataDir)
	case "emnist-letters", "emnist-balanced":
		d, err = loadEMNIST(strings.TrimPrefix(name, "emnist-"), split, dataDir)
	case "cifar10":
		d, err = loadCIFAR10(split, dataDir)
	case "svhn":
		d, err = loadSVHN(split, dataDir)
	case "ijcnn1":
		d, err = loadIJCNN1(split, dataDir)
	default:
		return nil, fmt.Errorf("datasets: unknown dataset %q (known: %s)", name, strings.Join(names, ", "))
	}
	if err != nil {
		return nil, err
	}
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("datasets: loading %s/%s: %w", name, split, err)
	}
	return d, nil
}

func splitError(name, split string, valid ...string) error {
	return fmt.Errorf("datasets: %s has no split %q (valid: %s)", name, split, strings.Join(valid, ", "))
}

// requireDataDir returns an error when dataDir is empty.
func requireDataDir(name, dataDir string) error {
	if dataDir == "" {
		return fmt.Errorf("datasets: loading %s: %w", name, errNoDataDir)
	}
	return nil
}
