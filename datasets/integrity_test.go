package datasets

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMNISTWithoutModuleCache: with no Go module cache and no `go` command
// (a binary copied to another machine), MNIST is read from <data-dir>/mnist/,
// gzipped or unpacked; without the files there the error says where to put
// them.
func TestMNISTWithoutModuleCache(t *testing.T) {
	src, err := gomnistDataDir()
	if err != nil {
		t.Skip("no GoMNIST module to copy the files from:", err)
	}
	dataDir := t.TempDir()
	mn := filepath.Join(dataDir, "mnist")
	os.MkdirAll(mn, 0o755)
	// Train files gzipped as published, test files unpacked.
	for _, f := range mnistFiles["train"] {
		data, err := os.ReadFile(filepath.Join(src, f.name))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(mn, f.name), data, 0o644)
	}
	for _, f := range mnistFiles["test"] {
		in, err := os.Open(filepath.Join(src, f.name))
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(in)
		if err != nil {
			t.Fatal(err)
		}
		out, _ := os.Create(filepath.Join(mn, strings.TrimSuffix(f.name, ".gz")))
		io.Copy(out, zr)
		out.Close()
		in.Close()
	}
	empty := t.TempDir()
	t.Setenv("GOMODCACHE", "")
	t.Setenv("GOPATH", filepath.Join(empty, "gopath"))
	t.Setenv("HOME", empty)
	t.Setenv("PATH", empty) // no `go` command
	for split, n := range map[string]int{"train": 60000, "test": 10000} {
		d, err := Load("mnist", split, dataDir)
		if err != nil || d.N != n {
			t.Fatalf("%s from the data directory: %v", split, err)
		}
	}
	_, err = Load("mnist", "train", empty)
	if err == nil || !strings.Contains(err.Error(), "are not in "+filepath.Join(empty, "mnist")+"/") || !strings.Contains(err.Error(), "place the four official MNIST files there") {
		t.Errorf("no files anywhere: %v", err)
	}
}

// TestFIFOAtDataPathRefused: a named pipe where a data file should be is an
// error at once, not a read that blocks forever.
func TestFIFOAtDataPathRefused(t *testing.T) {
	dataDir := t.TempDir()
	mn := filepath.Join(dataDir, "mnist")
	os.MkdirAll(mn, 0o755)
	for _, f := range mnistFiles["test"] {
		if err := syscall.Mkfifo(filepath.Join(mn, f.name), 0o644); err != nil {
			t.Skip(err)
		}
	}
	done := make(chan error, 1)
	go func() {
		_, err := Load("mnist", "test", dataDir)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file (a named pipe)") {
			t.Errorf("got %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Load blocked on a FIFO")
	}
}
