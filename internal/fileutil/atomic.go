package fileutil

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// tempMarker is part of every temporary file name WriteAtomic uses:
// "." + base name + tempMarker + random suffix.
const tempMarker = ".tmp-"

// WriteAtomic writes data to path so that readers (and a crash at any
// moment) see either the old content or the new one, never a torn file.
func WriteAtomic(path string, data []byte) error {
	return WriteAtomicFunc(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteAtomicFunc is WriteAtomic with the content produced by write: it goes
// to a temporary file in path's directory, which is fsynced, closed and
// renamed over path; then the directory is fsynced so that the rename is
// durable. On any error the temporary file is removed and path is untouched.
func WriteAtomicFunc(path string, write func(io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+tempMarker+"*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
			err = fmt.Errorf("write %s: %w", path, err)
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<16)
	if err = write(bw); err != nil {
		return err
	}
	if err = bw.Flush(); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	return SyncDir(dir)
}

// SyncDir fsyncs a directory so that renames and creations in it survive a
// crash. Platforms that cannot sync a directory (EINVAL) are not an error.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) && !isEINVAL(err) {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}

// IsTemp reports whether name is a temporary file of an interrupted write.
func IsTemp(name string) bool {
	return strings.HasPrefix(name, ".") && strings.Contains(name, tempMarker)
}

// RemoveTemps deletes the temporary files that writes interrupted by a
// crash or kill left in dir (names "."+base+".tmp-"+suffix) and returns
// their names. Call it only while no other process writes to dir.
func RemoveTemps(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, e := range entries {
		n := e.Name()
		if !e.Type().IsRegular() || !strings.HasPrefix(n, ".") || !strings.Contains(n, tempMarker) {
			continue
		}
		if err := os.Remove(filepath.Join(dir, n)); err != nil && !os.IsNotExist(err) {
			return removed, fmt.Errorf("remove interrupted write %s: %w", n, err)
		}
		removed = append(removed, n)
	}
	return removed, nil
}

// RequireRegular returns an error unless path names a regular file (after
// following symlinks): a FIFO, socket or device at a data or config path
// would block a reader forever or never end.
func RequireRegular(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file (%s)", path, describeMode(st.Mode()))
	}
	return nil
}

// ReadRegular reads a whole file after RequireRegular.
func ReadRegular(path string) ([]byte, error) {
	if err := RequireRegular(path); err != nil {
		return nil, err
	}
	return os.ReadFile(path)
}

// ReadRegularMax reads a whole regular file of at most max bytes: larger
// files are refused without being read (also one that grows while read).
func ReadRegularMax(path string, max int64) ([]byte, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, max)
	}
	return data, nil
}

// OpenRegular opens a file for reading after RequireRegular.
func OpenRegular(path string) (*os.File, error) {
	if err := RequireRegular(path); err != nil {
		return nil, err
	}
	return os.Open(path)
}

func describeMode(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return "mode " + m.String()
}
