package runner

import (
	"github.com/privtrain/privtrain/datasets"
)

// loadSplit loads a split of the configured dataset from dataDir, verified
// against the official checksums or, when cfg.DataChecksums names a
// manifest, against the digests it lists.
func loadSplit(cfg TrainConfig, split, dataDir string) (*datasets.Dataset, error) {
	if cfg.DataChecksums == "" {
		return datasets.Load(cfg.Dataset, split, dataDir)
	}
	sums, err := datasets.ReadChecksumFile(cfg.DataChecksums)
	if err != nil {
		return nil, err
	}
	return datasets.LoadWithChecksums(cfg.Dataset, split, dataDir, sums)
}
