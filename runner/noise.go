package runner

// The noise mode of a run: floating-point safe by default, float noise only
// by the explicit opt-in TrainConfig.FloatNoise (--float-noise). See
// docs/noise-defaults.md for every entry point's default.

// FloatNoiseWarning is what a float-noise run says of its guarantee, on the
// console and in summary.json.
const FloatNoiseWarning = "FLOAT NOISE (--float-noise): the released values are float32 sums with float noise, whose low-order bits leak the data; the (ε, δ) guarantee does NOT hold against floating-point attacks (Mironov, \"On significance of the least significant bits for differential privacy\", CCS 2012)"

// SecureNoiseStatement is what a secure run says of its releases.
const SecureNoiseStatement = "secure (floating-point safe): exact integer sums on a power-of-two grid with exactly rounded Gaussian noise (TSGD+PTR: the test bit drawn exactly too), a post-processing of the continuous mechanism the accountant charges (docs/secure-release.md)"

// noiseName names the release for messages.
func noiseName(secure bool) string {
	if secure {
		return "secure"
	}
	return "float"
}

// setNoise fills the summary's noise fields from the run's configuration.
func (s *Summary) setNoise(cfg TrainConfig) {
	switch {
	case cfg.SecureRelease():
		s.SecureNoise, s.Noise = true, SecureNoiseStatement
	case cfg.Noisy():
		s.FloatNoise, s.Noise = true, FloatNoiseWarning
	}
}
