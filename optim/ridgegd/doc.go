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
package ridgegd
