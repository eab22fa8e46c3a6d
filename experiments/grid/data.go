package grid

import (
	"errors"
	"fmt"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/privtrain/privtrain/datasets"
)

// ErrData is wrapped by CheckData's error: a cell's data is missing or
// does not match its checksums.
var ErrData = errors.New("data check failed before any cell started")

// dataKey is what a cell needs on disk: a dataset from a data directory,
// verified against the official checksums or a manifest.
type dataKey struct{ dataset, dir, checksums string }

func (k dataKey) String() string {
	s := k.dataset
	if k.dir != "" {
		s += " in " + k.dir
	}
	if k.checksums != "" {
		s += " (manifest " + k.checksums + ")"
	}
	return s
}

// CheckData loads and verifies (official checksums, or the cells' manifest)
// the train and test splits of every dataset the given cells (all when nil)
// need, each once, before any cell starts: a missing or corrupted file is
// reported now, naming the cells it would stop, not hours into the grid.
// Finished cells are skipped. Loading is the check the run itself does
// first, so a grid that passes it will not fail on its data later.
func (g *Grid) CheckData(out string, cells []int) error {
	if cells == nil {
		for i := range g.Cells {
			cells = append(cells, i)
		}
	}
	need := map[dataKey][]int{}
	for _, i := range cells {
		if i < 0 || i >= len(g.Cells) {
			return fmt.Errorf("grid %s: no cell %d", g.Name, i)
		}
		if dir, err := g.Dir(out, i); err == nil {
			if _, err := readSummary(dir); err == nil {
				continue // finished: needs no data
			}
		}
		c := g.Cells[i].Config
		k := dataKey{c.Dataset, datasets.ResolveDataDir(c.DataDir), c.DataChecksums}
		need[k] = append(need[k], i)
	}
	keys := make([]dataKey, 0, len(need))
	for k := range need {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(a, b int) bool { return keys[a].String() < keys[b].String() })
	var errs []error
	for _, k := range keys {
		if err := loadData(k); err != nil {
			errs = append(errs, fmt.Errorf("%s, needed by %d cells (%s): %w", k, len(need[k]), rangeList(need[k]), err))
		}
	}
	debug.FreeOSMemory() // the cells load their own copies
	if len(errs) > 0 {
		return fmt.Errorf("grid %s: %w: %w", g.Name, ErrData, errors.Join(errs...))
	}
	return nil
}

// loadData loads both splits of k as a run does (runner's loadSplit).
func loadData(k dataKey) error {
	var sums map[string]string
	if k.checksums != "" {
		var err error
		if sums, err = datasets.ReadChecksumFile(k.checksums); err != nil {
			return err
		}
	}
	for _, split := range []string{"train", "test"} {
		var err error
		if sums != nil {
			_, err = datasets.LoadWithChecksums(k.dataset, split, k.dir, sums)
		} else {
			_, err = datasets.Load(k.dataset, split, k.dir)
		}
		if err != nil {
			return fmt.Errorf("%s split: %s", split, strings.TrimSpace(err.Error()))
		}
	}
	return nil
}
