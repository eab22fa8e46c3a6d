package runner

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"
)

// TestLineProgress drives the batch-log progress with a fake clock: a line
// only when the interval has passed, rates and ETA from the counted steps,
// no carriage returns, and one final line.
func TestLineProgress(t *testing.T) {
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := func() time.Time { return clock }
	var buf bytes.Buffer
	p := newLineProgressClock(&buf, "dpsgd", 100, 256, 10*time.Second, now)
	p.Set(20) // resumed at step 20: the rate counts from here
	for i := 0; i < 10; i++ {
		clock = clock.Add(time.Second)
		p.Describe("dpsgd loss 0.500 ε 1.250")
		p.Add(1)
	}
	// 10 steps in 10 s: exactly one line, at step 30.
	want := "dpsgd loss 0.500 ε 1.250 | step 30/100 (30%) | 1.0 steps/s, 256 examples/s | elapsed 10s, ETA 1m10s\n"
	if got := buf.String(); got != want {
		t.Fatalf("first line:\n got %q\nwant %q", got, want)
	}
	for i := 0; i < 5; i++ {
		clock = clock.Add(time.Second)
		p.Add(2)
	}
	if n := strings.Count(buf.String(), "\n"); n != 1 {
		t.Fatalf("printed %d lines before the interval passed", n)
	}
	p.Finish()
	p.Finish()
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 lines, got %q", lines)
	}
	// 20 steps in 15 s since the resume point.
	if want := "dpsgd loss 0.500 ε 1.250 | step 40/100 (40%) | 1.3 steps/s, 341 examples/s | elapsed 15s, ETA 45s"; lines[1] != want {
		t.Fatalf("final line:\n got %q\nwant %q", lines[1], want)
	}
	if strings.Contains(buf.String(), "\r") {
		t.Fatal("carriage return in batch log")
	}
}

func TestProgressInterval(t *testing.T) {
	for _, c := range []struct {
		env  string
		want time.Duration
	}{{"", 30 * time.Second}, {"5", 5 * time.Second}, {"0.5", 500 * time.Millisecond}, {"-1", 30 * time.Second}, {"NaN", 30 * time.Second}, {"x", 30 * time.Second}} {
		t.Setenv(ProgressIntervalEnv, c.env)
		if got := progressInterval(); got != c.want {
			t.Errorf("%s=%q: got %v, want %v", ProgressIntervalEnv, c.env, got, c.want)
		}
	}
}

// TestIsTerminalDevNull: /dev/null is a character device but not a
// terminal, so a run writing progress there gets lines, not redraws.
func TestIsTerminalDevNull(t *testing.T) {
	f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice == 0 {
		t.Skipf("%s is not a character device here", os.DevNull)
	}
	if isTerminal(f) {
		t.Errorf("isTerminal(%s) = true", os.DevNull)
	}
	if isTerminal(&bytes.Buffer{}) {
		t.Error("isTerminal(buffer) = true")
	}
}
