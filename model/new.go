package model

import (
	"fmt"

	"github.com/privtrain/privtrain/internal/vec"
)

// New returns a model of the given architecture with parameters initialised
// from seed (see the package documentation for architectures, parameter
// order and initialisation). The same spec and seed give bit-identical
// parameters and results.
//
// The kernels are chosen once at start-up (see KernelISA); an invalid
// PRIVTRAIN_ASM value makes New fail.
func New(spec Spec, seed uint64) (Model, error) {
	if err := vec.EnvErr(); err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	n, err := newNet(spec, seed)
	if err != nil {
		return nil, err
	}
	return n, nil
}

// KernelISA names the level of the assembly kernels the models use: "go",
// "avx2" or "avx512" (the CPU's best, capped by PRIVTRAIN_ASM).
func KernelISA() string { return kernelISA.String() }
