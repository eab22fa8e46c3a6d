// Package privacy is privtrain's privacy accounting: Rényi-DP (RDP) curves of
// mechanisms, privacy amplification by Poisson subsampling, composition in an
// accountant, conversions from RDP to (ε, δ)-DP, and noise calibration.
//
// It is pure float64 math on top of gonum and imports nothing else from
// privtrain, so a Go program can use the accountant alone.
//
// Every bound states its source (paper, theorem) and its validity conditions in
// its doc comment, checks them at run time and reports, per order, which bound
// produced a value (RDPValue.Bound) and whether it is proven there
// (RDPValue.Valid).
package privacy
