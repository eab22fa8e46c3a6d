// Package vec holds the float32 vector kernels of the DP hot path (sums of
// squares for per-example norms, clip scaling, and SumScaledRows: clip
// scaling, the sum and the clipped rows' norms in one pass) and the choice of
// instruction-set level that every assembly kernel of privtrain uses.
//
// The level is fixed at start-up from the CPU and the OS (CPUID and XGETBV
// through golang.org/x/sys/cpu) and the environment variable
// PRIVTRAIN_ASM: "off" (or "go") runs the pure-Go fallbacks only, "avx2"
// caps the kernels at AVX2/FMA, "avx512" or unset uses the best available.
// The purego build tag, or an architecture other than amd64, compiles the
// fallbacks only.
//
// Every kernel is deterministic (a fixed summation order for a given
// length) and each assembly kernel has a pure-Go fallback that computes the
// same value up to the rounding of the summation order; both are tested
// against each other and benchmarked side by side.
package vec
