package aggregate

// SecureReleaser is implemented by rules that have a floating-point-safe
// release (the default; Config.FloatNoise opts out): a release computed
// without floating point in anything its privacy proof covers, so that it
// is exactly a post-processing of the mechanism it reports (see secureRelease). Float noise added to a
// float aggregate is not: its low-order bits leak the data (Mironov, "On
// significance of the least significant bits for differential privacy",
// CCS 2012).
//
// New asks the rule: unless Config.FloatNoise is set, it returns a rule
// that adds noise (Planned, or σ > 0) only if the rule implements
// SecureReleaser and SecureRelease reports true, and refuses otherwise (a
// rule without a secure release, or one that ignores the default, would
// release float noise silently). sum, tsum and ptr-tsum implement it; a rule
// registered by another package may, e.g. by releasing through the secure
// sum (examples/custom-aggregator's coord-clipped-sum does).
//
// The built-in secure releases (sum, tsum, ptr-tsum; secure.go) use exact
// integer sums on a power-of-two grid, exactly rounded Gaussian noise and an
// exact Bernoulli PTR test bit, so the released float32 values are an exact
// function of the continuous mechanism's output (accounted as that
// mechanism: post-processing) and do not leak through their low-order bits.
// Their noise must come from a secret stream (package randstream).
type SecureReleaser interface {
	// SecureRelease reports whether this instance adds noise and every
	// noisy release of it is floating-point safe (false without noise).
	SecureRelease() bool
}

// IsSecure reports whether a releases floating-point-safe noise
// (SecureReleaser).
func IsSecure(a Aggregator) bool {
	s, ok := a.(SecureReleaser)
	return ok && s.SecureRelease()
}

// SecureRelease reports whether the release is floating-point safe (σ > 0
// without Config.FloatNoise).
func (a *Sum) SecureRelease() bool { return a.sec != nil }

// SecureRelease reports whether the release is floating-point safe (σ > 0
// without Config.FloatNoise).
func (a *TSum) SecureRelease() bool { return a.sec != nil }

// SecureRelease reports whether the PTR test and the release are
// floating-point safe (without Config.FloatNoise).
func (a *PTRTSum) SecureRelease() bool { return a.sec != nil }
