package privacyfigs

import (
	"fmt"

	"github.com/privtrain/privtrain/privacy"
)

// Columns of the PTR accounting figure (not in the paper).
const (
	colPLD           = "PLD (envelope pair, docs/ptr-pld.md)"
	colPLDReported   = "PLD accountant as reported: min(PLD, RDP)"
	colPLDInterval   = "PLD discretization interval"
	colPLDOptimistic = "PLD optimistic estimate"
)

// figurePTRPLD is ε at δ = s.Delta after k steps of Poisson-subsampled PTR
// (rate s.PLDQ) on three accountants: RDP with Theorem 4.4 where proven and
// the ZW19 black-box bound elsewhere (privacy.SubsampleAuto), RDP with the
// black-box bound only, both converted by Balle et al. (2020); and the PTR
// privacy loss distribution of docs/ptr-pld.md composed by FFT
// (privacy.PLDAccountant, certified connect-the-dots upper bound). The PLD
// column is the PLD's own bound; the accountant reports the smaller of it and
// the RDP bound of the same history, written to the CSV as a further column.
// The figure is not in the paper: it shows what the default job gains from
// accounting PTR by its PLD.
func figurePTRPLD(s Settings, sigma1 float64, name string) (*table, error) {
	p := privacy.PTR{Sigma1: sigma1, Tau: s.PLDTau, B: s.B, Delta0: s.PLDDelta0}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("privacy figures: %w", err)
	}
	rdp, err := newRDPCurves(p, s.PLDQ)
	if err != nil {
		return nil, err
	}
	pld, err := privacy.NewPLDAccountant(s.PLDInterval)
	if err != nil {
		return nil, fmt.Errorf("privacy figures: %w", err)
	}
	t := &table{
		name: name,
		title: fmt.Sprintf("PTR on RDP and on its PLD: q = %.3g, σ₁ = %g, τ = %g, δ₀ = %s, δ = %s",
			s.PLDQ, sigma1, s.PLDTau, sci(s.PLDDelta0), sci(s.Delta)),
		comment: fmt.Sprintf("not in the paper: epsilon at delta=%g after k steps of Poisson-subsampled PTR; q=%g b=%g sigma1=%g tau=%g (sigma2=%g) delta0=%g; "+
			"white-box = privacy.SubsampleAuto (Theorem 4.4 where its conditions hold, ZW19 black-box elsewhere), black-box = ZW19 Theorem 6 on Theorem 4.3, "+
			"both on Opacus' default orders converted by BBG20; PLD = the PTR privacy loss distribution of docs/ptr-pld.md "+
			"(envelope pair, Poisson subsampling per direction) composed by FFT, certified upper bound at discretization interval %g; "+
			"the PLD accountant reports min(PLD, RDP)",
			s.Delta, s.PLDQ, s.B, sigma1, s.PLDTau, p.Sigma2(), s.PLDDelta0, pld.Interval()),
		xLabel: "steps k",
		yLabel: fmt.Sprintf("ε at δ = %s", sci(s.Delta)),
		logX:   true,
		logY:   true,
		columns: []string{"steps", colCompWhite, colCompBlack, colPLD,
			colPLDReported, colPLDOptimistic, colPLDInterval},
		csvOnly: map[string]bool{colPLDReported: true, colPLDOptimistic: true, colPLDInterval: true},
	}
	done := 0
	for _, k := range s.PLDSteps {
		if k <= done {
			return nil, fmt.Errorf("privacy figures: step counts must increase from 1, got %v", s.PLDSteps)
		}
		w, bb, err := rdp.compose(k-done, s.Delta)
		if err != nil {
			return nil, err
		}
		// The accountant the runner uses for TSGD+PTR: white-box RDP shadow.
		if err := pld.Compose(rdp.mWhite, k-done); err != nil {
			return nil, fmt.Errorf("privacy figures: %w", err)
		}
		done = k
		composed, err := pld.Composed()
		if err != nil {
			return nil, fmt.Errorf("privacy figures: %w", err)
		}
		own, err := composed.Epsilon(s.Delta)
		if err != nil {
			return nil, fmt.Errorf("privacy figures: %w", err)
		}
		rep, err := pld.EpsilonFor(s.Delta)
		if err != nil {
			return nil, fmt.Errorf("privacy figures: %w", err)
		}
		t.rows = append(t.rows, []float64{float64(k), w.Epsilon, bb.Epsilon, own.Epsilon,
			rep.Epsilon, own.Optimistic, own.Interval})
	}
	return t, nil
}
