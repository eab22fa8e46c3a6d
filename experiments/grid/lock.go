package grid

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/privtrain/privtrain/internal/fileutil"
)

// lockDir takes the cell's lock, <dir>/.cell.lock (the run itself then
// takes <dir>/.lock, see runner.Train), with the module's one lock helper
// fileutil.LockPath, and returns its release. ErrBusy when another process
// holds it.
func lockDir(dir string) (func(), error) {
	l, err := fileutil.LockPath(filepath.Join(dir, ".cell.lock"))
	if errors.Is(err, fileutil.ErrInUse) {
		return nil, fmt.Errorf("%w (%v)", ErrBusy, err)
	}
	if err != nil {
		return nil, err
	}
	return func() { l.Release() }, nil
}
