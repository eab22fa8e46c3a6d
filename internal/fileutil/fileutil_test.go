package fileutil

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.json")
	for _, content := range []string{"first", "second, longer content", ""} {
		if err := WriteAtomic(p, []byte(content)); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(p)
		if err != nil || string(got) != content {
			t.Fatalf("got %q, %v; want %q", got, err, content)
		}
	}
	// A failing writer leaves the old content and no temporary file.
	err := WriteAtomicFunc(p, func(w io.Writer) error {
		io.WriteString(w, "partial")
		return errors.New("boom")
	})
	if err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("want the writer's error, got %v", err)
	}
	if got, _ := os.ReadFile(p); string(got) != "" {
		t.Errorf("failed write changed the file to %q", got)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries after a failed write, want 1", len(entries))
	}
	if err := WriteAtomic(filepath.Join(dir, "missing", "f"), nil); err == nil {
		t.Error("write into a missing directory succeeded")
	}
}

func TestRemoveTemps(t *testing.T) {
	dir := t.TempDir()
	files := map[string]bool{ // name → removed
		".state.json.tmp-123":  true,
		".model-5.bin.tmp-9":   true,
		"state.json":           false,
		"model-5.bin":          false,
		".lock":                false,
		"notes.tmp-1":          false, // not hidden: not ours
		".ledger.csv.tmp-abcd": true,
	}
	for n := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	removed, err := RemoveTemps(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for n, gone := range files {
		_, err := os.Stat(filepath.Join(dir, n))
		if gone != os.IsNotExist(err) {
			t.Errorf("%s: removed = %v, want %v", n, os.IsNotExist(err), gone)
		}
		if gone {
			want++
		}
	}
	if len(removed) != want {
		t.Errorf("reported %d removed, want %d", len(removed), want)
	}
}

func TestRequireRegular(t *testing.T) {
	dir := t.TempDir()
	reg := filepath.Join(dir, "reg")
	os.WriteFile(reg, []byte("x"), 0o644)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	link := filepath.Join(dir, "link")
	os.Symlink(reg, link)
	tests := []struct {
		path string
		want string // "" = ok
	}{
		{reg, ""},
		{link, ""},
		{fifo, "named pipe"},
		{dir, "directory"},
		{filepath.Join(dir, "none"), "no such file"},
	}
	for _, tc := range tests {
		err := RequireRegular(tc.path)
		if (tc.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.path, err, tc.want)
		}
	}
	// Reading the FIFO through ReadRegular returns at once instead of blocking.
	if _, err := ReadRegular(fifo); err == nil {
		t.Error("ReadRegular of a FIFO succeeded")
	}
}

func TestLock(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	l1, err := Lock(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Lock(dir)
	want := fmt.Sprintf("run directory %s is in use by process %d", dir, os.Getpid())
	if !errors.Is(err, ErrInUse) || err.Error() != want {
		t.Fatalf("second lock: got %v, want %q", err, want)
	}
	if err := l1.Release(); err != nil {
		t.Fatal(err)
	}
	l2, err := Lock(dir)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, LockFile))
	if strings.TrimSpace(string(b)) != strconv.Itoa(os.Getpid()) {
		t.Errorf("lock file holds %q, want our pid", b)
	}
	l2.Release()
	l2.Release() // twice is fine
}

// TestLockReleaseAndRemove: ReleaseAndRemove leaves no lock file, a later
// Lock works, and InUse reports the holder only while the lock is held.
func TestLockReleaseAndRemove(t *testing.T) {
	dir := t.TempDir()
	l, err := Lock(dir)
	if err != nil {
		t.Fatal(err)
	}
	if who, inUse := InUse(dir); !inUse || who != fmt.Sprintf("process %d", os.Getpid()) {
		t.Errorf("InUse while held: %q %v", who, inUse)
	}
	if err := l.ReleaseAndRemove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, LockFile)); !os.IsNotExist(err) {
		t.Errorf("lock file left: %v", err)
	}
	if _, inUse := InUse(dir); inUse {
		t.Error("InUse after release")
	}
	l2, err := Lock(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Release()
	if _, err := Lock(dir); !errors.Is(err, ErrInUse) {
		t.Errorf("second Lock: %v", err)
	}
}

// TestLockPath: the one lock helper refuses a second holder (ErrInUse,
// naming the holder on unix) until the first releases it.
func TestLockPath(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".cell.lock")
	l, err := LockPath(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LockPath(path); !errors.Is(err, ErrInUse) {
		t.Fatalf("second LockPath: %v, want ErrInUse", err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	l2, err := LockPath(path)
	if err != nil {
		t.Fatalf("LockPath after Release: %v", err)
	}
	l2.Release()
}
