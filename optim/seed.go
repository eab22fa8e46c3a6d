package optim

import (
	"math/rand/v2"

	"github.com/privtrain/privtrain/randstream"
)

// DeriveSeed returns an independent seed for one stochastic component
// (e.g. "init", "corruption") of a run with the given public seed, so that
// components never share a random stream. It is public randomness
// (randstream.FromSeed): never use it for privacy noise or sampling.
func DeriveSeed(seed uint64, purpose string) uint64 {
	return randstream.FromSeed(seed).Uint64(purpose)
}

// StepRNG returns the public random stream of one training step for a
// public seed: randstream.FromSeed(seed).Stream("step", step). Privacy noise
// does not use it (see Config.NoiseKey).
func StepRNG(seed uint64, step int) *rand.Rand {
	return randstream.FromSeed(seed).Stream("step", uint64(step))
}
