//go:build unix

package optim

import "syscall"

// processCPUSeconds returns the user+system CPU time of this process, so
// benchmarks can report CPU per step, which other processes sharing the
// cores inflate far less than wall time.
func processCPUSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}
