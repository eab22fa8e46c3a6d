package privacy

import "math"

// RecertificationTolerance is the relative amount by which a spend recorded
// under an earlier version of an accountant may differ from the ε this
// version certifies for the same history and still be carried on — the
// personalized ledger's recorded spends (optim/pdpsgd.SpendTolerance) and a
// resumed run's spend against its target ε (runner) — provided the larger
// of the two is the one counted and reported (a spend is never lowered).
// Beyond it a recorded spend is refused as tampered, corrupt or from
// another accountant or history.
//
// Why not zero. A later version of an accountant may certify the same
// history at a slightly different ε. The PLD accountant's fast path moved
// from gonum's mixed-radix FFT, charged with a round-off constant proven
// only for radix 2, onto the proven radix-2 FFT (docs/pld-evidence.md §9),
// which raised its ε by 5e-8 to 1.4e-4 relative on a grid of 100 to 21,353
// steps at δ 1e-5 and 1e-7 (growing with the steps and as δ falls; 4.9e-9
// for optim/pdpsgd/testdata/main-ledger-pld.json, 2.999433 → 2.999524 for
// 21,353 DP-SGD steps at σ 1.1, q 0.004266, δ 1e-5). 1e-3 leaves room for
// longer histories; a spend 1% off is refused.
const RecertificationTolerance = 1e-3

// WithinRecertification reports whether recomputed exceeds recorded by at
// most RecertificationTolerance relative (recomputed ≤ recorded·(1 + tol)).
// Both must be finite; a recomputed value at or below recorded is within.
func WithinRecertification(recorded, recomputed float64) bool {
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	return finite(recorded) && finite(recomputed) && recomputed <= recorded*(1+RecertificationTolerance)
}
