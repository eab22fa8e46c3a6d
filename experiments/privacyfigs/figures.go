package privacyfigs

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/privtrain/privtrain/privacy"
)

// Settings are the parameters of the figures. Defaults (DefaultSettings)
// follow the paper: δ = 1e-5, b = 1, δ₀ = 1e-8 where the caption says so.
//
// The paper's figures are images without stated parameters beyond their
// captions; the parameters used here are listed in Settings and written in
// each CSV header, and any setting chosen to stay inside a theorem's
// conditions is documented there.
//
// Figures 3 and 5:
//
// The paper states only δ = 1e-5 and δ₀ = 1e-8. Figure 3 uses Figure 2's
// setting q = 0.01, b = 1, τ = 0.5 with σ₁ = 16 (σ₂ = 8 ≥ 4), for which
// Theorem 4.4 is proven for α ≤ 25 on Opacus' default orders. Figure 5 has
// one panel per τ ∈ {2/3, 1/3, 0.1} (appendix B.5), with σ₁ = 16, 16 and 40
// (σ₂ = 10.7, 5.3 and 4): at σ₁ = 16, τ = 0.1 would give σ₂ = 1.6 and
// Theorem 4.4 would be proven nowhere. Three curves:
//
//   - white-box: PoissonSubsampled with SubsampleAuto in an Accountant,
//     i.e. Theorem 4.4 at the orders where its conditions hold and the ZW19
//     black-box bound above them (the accountant refuses unproven values);
//   - black-box: ZW19 Theorem 6 applied to Theorem 4.3's curve;
//   - direct: Theorem 4.2 per step (privacy.PTRDirect) with a Gaussian δ_N,
//     amplified by Poisson subsampling for (ε, δ)-DP (amplifyPoisson: Li,
//     Qardaji & Su 2012; Balle, Barthe & Gaboardi 2018, Theorem 8), then
//     privacy.StrongComposition over k steps with slack δ'. The total δ
//     1 − (1 − q(δ₀ + δ_N))^k (1 − δ') is set to 1e-5; δ' = δ·i/100, i = 1…99,
//     and the smallest ε is kept (the chosen split is in the CSV).
//
// Both RDP curves are converted with Balle et al. (2020). The white-box curve
// equals the black-box one at small k: there the optimal order is above the
// range where Theorem 4.4 is proven, so the accountant uses ZW19 there too.
// It is strictly below from k ≈ 63 in Figure 3 (k ≈ 1000 for τ = 0.1). The
// direct analysis is better only for the first few iterations (k ≤ 5 in
// Figure 3, ≤ 7 for τ = 0.1), as the paper says, and several times worse
// later (16.2 vs 4.45 at k = 10⁴ in Figure 3).
//
// Figure 1's caption and the analytic Gaussian mechanism:
//
// The caption says the direct analysis beats the RDP conversion when δ₀ ≪ δ
// and loses when δ₀ is close to δ. With Theorem 4.2 as written (classic
// Gaussian bound √(2 log(1.25/δ))/σ₁) the RDP-converted curve is below the
// direct one for every δ₀ and σ₁ plotted (e.g. σ₁ = 10: 1.358 vs 1.484 at
// δ₀ = 1e-8). With the same proof but the Gaussian part's ε from the analytic
// Gaussian mechanism (Balle & Wang 2018, exact), the caption's crossing
// appears: at σ₁ = 10 the direct bound is 1.341 (δ₀ = 1e-8) and 1.343 (1e-6),
// below RDP's 1.358, about equal at δ₀ = 5e-6 (1.358) and above at 9e-6
// (1.397). Figures 1 and 4 therefore show that variant as an extra, labelled
// curve ("not in paper"); the theorem as written stays the "direct" curve.
//
// Figure 4 at small τ:
//
// Appendix B.5 says Theorem 4.3 again gives tighter bounds for τ ∈ {2/3,
// 1/3, 0.1}. The numbers agree for τ = 2/3 (identical to τ = 1/2) and for
// τ = 1/3 (where the RDP curve starts to depend on δ₀ at small σ₁), but not
// for τ = 0.1: σ₂ = 0.1σ₁ makes the first term of Theorem 4.3 dominate, and
// the RDP-converted ε is above even the classic direct bound at every σ₁ and
// δ₀ of the grid (σ₁ = 10, δ₀ = 1e-8: 2.256 vs 1.484), and depends on δ₀,
// unlike the caption's "constant across different δ₀".
type Settings struct {
	Delta float64 // target δ of the (ε, δ) figures (1, 3, 4, 5)
	B     float64 // Laplace scale of the test

	// Figures 1 and 4: ε of one PTR run against σ₁.
	Fig1Sigma1  []float64 // x axis
	Fig1Delta0  []float64 // one RDP-converted and one direct curve per δ₀ (< Delta)
	Fig1Tau     float64   // τ of Figure 1
	Fig4Taus    []float64 // Figure 4: one panel per τ (appendix B.5: 2/3, 1/3, 0.1)
	Fig1MaxOrds float64   // the caption's "optimal α ∈ [1, 200]"

	// Figure 2: RDP of Poisson-subsampled PTR against α.
	Fig2Q      float64
	Fig2Tau    float64
	Fig2Delta0 float64
	// Fig2Sigma1 lists one panel per σ₁. σ₁ = 16 (σ₂ = 8) satisfies Theorem
	// 4.4's conditions up to α = 25; σ₁ = 4 (σ₂ = 2 < 4) is outside them,
	// so its white-box curve is drawn only as "unproven".
	Fig2Sigma1 []float64
	Fig2MaxOrd int

	// Figure 3: ε at δ = Delta after k compositions of Poisson-subsampled
	// PTR, k on Fig3Steps. The paper states only δ₀ = 1e-8; q, σ₁, τ (and b)
	// are Figure 2's setting, with σ₁ = 16 so that σ₂ = τσ₁ = 8 ≥ 4 and
	// Theorem 4.4 is proven (for α ≤ 25 on the default orders).
	Fig3Q      float64
	Fig3Delta0 float64
	Fig3Sigma1 float64
	Fig3Tau    float64
	Fig3Steps  []int
	// Fig3Splits is the number of slacks δ' = δ·i/(Fig3Splits+1) tried by
	// the direct curve's strong composition (the best is kept).
	Fig3Splits int
	// Figure 5 (appendix B.5): one panel per τ, with σ₁ = Fig5Sigma1[i].
	// σ₁ = 16 for τ = 2/3 and 1/3 (σ₂ = 10.7 and 5.3); τ = 0.1 needs σ₁ = 40
	// for σ₂ = 4, else Theorem 4.4 is nowhere proven and the white-box curve
	// would be the black-box one.
	Fig5Taus   []float64
	Fig5Sigma1 []float64

	// PTR accounted by its PLD (not in the paper; figurePTRPLD): ε at δ =
	// Delta after k steps, k on PLDSteps, one panel per PLDSigma1. The
	// defaults are the default training job's PTR step (σ₁ = 1.1, τ = R/2,
	// b = 1, δ₀ = 1e-8, q = 256/60,000) and σ₁ = 8, where Theorem 4.4 holds.
	PLDSigma1   []float64
	PLDTau      float64
	PLDDelta0   float64
	PLDQ        float64
	PLDSteps    []int
	PLDInterval float64 // discretization interval (0: privacy.DefaultPLDInterval)
}

// DefaultSettings returns the parameters used by Generate.
func DefaultSettings() Settings {
	var s1 []float64
	for x := 6.0; x <= 20.0001; x += 0.5 {
		s1 = append(s1, x)
	}
	return Settings{
		Delta:       1e-5,
		B:           1,
		Fig1Sigma1:  s1,
		Fig1Delta0:  []float64{1e-8, 1e-6, 5e-6, 9e-6},
		Fig1Tau:     0.5,
		Fig4Taus:    []float64{2.0 / 3, 1.0 / 3, 0.1},
		Fig1MaxOrds: 200,
		Fig2Q:       0.01,
		Fig2Tau:     0.5,
		Fig2Delta0:  1e-8,
		Fig2Sigma1:  []float64{16, 4},
		Fig2MaxOrd:  64,
		Fig3Q:       0.01,
		Fig3Delta0:  1e-8,
		Fig3Sigma1:  16,
		Fig3Tau:     0.5,
		Fig3Steps:   stepsGrid(10000, 10),
		Fig3Splits:  99,
		Fig5Taus:    []float64{2.0 / 3, 1.0 / 3, 0.1},
		Fig5Sigma1:  []float64{16, 16, 40},
		PLDSigma1:   []float64{1.1, 8},
		PLDTau:      0.5,
		PLDDelta0:   1e-8,
		PLDQ:        256.0 / 60000,
		PLDSteps:    stepsGrid(20000, 5),
	}
}

// fig1Orders is the order grid for "optimal α ∈ (1, max]": 1.01…10 by 0.01,
// then 10.5…max by 0.5.
func fig1Orders(max float64) []float64 {
	var o []float64
	for i := 1; i <= 900; i++ {
		o = append(o, 1+float64(i)/100)
	}
	for a := 10.5; a <= max+1e-9; a += 0.5 {
		o = append(o, a)
	}
	return o
}

// Generate writes the figures as PNG, SVG, PDF and CSV files into outDir (created if
// needed) and returns the paths written.
func Generate(outDir string) ([]string, error) {
	return GenerateWith(outDir, DefaultSettings())
}

// GenerateWith is Generate with explicit settings.
func GenerateWith(outDir string, s Settings) ([]string, error) {
	if outDir == "" {
		return nil, errors.New("privacy figures: empty output directory")
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return nil, fmt.Errorf("privacy figures: %w", err)
	}
	var tables []*table
	add := func(t *table, err error) error {
		if err == nil {
			tables = append(tables, t)
		}
		return err
	}
	if err := add(figure1(s, s.Fig1Tau, "fig1", "Figure 1")); err != nil {
		return nil, err
	}
	for _, sig := range s.Fig2Sigma1 {
		if err := add(figure2(s, sig)); err != nil {
			return nil, err
		}
	}
	if err := add(figure3(s, s.Fig3Sigma1, s.Fig3Tau, "fig3", "Figure 3")); err != nil {
		return nil, err
	}
	for i, tau := range s.Fig4Taus {
		if err := add(figure1(s, tau, fmt.Sprintf("fig4_%c", 'a'+i), "Figure 4")); err != nil {
			return nil, err
		}
	}
	if len(s.Fig5Sigma1) != len(s.Fig5Taus) {
		return nil, fmt.Errorf("privacy figures: %d σ₁ for %d τ of Figure 5", len(s.Fig5Sigma1), len(s.Fig5Taus))
	}
	for i, tau := range s.Fig5Taus {
		if err := add(figure3(s, s.Fig5Sigma1[i], tau, fmt.Sprintf("fig5_%c", 'a'+i), "Figure 5")); err != nil {
			return nil, err
		}
	}
	for _, sig := range s.PLDSigma1 {
		if err := add(figurePTRPLD(s, sig, fmt.Sprintf("ptr_pld_sigma1_%g", sig))); err != nil {
			return nil, err
		}
	}
	var paths []string
	for _, t := range tables {
		c, err := t.writeCSV(outDir)
		if err != nil {
			return paths, err
		}
		p, err := t.writePlots(outDir)
		if err != nil {
			return paths, err
		}
		paths = append(append(paths, c), p...)
	}
	r, err := writeReadme(outDir, tables)
	if err != nil {
		return paths, err
	}
	return append(paths, r), nil
}

// sci formats a small probability as 1e-8 (no exponent padding).
func sci(v float64) string {
	m, e, ok := strings.Cut(strconv.FormatFloat(v, 'g', -1, 64), "e")
	if !ok {
		return m
	}
	n, _ := strconv.Atoi(e)
	return fmt.Sprintf("%se%d", m, n)
}

// rdpColumn and directColumn name Figure 1's curves.
func rdpColumn(d0 float64) string    { return fmt.Sprintf("RDP(Thm4.3)+BBG delta0=%g", d0) }
func directColumn(d0 float64) string { return fmt.Sprintf("direct(Thm4.2) delta0=%g", d0) }
func analyticColumn(d0 float64) string {
	return fmt.Sprintf("direct(Thm4.2 w/ analytic Gaussian, not in paper) delta0=%g", d0)
}

// figure1 is ε(δ) of one PTR run against σ₁ for several δ₀: Theorem 4.3's
// RDP curve converted with Balle et al. (2020) minimised over α ∈ (1, 200],
// and Theorem 4.2 with the total δ split as δ₀ + (δ − δ₀). Direct points
// outside Theorem 4.2's conditions (Gaussian part ε_N ≥ 1) are NaN. A third
// curve per δ₀ is Theorem 4.2's argument with the analytic Gaussian
// mechanism (ptrDirectAnalytic; not in the paper, labelled so).
func figure1(s Settings, tau float64, name, label string) (*table, error) {
	orders := fig1Orders(s.Fig1MaxOrds)
	t := &table{
		name:    name,
		title:   fmt.Sprintf("%s: PTR, δ = %s, b = %g, τ = %.3g", label, sci(s.Delta), s.B, tau),
		comment: fmt.Sprintf("%s: epsilon of one PTR run at delta=%g vs sigma1; b=%g tau=%g; RDP curve (Theorem 4.3) converted by BBG20 minimised over alpha in (1, %g]; direct = Theorem 4.2 with delta = delta0 + (delta - delta0), epsilon_Lap = 1/b; empty = outside Theorem 4.2's conditions; 'analytic Gaussian' = extra curve, not in the paper: Theorem 4.2's proof with the Gaussian part's epsilon from Balle & Wang 2018 (exact) instead of sqrt(2 log(1.25/delta))/sigma1", label, s.Delta, s.B, tau, s.Fig1MaxOrds),
		xLabel:  "σ₁ (noise-to-sensitivity ratio)",
		yLabel:  "ε",
		columns: []string{"sigma1"},
		styles:  map[string]lineStyle{},
		// Curves decrease in σ₁: the top right corner is free.
		legendRight: true,
		height:      6,
	}
	for _, d0 := range s.Fig1Delta0 {
		if !(d0 < s.Delta) {
			return nil, fmt.Errorf("privacy figures: δ₀ = %v must be below δ = %v", d0, s.Delta)
		}
		t.columns = append(t.columns, rdpColumn(d0))
	}
	// One color per δ₀; solid = RDP, dashed = direct, dotted = analytic.
	// The legend says so in 4 + 3 lines instead of 12 combinations.
	for i, d0 := range s.Fig1Delta0 {
		t.key = append(t.key, keyEntry{text: "δ₀ = " + sci(d0), style: lineStyle{color: i}})
	}
	t.key = append(t.key,
		keyEntry{text: "RDP (Thm 4.3) + BBG conversion", style: lineStyle{dashes: 0}, black: true},
		keyEntry{text: "direct (Thm 4.2)", style: lineStyle{dashes: 1}, black: true},
		keyEntry{text: "direct, analytic Gaussian (not in paper)", style: lineStyle{dashes: 2}, black: true})
	for i, d0 := range s.Fig1Delta0 {
		t.columns = append(t.columns, directColumn(d0))
		t.styles[rdpColumn(d0)] = lineStyle{color: i, dashes: 0}
		t.styles[directColumn(d0)] = lineStyle{color: i, dashes: 1}
		t.styles[analyticColumn(d0)] = lineStyle{color: i, dashes: 2}
	}
	for _, d0 := range s.Fig1Delta0 {
		t.columns = append(t.columns, analyticColumn(d0))
	}
	rdp := make([]float64, len(orders))
	for _, s1 := range s.Fig1Sigma1 {
		row := []float64{s1}
		for _, d0 := range s.Fig1Delta0 {
			p := privacy.PTR{Sigma1: s1, Tau: tau, B: s.B, Delta0: d0}
			if err := p.Validate(); err != nil {
				return nil, fmt.Errorf("privacy figures: %w", err)
			}
			for i, a := range orders {
				v, err := p.RDP(a)
				if err != nil {
					return nil, fmt.Errorf("privacy figures: %w", err)
				}
				rdp[i] = v.Epsilon
			}
			eps, _, err := privacy.EpsilonFromRDP(orders, rdp, s.Delta, privacy.ConversionBBG)
			if err != nil {
				return nil, fmt.Errorf("privacy figures: %w", err)
			}
			row = append(row, eps)
		}
		for _, d0 := range s.Fig1Delta0 {
			eps, _, err := privacy.PTRDirect(s1, s.B, d0, s.Delta-d0)
			if err != nil {
				eps = math.NaN()
			}
			row = append(row, eps)
		}
		for _, d0 := range s.Fig1Delta0 {
			eps, err := ptrDirectAnalytic(s1, s.B, d0, s.Delta-d0)
			if err != nil {
				return nil, fmt.Errorf("privacy figures: %w", err)
			}
			row = append(row, eps)
		}
		t.rows = append(t.rows, row)
	}
	return t, nil
}

// Figure 2's column names.
const (
	colWhite    = "white-box (Thm 4.4)"
	colUnproven = "white-box outside Thm 4.4 conditions (unproven)"
	colBlack    = "black-box (ZW19 Thm 6 on Thm 4.3)"
	colLower    = "lower bound (ZW19 on Thm 4.3)"
)

// figure2 is the RDP of PTR Poisson-subsampled at rate q against integer α:
// Theorem 4.4 where proven (and, separately, where unproven), ZW19's
// black-box upper bound and ZW19's lower bound, both on Theorem 4.3's curve.
func figure2(s Settings, sigma1 float64) (*table, error) {
	p := privacy.PTR{Sigma1: sigma1, Tau: s.Fig2Tau, B: s.B, Delta0: s.Fig2Delta0}
	t := &table{
		name:    fmt.Sprintf("fig2_sigma1_%g", sigma1),
		title:   fmt.Sprintf("Figure 2: subsampled PTR, q = %g, σ₁ = %g, τ = %g", s.Fig2Q, sigma1, s.Fig2Tau),
		comment: fmt.Sprintf("Figure 2: RDP epsilon(alpha) of Poisson-subsampled PTR; q=%g b=%g sigma1=%g tau=%g (sigma2=%g) delta0=%g; white-box only where Theorem 4.4's conditions hold, its unproven continuation in a separate column", s.Fig2Q, s.B, sigma1, s.Fig2Tau, p.Sigma2(), s.Fig2Delta0),
		xLabel:  "order α",
		yLabel:  "RDP ε(α)",
		logY:    true,
		columns: []string{"alpha", colWhite, colUnproven, colBlack, colLower},
	}
	for n := 2; n <= s.Fig2MaxOrd; n++ {
		a := float64(n)
		wb, err := privacy.PoissonSubsampled{Base: p, Q: s.Fig2Q, Bound: privacy.SubsampleWhiteBox, AllowUnproven: true}.RDP(a)
		if err != nil {
			return nil, fmt.Errorf("privacy figures: %w", err)
		}
		bb, err := privacy.PoissonSubsampled{Base: p, Q: s.Fig2Q, Bound: privacy.SubsampleBlackBox}.RDP(a)
		if err != nil {
			return nil, fmt.Errorf("privacy figures: %w", err)
		}
		lo, err := privacy.PoissonSubsampled{Base: p, Q: s.Fig2Q, Bound: privacy.SubsampleLower}.RDP(a)
		if err != nil {
			return nil, fmt.Errorf("privacy figures: %w", err)
		}
		proven, unproven := wb.Epsilon, math.NaN()
		if !wb.Valid {
			proven, unproven = math.NaN(), wb.Epsilon
		}
		t.rows = append(t.rows, []float64{a, proven, unproven, bb.Epsilon, lo.Epsilon})
	}
	return t, nil
}
