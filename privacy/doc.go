// Package privacy accounts differential privacy: mechanisms (Mechanism) with
// their Rényi-DP curves and privacy loss distributions, Poisson subsampling,
// composition in an accountant (Accountant: PLDAccountant, RDPAccounting or
// one added with RegisterAccountant), conversions to (ε, δ) and noise calibration (CalibrateSigma).
// It is pure float64 math on gonum and imports nothing else from privtrain.
package privacy
