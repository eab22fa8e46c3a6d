package rgmfig

import (
	"fmt"

	"github.com/privtrain/privtrain/datasets"
	"github.com/privtrain/privtrain/experiments/rgmfig/ridgegd"
)

// LoadIJCNN1 loads ijcnn1 train + test (datasets.Load("ijcnn1", "all"),
// N = 141,691, d = 22) as float64 regression data with targets ±1.
func LoadIJCNN1(dataDir string) (*ridgegd.Data, error) {
	ds, err := datasets.Load("ijcnn1", "all", dataDir)
	if err != nil {
		return nil, fmt.Errorf("rgmfig: %w", err)
	}
	return FromDataset(ds)
}

// FromDataset converts a dataset with real-valued Targets to ridgegd.Data.
func FromDataset(ds *datasets.Dataset) (*ridgegd.Data, error) {
	if ds == nil || ds.N == 0 {
		return nil, fmt.Errorf("rgmfig: empty dataset")
	}
	if len(ds.Targets) != ds.N {
		return nil, fmt.Errorf("rgmfig: dataset %s has %d targets for %d rows; ridge regression needs real targets", ds.Name, len(ds.Targets), ds.N)
	}
	d := ds.Dim()
	if len(ds.X) != ds.N*d {
		return nil, fmt.Errorf("rgmfig: dataset %s has %d feature values, want %d×%d", ds.Name, len(ds.X), ds.N, d)
	}
	x := make([]float64, len(ds.X))
	for i, v := range ds.X {
		x[i] = float64(v)
	}
	y := make([]float64, ds.N)
	for i, v := range ds.Targets {
		y[i] = float64(v)
	}
	return ridgegd.NewData(x, y, d)
}
