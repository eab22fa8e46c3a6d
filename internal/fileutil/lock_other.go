//go:build !unix

package fileutil

import (
	"errors"
	"fmt"
	"os"
)

// LockFile is the name of the lock file Lock keeps in a directory.
const LockFile = ".lock"

// ErrInUse is wrapped by Lock's error when another process holds the lock.
var ErrInUse = errors.New("in use")

// DirLock is a lock file created exclusively by LockPath (Lock is
// unavailable on this platform).
type DirLock struct{ path string }

// LockPath creates path exclusively and returns a lock whose Release
// removes it. Unlike flock on unix, a lock file left by a killed process
// must be removed by hand; the error says so and wraps ErrInUse.
func LockPath(path string) (*DirLock, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("%w (if no process holds it, remove %s)", ErrInUse, path)
		}
		return nil, fmt.Errorf("lock: %w", err)
	}
	f.Close()
	return &DirLock{path: path}, nil
}

// Lock fails: run-directory locking needs flock (unix).
func Lock(dir string) (*DirLock, error) {
	return nil, errors.New("run directory locking needs a unix system (flock)")
}

// InUse reports false: there is no lock.
func InUse(string) (string, bool) { return "", false }

// ReleaseAndRemove is Release.
func (l *DirLock) ReleaseAndRemove() error { return l.Release() }

// Release removes a LockPath lock file; safe on nil and to call twice.
func (l *DirLock) Release() error {
	if l == nil || l.path == "" {
		return nil
	}
	err := os.Remove(l.path)
	l.path = ""
	return err
}
