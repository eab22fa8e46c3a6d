//go:build !unix

package optim

// processCPUSeconds is not measured on this platform.
func processCPUSeconds() float64 { return 0 }
