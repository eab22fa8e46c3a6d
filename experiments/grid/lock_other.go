//go:build !unix

package grid

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// lockDir creates <dir>/.cell.lock exclusively and returns its removal. Unlike
// the flock of Unix systems, a lock file left by a killed process must be
// removed by hand; the error says so.
func lockDir(dir string) (func(), error) {
	path := filepath.Join(dir, ".cell.lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("%w (if no process runs it, remove %s)", ErrBusy, path)
		}
		return nil, fmt.Errorf("lock: %w", err)
	}
	f.Close()
	return func() { os.Remove(path) }, nil
}
