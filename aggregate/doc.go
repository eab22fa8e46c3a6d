// Package aggregate turns a batch of clipped per-example gradients into one
// released update (with any privacy noise) and reports what it did and which
// privacy mechanism the step was (Aggregator, Report). Rules are registered
// by name (Register, RegisterRule; New, Names), each with its own options
// type (Options; Config is their serialized union), in this package or
// another module (see examples/custom-aggregator).
//
// Noise is secure by default: with the zero Config.FloatNoise a rule that
// adds noise (σ > 0) releases it floating-point safely (exact integer sums
// and exactly sampled noise; SecureReleaser, IsSecure, SecureNames), and New
// refuses a noisy rule without such a release. Config.FloatNoise opts into
// float noise, whose guarantee does not hold against floating-point attacks
// (Mironov, CCS 2012). Without noise (σ = 0) every rule releases its exact
// aggregate, whatever FloatNoise says:
//
//	a, err := aggregate.New("tsum", aggregate.Config{Sigma: 1.1, ClipNorm: 1, F: 8})
//	// aggregate.IsSecure(a) == true
//	f, err := aggregate.New("tsum", aggregate.Config{Sigma: 1.1, ClipNorm: 1, F: 8, FloatNoise: true})
//	// aggregate.IsSecure(f) == false: float noise, not floating-point safe
package aggregate
