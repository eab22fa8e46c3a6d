package runner

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"golang.org/x/term"
)

// stepProgress is what the step loops report to: the terminal progress bar
// (progressbar.ProgressBar) or, in batch logs, lineProgress.
type stepProgress interface {
	Describe(description string)
	Add(n int) error
	Set(n int) error
	Finish() error
}

// ProgressIntervalEnv names the environment variable that sets the seconds
// between progress lines when the output is not a terminal (default 30).
const ProgressIntervalEnv = "PRIVTRAIN_PROGRESS_SECONDS"

// progressInterval reads ProgressIntervalEnv; invalid or non-positive
// values fall back to 30 s.
func progressInterval() time.Duration {
	if v, err := strconv.ParseFloat(os.Getenv(ProgressIntervalEnv), 64); err == nil && v > 0 && v < 1e6 {
		return time.Duration(v * float64(time.Second))
	}
	return 30 * time.Second
}

// isTerminal reports whether w is a terminal, where carriage-return
// redraws make sense. It asks the terminal driver (golang.org/x/term):
// os.ModeCharDevice would also hold for /dev/null and other devices.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// lineProgress writes one self-contained line per interval — step, the
// loop's description (loss, ε), steps/s, examples/s, elapsed time and ETA —
// and a last line at Finish: logs of batch jobs stay readable with grep and
// tail, instead of thousands of carriage-return redraws on one line.
type lineProgress struct {
	w         io.Writer
	desc      string
	total     int
	batch     float64 // expected batch size
	interval  time.Duration
	now       func() time.Time
	start     time.Time
	base      int // count when the clock started (resumed runs)
	count     int
	lastPrint time.Time
	finished  bool
}

func newLineProgress(w io.Writer, method string, total int, batch float64, interval time.Duration) *lineProgress {
	return newLineProgressClock(w, method, total, batch, interval, time.Now)
}

func newLineProgressClock(w io.Writer, method string, total int, batch float64, interval time.Duration, now func() time.Time) *lineProgress {
	t := now()
	return &lineProgress{w: w, desc: method, total: total, batch: batch, interval: interval, now: now, start: t, lastPrint: t}
}

func (p *lineProgress) Describe(d string) { p.desc = d }

// Set moves the count to n; before any Add it also sets the baseline from
// which the rate is measured (a resumed run).
func (p *lineProgress) Set(n int) error {
	if p.count == p.base {
		p.base = n
		p.start = p.now()
	}
	p.count = n
	return p.maybePrint()
}

func (p *lineProgress) Add(n int) error {
	p.count += n
	return p.maybePrint()
}

func (p *lineProgress) maybePrint() error {
	if t := p.now(); t.Sub(p.lastPrint) >= p.interval {
		p.lastPrint = t
		return p.print(t)
	}
	return nil
}

// Finish prints the final line (once).
func (p *lineProgress) Finish() error {
	if p.finished {
		return nil
	}
	p.finished = true
	return p.print(p.now())
}

func (p *lineProgress) print(t time.Time) error {
	el := t.Sub(p.start)
	line := fmt.Sprintf("%s | step %d/%d", p.desc, p.count, p.total)
	if p.total > 0 {
		line += fmt.Sprintf(" (%.0f%%)", 100*float64(p.count)/float64(p.total))
	}
	done := p.count - p.base
	if el > 0 && done > 0 {
		rate := float64(done) / el.Seconds()
		line += fmt.Sprintf(" | %.1f steps/s, %.0f examples/s", rate, rate*p.batch)
		eta := "0s"
		if rem := p.total - p.count; rem > 0 {
			eta = roundDuration(time.Duration(float64(rem) / rate * float64(time.Second))).String()
		}
		line += fmt.Sprintf(" | elapsed %s, ETA %s", roundDuration(el), eta)
	}
	_, err := fmt.Fprintln(p.w, line)
	return err
}

// roundDuration rounds to seconds (to minutes above an hour).
func roundDuration(d time.Duration) time.Duration {
	if d > time.Hour {
		return d.Round(time.Minute)
	}
	return d.Round(time.Second)
}
