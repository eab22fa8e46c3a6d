package vec

import (
	"fmt"
	"os"
)

// ISA is an instruction-set level of the assembly kernels.
type ISA uint8

// The levels, in increasing order.
const (
	Go     ISA = iota // pure Go only
	AVX2              // AVX2 + FMA kernels
	AVX512            // AVX-512 F kernels where they are faster, AVX2 elsewhere
)

func (l ISA) String() string {
	switch l {
	case AVX2:
		return "avx2"
	case AVX512:
		return "avx512"
	}
	return "go"
}

// Env is the environment variable that limits the assembly kernels at run
// time: "off" or "go", "avx2", "avx512" (or unset: the best available).
const Env = "PRIVTRAIN_ASM"

// Select returns the kernel level for an Env value on a machine whose best
// supported level is best, or an error for an unknown value.
func Select(env string, best ISA) (ISA, error) {
	var want ISA
	switch env {
	case "", "avx512":
		want = AVX512
	case "avx2":
		want = AVX2
	case "off", "go":
		want = Go
	default:
		return Go, fmt.Errorf("%s=%q: want off, avx2, avx512 or unset", Env, env)
	}
	return min(want, best), nil
}

// level and levelErr are fixed at start-up (see Level).
var level, levelErr = Select(os.Getenv(Env), CPU())

// Level is the kernel level in use: the CPU's best, capped by Env. With an
// invalid Env it is Go and EnvErr reports the problem.
//
// The level is fixed at start-up from the CPU and the OS (CPUID and XGETBV
// through golang.org/x/sys/cpu) and the environment variable PRIVTRAIN_ASM:
// "off" (or "go") runs the pure-Go fallbacks only, "avx2" caps the kernels
// at AVX2/FMA, "avx512" or unset uses the best available. The purego build
// tag, or an architecture other than amd64, compiles the fallbacks only.
// Every kernel is deterministic (a fixed summation order for a given length)
// and each assembly kernel has a pure-Go fallback that computes the same
// value up to the rounding of the summation order; both are tested against
// each other.
func Level() ISA { return level }

// EnvErr is the error for an invalid Env value (nil if valid).
func EnvErr() error { return levelErr }
