//go:build !unix

package fileutil

import "errors"

// LockFile is the name of the lock file Lock keeps in a directory.
const LockFile = ".lock"

// ErrInUse is wrapped by Lock's error when another process holds the lock.
var ErrInUse = errors.New("in use")

// DirLock is unavailable on this platform.
type DirLock struct{}

// Lock fails: run-directory locking needs flock (unix).
func Lock(dir string) (*DirLock, error) {
	return nil, errors.New("run directory locking needs a unix system (flock)")
}

// InUse reports false: there is no lock.
func InUse(string) (string, bool) { return "", false }

// ReleaseAndRemove is a no-op.
func (l *DirLock) ReleaseAndRemove() error { return nil }

// Release is a no-op.
func (l *DirLock) Release() error { return nil }
