//go:build unix

package fileutil

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// LockFile is the name of the lock file Lock keeps in a directory.
const LockFile = ".lock"

// ErrInUse is wrapped by Lock's error when another process holds the lock.
var ErrInUse = errors.New("in use")

// DirLock is an exclusive advisory lock (flock) on a directory, held until
// Release or the end of the process: the kernel drops it when the process
// dies, however it dies, so a crashed run never blocks its directory.
type DirLock struct {
	f *os.File
}

// Lock takes the exclusive lock of dir (creating dir if needed). When
// another process holds it, the error says "run directory DIR is in use by
// process P" and wraps ErrInUse. Locks are per open file, so a second Lock of
// the same directory in the same process also fails.
func Lock(dir string) (*DirLock, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("run directory: %w", err)
	}
	// A lock file unlinked by ReleaseAndRemove between our open and flock
	// would lock nothing: retry until the locked file is the one at path.
	for try := 0; ; try++ {
		l, err := lockOnce(dir)
		if err != nil || try == 10 {
			return l, err
		}
		fi, serr := os.Stat(filepath.Join(dir, LockFile))
		li, ferr := l.f.Stat()
		if serr == nil && ferr == nil && os.SameFile(fi, li) {
			return l, nil
		}
		l.Release()
	}
}

// InUse reports whether another process holds dir's lock, and which (its
// pid, or "another process"), without creating anything.
func InUse(dir string) (string, bool) {
	path := filepath.Join(dir, LockFile)
	f, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return holder(path), errors.Is(err, syscall.EWOULDBLOCK)
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return "", false
}

func holder(path string) string {
	if b, err := os.ReadFile(path); err == nil {
		if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); perr == nil {
			return "process " + strconv.Itoa(pid)
		}
	}
	return "another process"
}

// ReleaseAndRemove removes the lock file, then drops the lock: for a
// directory left holding nothing else (a refused run). Lock retries when
// the file it locked was removed meanwhile, so no two holders can result.
func (l *DirLock) ReleaseAndRemove() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := os.Remove(l.f.Name())
	return errors.Join(err, l.Release())
}

func lockOnce(dir string) (*DirLock, error) {
	l, err := lockPath(filepath.Join(dir, LockFile))
	if errors.Is(err, ErrInUse) {
		return nil, fmt.Errorf("run directory %s is %w", dir, err)
	}
	if err != nil {
		return nil, fmt.Errorf("run directory %s: %w", dir, err)
	}
	return l, nil
}

// LockPath takes an exclusive, non-blocking flock on the file path
// (created if missing), the one lock helper of the module: Lock uses it for
// a run directory's .lock, the grid for a cell's .cell.lock. When another
// process holds it, the error wraps ErrInUse and names the holder. The
// kernel drops the lock when the process dies, so a killed (or requeued
// Slurm) process never leaves a stale lock.
func LockPath(path string) (*DirLock, error) {
	return lockPath(path)
}

func lockPath(path string) (*DirLock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w by %s", ErrInUse, holder(path))
		}
		return nil, fmt.Errorf("lock: %w", err)
	}
	// Record the holder for the message a second process prints.
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &DirLock{f: f}, nil
}

// Release drops the lock. It is safe on nil and to call twice.
func (l *DirLock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	return err
}
