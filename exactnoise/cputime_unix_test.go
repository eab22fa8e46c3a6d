//go:build unix

package exactnoise

import "syscall"

// processCPUSeconds is the process's user+system CPU time, for benchmarks
// on a shared machine (where wall time depends on the other load).
func processCPUSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}
