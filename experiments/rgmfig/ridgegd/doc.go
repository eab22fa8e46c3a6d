// Package ridgegd is the full-batch private gradient descent for ridge
// regression over several nodes of Hendrikx, Mangold & Bellet, "The Relative
// Gaussian Mechanism and its Application to Private Gradient Descent"
// (AISTATS 2024), Sections 5–6 and Appendix C: the objective (Ridge), feature
// clipping (ClipFeatures), sensitivity constants (Sensitivity), the PTR check
// of Proposition 2 (PTRTest), node splits (Split) and k-node GD with the RGM
// or clipping plus Gaussian noise (Run), seeded and bit-for-bit reproducible.
package ridgegd

// NoiseStatement is what rgm-gd says of its noise, on the console and in
// its summary.json.
//
// The noise is float64 Gaussian noise: unlike privtrain's training releases
// (aggregate's default secure release) it is not floating-point safe, and cannot be
// made an exact post-processing on a fixed grid the way the secure sum is,
// because the Relative Gaussian Mechanism's noise scale depends on the
// gradient's norm. Its guarantee holds over the reals only, not against
// floating-point attacks (Mironov, CCS 2012); and the noise is derived from
// the public seed, so the runs are experiments, not releases.
const NoiseStatement = "float noise, NOT floating-point safe: float64 Gaussian noise (rgm's scale σ·(R_rel + η‖g‖) depends on the gradient, so it cannot be released exactly on a fixed grid as privtrain's secure sum is; clip's noise is float64 as well); the RDP guarantee holds over the reals only, not against floating-point attacks (Mironov, CCS 2012), and the noise derives from the public --seed: an experiment, not a release"
