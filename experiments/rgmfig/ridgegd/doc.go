// Package ridgegd is private gradient descent for ridge regression over
// several nodes, as in Hendrikx, Mangold & Bellet, "The Relative Gaussian
// Mechanism and its Application to Private Gradient Descent" (AISTATS 2024,
// arXiv:2308.15250), Sections 5–6 and Appendix C.
//
// It provides, in float64:
//
//   - the ridge objective f(θ) = (1/n) Σ ½(x_iᵀθ − y_i)² + (μ/2)‖θ‖² and its
//     closed-form minimizer (Ridge, Quadratic, Objective);
//   - feature clipping of Proposition 1 and of Proposition 3 (ClipFeatures);
//   - the relative-sensitivity constants η and R_rel of a node (Sensitivity);
//   - the Propose-Test-Release check of Proposition 2 (PTRTest);
//   - node splits "random", "label" and "bias" (Split);
//   - k-node gradient descent where every node privatizes its gradient with
//     the Relative Gaussian Mechanism or with per-example clipping plus
//     Gaussian noise (Run).
//
// Everything stochastic takes an explicit seed; runs are bit-for-bit
// reproducible.
//
// The noise is float64 Gaussian noise (NoiseStatement): unlike privtrain's
// training releases (aggregate.Config.Secure) it is not floating-point safe,
// and cannot be made an exact post-processing on a fixed grid the way the
// secure sum is, because the Relative Gaussian Mechanism's noise scale
// depends on the gradient's norm. Its guarantee holds over the reals only,
// not against floating-point attacks (Mironov, CCS 2012); and the noise is
// derived from the public seed, so the runs are experiments, not releases.
package ridgegd

// NoiseStatement is what rgm-gd says of its noise, on the console and in
// its summary.json.
const NoiseStatement = "float noise, NOT floating-point safe: float64 Gaussian noise (rgm's scale σ·(R_rel + η‖g‖) depends on the gradient, so it cannot be released exactly on a fixed grid as privtrain's secure sum is; clip's noise is float64 as well); the RDP guarantee holds over the reals only, not against floating-point attacks (Mironov, CCS 2012), and the noise derives from the public --seed: an experiment, not a release"
