package datasets

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/privtrain/privtrain/internal/registry"
)

// DataDirEnv is the environment variable naming the data directory.
const DataDirEnv = "PRIVTRAIN_DATA"

// Loader reads one split ("train", "test", …) of a dataset from a data
// directory (which may be ""); it returns an error naming the valid splits
// for an unknown one. Load validates what it returns.
type Loader func(split, dataDir string) (*Dataset, error)

// loaders maps each dataset name to its loader. It is written only by
// Register (the built-ins register in init below, other packages in theirs).
var loaders = registry.New[Loader]("datasets", "dataset")

// Register makes a dataset available to Load under name, as database/sql's
// Register does for drivers: call it from the init function of the package
// that reads the dataset. It panics if name is empty, load is nil or name
// is already registered.
func Register(name string, load Loader) {
	if load == nil {
		panic("datasets: Register of dataset " + strconv.Quote(name) + " with a nil loader")
	}
	loaders.Register(name, load)
}

// The built-in datasets register themselves like any other.
func init() {
	Register("mnist", loadMNIST)
	Register("fashion-mnist", loadFashionMNIST)
	for _, variant := range []string{"letters", "balanced"} {
		Register("emnist-"+variant, func(split, dataDir string) (*Dataset, error) {
			return loadEMNIST(variant, split, dataDir)
		})
	}
	Register("cifar10", loadCIFAR10)
	Register("svhn", loadSVHN)
	Register("ijcnn1", loadIJCNN1)
}

// Names returns the registered dataset names in lexical order.
func Names() []string { return loaders.Names() }

// ResolveDataDir returns the data directory: flag if non-empty, else the
// PRIVTRAIN_DATA environment variable, else "".
func ResolveDataDir(flag string) string {
	if flag != "" {
		return flag
	}
	return os.Getenv(DataDirEnv)
}

// Load reads split of the named (registered) dataset from dataDir and
// validates it; the built-in loaders verify every file against its checksum.
//
// Built-in names are "mnist", "fashion-mnist", "emnist-letters", "emnist-balanced",
// "cifar10", "svhn" (cropped digits) and "ijcnn1". Splits are "train" and
// "test"; ijcnn1 also has "all" (train followed by test, 141,691 rows). MNIST needs no data
// directory: it is read from the GoMNIST module in the Go module cache
// unless <dataDir>/mnist/ holds the official files. See docs/datasets.md
// for the files each dataset expects.
//
// Images are float32 in [0, 1], channel-major (C, H, W); Labels are in
// [0, Classes). ijcnn1 has Shape (22), Targets ±1 and Labels 0/1.
func Load(name, split, dataDir string) (*Dataset, error) {
	load, ok := loaders.Lookup(name)
	if !ok {
		return nil, fmt.Errorf("datasets: unknown dataset %q; registered: %s", name, strings.Join(Names(), ", "))
	}
	d, err := load(split, dataDir)
	if err != nil {
		return nil, err
	}
	if d == nil {
		return nil, fmt.Errorf("datasets: loading %s/%s: loader returned no dataset", name, split)
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
