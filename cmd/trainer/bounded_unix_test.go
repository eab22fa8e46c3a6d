//go:build unix

package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestHistoryFIFORefused: `account epsilon --history FIFO` used to block
// forever in the read; a named pipe is refused without opening it.
func TestHistoryFIFORefused(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var so, se bytes.Buffer
	var code int
	go func() {
		code = runAccount([]string{"epsilon", "--history", fifo, "--delta", "1e-5"}, &so, &se)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("account epsilon --history FIFO blocks")
	}
	if code != 2 || !strings.Contains(se.String(), "named pipe") {
		t.Errorf("exit %d, stderr %q", code, se.String())
	}
}
