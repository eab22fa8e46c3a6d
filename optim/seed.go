package optim

import (
	"hash/fnv"
	"math/rand/v2"
)

// DeriveSeed returns an independent seed for one stochastic component
// (e.g. "sampler", "noise", "corruption") of a run with the given seed, so
// that components never share a random stream.
func DeriveSeed(seed uint64, purpose string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(purpose))
	return splitmix64(seed ^ h.Sum64())
}

// StepRNG returns the random stream of one training step: a PCG seeded from
// (seed, step). A resumed run therefore draws exactly the noise the
// uninterrupted run would have drawn.
func StepRNG(seed uint64, step int) *rand.Rand {
	return rand.New(rand.NewPCG(seed, splitmix64(uint64(step)+0x9e3779b97f4a7c15)))
}

// splitmix64 is the SplitMix64 finalizer (Steele, Lea & Flood 2014), a
// bijective mixer of 64-bit values.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
