package audit

import (
	"fmt"
	"math"
	"slices"

	"github.com/privtrain/privtrain/aggregate"
	"github.com/privtrain/privtrain/privacy"
)

// Case is one pair of neighbouring batches: D′ is D with one gradient added.
type Case struct {
	// Name identifies the case, e.g. "add-one", "ptr-test-boundary".
	Name string
	// Description says which part of the sensitivity analysis it probes.
	Description string
	// D and DPrime are the two batches (same P and ClipNorm).
	D, DPrime aggregate.Grads
}

// CaseBuilder builds the worst-case neighbouring batches of gradient
// dimension dim for a rule configured by cfg whose steps release mech.
type CaseBuilder func(cfg aggregate.Config, mech privacy.Mechanism, dim int) ([]Case, error)

// builders maps a mechanism kind (privacy.Spec.Kind) to its case builder;
// populated at init only.
// The secure-noise releases (the default; aggregate.Config.FloatNoise opts
// out) report the same mechanisms as their float counterparts (gaussian,
// ptr); the discrete kinds stay registered for releases of earlier
// versions (discrete Gaussian on the grid with L2 sensitivity R, discrete
// PTR test on the same Δ(S)).
var builders = map[string]CaseBuilder{
	"gaussian":          gaussianCases,
	"discrete-gaussian": gaussianCases,
	"ptr":               ptrCases,
	"ptr-discrete":      ptrCases,
	"rgm":               rgmCases,
}

// RegisterCases registers the case builder of a mechanism kind; call it
// from an init function. It panics on a duplicate kind.
func RegisterCases(kind string, b CaseBuilder) {
	if _, dup := builders[kind]; dup {
		panic(fmt.Sprintf("audit: case builder for mechanism kind %q registered twice", kind))
	}
	builders[kind] = b
}

// Kinds lists the mechanism kinds with case builders.
func Kinds() []string {
	var k []string
	for n := range builders {
		k = append(k, n)
	}
	slices.Sort(k)
	return k
}

// batch builds Grads from rows (each of length dim) clipped to r.
func batch(rows [][]float64, dim int, r float64) aggregate.Grads {
	g := aggregate.Grads{G: make([]float32, 0, len(rows)*dim), Norms: make([]float64, len(rows)), M: len(rows), P: dim, ClipNorm: r}
	for i, row := range rows {
		var n2 float64
		for _, v := range row {
			// Round towards zero so that a gradient meant to have norm τ
			// (or R) never exceeds it in float32.
			f := float32(v)
			if math.Abs(float64(f)) > math.Abs(v) {
				f = math.Nextafter32(f, 0)
			}
			g.G = append(g.G, f)
			n2 += float64(f) * float64(f)
		}
		g.Norms[i] = math.Sqrt(n2)
	}
	return g
}

// axis returns norm·e_j in dimension dim.
func axis(dim, j int, norm float64) []float64 {
	v := make([]float64, dim)
	v[j] = norm
	return v
}

func repeat(n int, row []float64) [][]float64 {
	out := make([][]float64, n)
	for i := range out {
		out[i] = row
	}
	return out
}

func plusOne(rows [][]float64, extra []float64) [][]float64 {
	return append(slices.Clone(rows), extra)
}

// gaussianCases: a rule releasing the Gaussian mechanism with multiplier σ
// claims L2 sensitivity R under add/remove. The worst case adds a gradient
// of norm R. For the trimmed sum (F = cfg.F > 0) D holds F gradients R·e₂,
// which TSUM_F drops entirely; adding R·e₁ makes it keep one of them, so the
// release moves by R (for the plain sum, F = 0 and D is empty).
func gaussianCases(cfg aggregate.Config, _ privacy.Mechanism, dim int) ([]Case, error) {
	if dim < 2 {
		return nil, fmt.Errorf("the Gaussian cases need dimension ≥ 2, got %d", dim)
	}
	R := cfg.ClipNorm
	base := repeat(cfg.F, axis(dim, 1, R))
	return []Case{{
		Name:        "add-one",
		Description: fmt.Sprintf("D = %d gradients R·e2 (all trimmed when F = %d), D′ = D + R·e1: the release moves by the claimed sensitivity R", cfg.F, cfg.F),
		D:           batch(base, dim, R), DPrime: batch(plusOne(base, axis(dim, 0, R)), dim, R),
	}}, nil
}

// ptrCases follows the sensitivity analysis of PTR-TSUM (Wang et al.,
// NeurIPS 2022, Theorem 5.1; aggregate.PTRTSum): Δ(S) = min{r : LS^(r) > τ}
// with LS^(r) the (m−F+1+r)-th smallest norm, the test passes when
// Δ + Lap(b) > B = b·log(1/(2δ₀)).
//
//   - ptr-delta-zero: D = F gradients ±R·e2 (alternating), so Δ = 0 on both
//     sides and the test fails except with probability δ₀; D′ adds R·e1.
//     A release that trimmed here would move by R under noise στ.
//   - ptr-test-boundary: Δ(D) = k = min(F, ⌈B⌉) and Δ(D′) = k − 1 — the
//     test is about to pass — with k+1 gradients τ·e1 and F−k gradients
//     R·e1; D′ adds R·e1. TSUM_F moves by τ, SUM by R, and the branch
//     probabilities differ by e^{1/b}.
//   - ptr-ls-at-tau: D = F+1 gradients τ·e1 (Δ = F, TSUM's local
//     sensitivity exactly τ, the test passes w.h.p. when F − 1 ≫ B); D′ adds
//     R·e1, which TSUM_F trims, so the passed release moves by τ under
//     noise στ.
func ptrCases(cfg aggregate.Config, _ privacy.Mechanism, dim int) ([]Case, error) {
	if dim < 2 {
		return nil, fmt.Errorf("the PTR cases need dimension ≥ 2, got %d", dim)
	}
	R, tau, F := cfg.ClipNorm, cfg.Tau, cfg.F
	thr := cfg.B * math.Log(1/(2*cfg.Delta0))
	var zero [][]float64
	for i := 0; i < F; i++ {
		s := 1.0
		if i%2 == 1 {
			s = -1
		}
		zero = append(zero, axis(dim, 1, s*R))
	}
	big := axis(dim, 0, R)
	cases := []Case{{
		Name:        "ptr-delta-zero",
		Description: fmt.Sprintf("Δ = 0 on both sides (F = %d gradients ±R·e2; D′ adds R·e1): the test fails but with probability δ₀", F),
		D:           batch(zero, dim, R), DPrime: batch(plusOne(zero, big), dim, R),
	}}
	if F == 0 {
		return cases, nil // TSUM_0 = SUM: Δ is always 0
	}
	k := min(F, int(math.Ceil(thr)))
	rows := append(repeat(k+1, axis(dim, 0, tau)), repeat(F-k, big)...)
	cases = append(cases, Case{
		Name:        "ptr-test-boundary",
		Description: fmt.Sprintf("Δ(D) = %d, Δ(D′) = %d around the threshold B = %.3g (k+1 gradients τ·e1, F−k gradients R·e1; D′ adds R·e1)", k, k-1, thr),
		D:           batch(rows, dim, R), DPrime: batch(plusOne(rows, big), dim, R),
	})
	tauRows := repeat(F+1, axis(dim, 0, tau))
	cases = append(cases, Case{
		Name:        "ptr-ls-at-tau",
		Description: fmt.Sprintf("Δ(D) = F = %d with TSUM's local sensitivity exactly τ (F+1 gradients τ·e1; D′ adds R·e1, which is trimmed)", F),
		D:           batch(tauRows, dim, R), DPrime: batch(plusOne(tauRows, big), dim, R),
	})
	return cases, nil
}

// rgmCases follows Definition 2 of the RGM paper (Hendrikx, Mangold &
// Bellet, AISTATS 2024): neighbours may differ by ‖S(x) − S(y)‖² ≤
// η²‖S(x)‖² + R_rel². rgm-zero-sum: S(D) = 0, D′ adds R_rel·e1 (the noise
// is smallest at S = 0). rgm-relative: S(D) = (R_rel/η)·e1 and D′ adds
// √2·R_rel·e1, the largest change the relative bound allows there.
func rgmCases(_ aggregate.Config, mech privacy.Mechanism, dim int) ([]Case, error) {
	m, ok := mech.(privacy.RGM)
	if !ok {
		return nil, fmt.Errorf("rgm cases need a privacy.RGM mechanism, got %T", mech)
	}
	if m.RRel == 0 {
		return nil, fmt.Errorf("rgm cases need R_rel > 0")
	}
	a := m.RRel / m.Eta
	d := [][]float64{axis(dim, 0, a)}
	return []Case{
		{
			Name:        "rgm-zero-sum",
			Description: "S(D) = 0, D′ adds R_rel·e1",
			D:           batch(nil, dim, 0), DPrime: batch([][]float64{axis(dim, 0, m.RRel)}, dim, 0),
		},
		{
			Name:        "rgm-relative",
			Description: "S(D) = (R_rel/η)·e1, D′ adds √2·R_rel·e1 (‖ΔS‖² = η²‖S(D)‖² + R_rel²)",
			D:           batch(d, dim, 0), DPrime: batch(plusOne(d, axis(dim, 0, math.Sqrt2*m.RRel)), dim, 0),
		},
	}, nil
}
