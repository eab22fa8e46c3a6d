package privacyfigs

import (
	"errors"
	"fmt"
	"math"

	"github.com/privtrain/privtrain/privacy"
)

// Figures 3 and 5's plotted curves and CSV-only columns.
const (
	colCompWhite  = "white-box (Thm 4.4 where proven) + RDP accountant"
	colCompBlack  = "black-box (ZW19 on Thm 4.3) + RDP accountant"
	colCompDirect = "direct (Thm 4.2) + subsampling + strong composition"

	colCompWhiteOrder = "white-box optimal alpha"
	colCompBlackOrder = "black-box optimal alpha"
	colDirectStepEps  = "direct per-step epsilon after subsampling"
	colDirectStepDel  = "direct per-step delta after subsampling"
	colDirectSlack    = "direct strong-composition slack delta'"
	colDirectDelta    = "direct total delta"
)

// amplifyPoisson is privacy amplification by Poisson subsampling for
// (ε, δ)-DP: if M is (ε, δ)-DP, running M on a Poisson subsample with rate q
// is (log(1 + q(e^ε − 1)), qδ)-DP with respect to adding or removing one
// record (Li, Qardaji & Su 2012, Theorem 1; Balle, Barthe & Gaboardi 2018,
// "Privacy Amplification by Subsampling: Tight Analyses via Couplings and
// Divergences", Theorem 8). Valid for every ε ≥ 0, δ ∈ [0, 1], q ∈ [0, 1].
func amplifyPoisson(eps, delta, q float64) (float64, float64) {
	return math.Log1p(q * math.Expm1(eps)), q * delta
}

// directStep is one candidate split of the direct curve's δ budget.
type directStep struct {
	eps        float64 // total ε after k steps
	stepEps    float64 // per-step ε after subsampling
	stepDelta  float64 // per-step δ after subsampling, q(δ₀ + δ_N)
	slack      float64 // strong composition's δ'
	deltaTotal float64 // 1 − (1 − stepDelta)^k (1 − slack)
}

// directComposedStep is "direct analysis + strong composition" for a given
// slack δ' of the strong composition: k steps of Poisson-subsampled PTR,
// each (ε_Lap + ε_N(δ_N), δ₀ + δ_N)-DP by Theorem 4.2 (privacy.PTRDirect),
// amplified by amplifyPoisson, composed by privacy.StrongComposition. The
// per-step δ is the largest that keeps the total at delta:
// (1 − q(δ₀ + δ_N))^k (1 − δ') = 1 − delta.
func directComposedStep(sigma1, b, delta0, q, delta float64, k int, slack float64) (directStep, error) {
	if !(slack > 0 && slack < delta) {
		return directStep{}, fmt.Errorf("direct composition: slack δ' = %v must be in (0, δ = %v)", slack, delta)
	}
	stepDelta := -math.Expm1((math.Log1p(-delta) - math.Log1p(-slack)) / float64(k))
	deltaN := stepDelta/q - delta0
	if !(deltaN > 0) {
		return directStep{}, fmt.Errorf("direct composition: %d steps with q·δ₀ = %v and slack %v exceed δ = %v", k, q*delta0, slack, delta)
	}
	eps1, d1, err := privacy.PTRDirect(sigma1, b, delta0, deltaN)
	if err != nil {
		return directStep{}, err
	}
	stepEps, stepDel := amplifyPoisson(eps1, d1, q)
	epsK, deltaK, err := privacy.StrongComposition(stepEps, stepDel, k, slack)
	if err != nil {
		return directStep{}, err
	}
	return directStep{eps: epsK, stepEps: stepEps, stepDelta: stepDel, slack: slack, deltaTotal: deltaK}, nil
}

// directComposed minimizes directComposedStep over the slack δ' = delta·i/(splits+1),
// i = 1…splits, keeping only splits whose total δ is at most delta (to
// rounding, a relative 1e-9).
func directComposed(sigma1, b, delta0, q, delta float64, k, splits int) (directStep, error) {
	best := directStep{eps: math.Inf(1)}
	var errs []error
	for i := 1; i <= splits; i++ {
		d, err := directComposedStep(sigma1, b, delta0, q, delta, k, delta*float64(i)/float64(splits+1))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if d.eps < best.eps && d.deltaTotal <= delta*(1+1e-9) {
			best = d
		}
	}
	if math.IsInf(best.eps, 1) {
		return best, fmt.Errorf("direct composition over %d steps: no valid split of δ = %v: %w", k, delta, errors.Join(errs...))
	}
	return best, nil
}

// stepsGrid returns the distinct values round(10^(i/perDecade)), i = 0, 1, …,
// up to max: a log-spaced grid of iteration counts starting at 1.
func stepsGrid(max, perDecade int) []int {
	var out []int
	for i := 0; ; i++ {
		k := int(math.Round(math.Pow(10, float64(i)/float64(perDecade))))
		if k > max {
			return out
		}
		if len(out) == 0 || k != out[len(out)-1] {
			out = append(out, k)
		}
	}
}

// maxProvenOrder is the largest order of the grid at which Theorem 4.4 is
// proven for p subsampled at rate q (0 if none).
func maxProvenOrder(orders []float64, q float64, p privacy.PTR) float64 {
	m := 0.0
	for _, a := range orders {
		if privacy.WhiteBoxConditions(q, p, a) == nil && a > m {
			m = a
		}
	}
	return m
}

// figure3 is ε at δ = s.Delta after k compositions of PTR Poisson-subsampled
// at rate s.Fig3Q, for k on s.Fig3Steps: the white-box bound (Theorem 4.4
// where proven, the ZW19 black-box bound elsewhere: privacy.SubsampleAuto)
// and the black-box bound, each composed in a privacy.RDPAccountant on
// privacy.DefaultOrders and converted by Balle et al. (2020); and the direct
// analysis (Theorem 4.2) amplified by subsampling and composed by strong
// composition (directComposed).
func figure3(s Settings, sigma1, tau float64, name, label string) (*table, error) {
	p := privacy.PTR{Sigma1: sigma1, Tau: tau, B: s.B, Delta0: s.Fig3Delta0}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("privacy figures: %w", err)
	}
	orders := privacy.DefaultOrders()
	rdp, err := newRDPCurves(p, s.Fig3Q)
	if err != nil {
		return nil, err
	}
	t := &table{
		name:  name,
		title: fmt.Sprintf("%s: PTR composed, q = %g, σ₁ = %g, τ = %.3g, δ₀ = %s, δ = %s", label, s.Fig3Q, sigma1, tau, sci(s.Fig3Delta0), sci(s.Delta)),
		comment: fmt.Sprintf("%s: epsilon at delta=%g after k iterations of Poisson-subsampled PTR; q=%g b=%g sigma1=%g tau=%g (sigma2=%g) delta0=%g "+
			"(q, b, sigma1 and tau are not stated by the paper: chosen so that Theorem 4.4 is proven, here for alpha <= %g on the grid); "+
			"white-box = privacy.SubsampleAuto (Theorem 4.4 where its conditions hold, ZW19 black-box above), black-box = ZW19 Theorem 6 on Theorem 4.3, "+
			"both composed on Opacus' default orders and converted by BBG20; direct = Theorem 4.2 per step with delta_N, amplified by Poisson subsampling "+
			"(eps' = log(1+q(e^eps-1)), delta' = q(delta0+delta_N); Li-Qardaji-Su 2012, Balle-Barthe-Gaboardi 2018 Thm 8), composed by KOV15 strong composition "+
			"with slack delta'' = delta*i/%d (i=1..%d, the best kept) and (1-q(delta0+delta_N))^k (1-delta'') = 1-delta",
			label, s.Delta, s.Fig3Q, s.B, sigma1, tau, p.Sigma2(), s.Fig3Delta0, maxProvenOrder(orders, s.Fig3Q, p), s.Fig3Splits+1, s.Fig3Splits),
		xLabel: "iterations k",
		yLabel: fmt.Sprintf("ε at δ = %s", sci(s.Delta)),
		logX:   true,
		logY:   true,
		columns: []string{"iterations", colCompWhite, colCompBlack, colCompDirect,
			colCompWhiteOrder, colCompBlackOrder, colDirectStepEps, colDirectStepDel, colDirectSlack, colDirectDelta},
		csvOnly: map[string]bool{colCompWhiteOrder: true, colCompBlackOrder: true, colDirectStepEps: true,
			colDirectStepDel: true, colDirectSlack: true, colDirectDelta: true},
	}
	done := 0
	for _, k := range s.Fig3Steps {
		if k <= done {
			return nil, fmt.Errorf("privacy figures: iteration counts must increase from 1, got %v", s.Fig3Steps)
		}
		w, bb, err := rdp.compose(k-done, s.Delta)
		if err != nil {
			return nil, err
		}
		done = k
		d, err := directComposed(sigma1, s.B, s.Fig3Delta0, s.Fig3Q, s.Delta, k, s.Fig3Splits)
		if err != nil {
			// Not plotted: the direct analysis has no valid δ split at this k.
			d = directStep{eps: math.NaN(), stepEps: math.NaN(), stepDelta: math.NaN(), slack: math.NaN(), deltaTotal: math.NaN()}
		}
		t.rows = append(t.rows, []float64{float64(k), w.Epsilon, bb.Epsilon, d.eps,
			w.Order, bb.Order, d.stepEps, d.stepDelta, d.slack, d.deltaTotal})
	}
	return t, nil
}

// rdpCurves composes PTR, Poisson-subsampled at one rate, in two RDP
// accountants on privacy.DefaultOrders: white-box where proven
// (privacy.SubsampleAuto: Theorem 4.4 where its conditions hold, ZW19
// above) and black-box only (ZW19 Theorem 6 on Theorem 4.3).
type rdpCurves struct {
	white, black   *privacy.RDPAccountant
	mWhite, mBlack privacy.PoissonSubsampled
}

func newRDPCurves(p privacy.PTR, q float64) (*rdpCurves, error) {
	white, err := privacy.NewRDPAccountant(privacy.DefaultOrders())
	if err != nil {
		return nil, fmt.Errorf("privacy figures: %w", err)
	}
	return &rdpCurves{white: white, black: white.Clone(),
		mWhite: privacy.PoissonSubsampled{Base: p, Q: q, Bound: privacy.SubsampleAuto},
		mBlack: privacy.PoissonSubsampled{Base: p, Q: q, Bound: privacy.SubsampleBlackBox}}, nil
}

// compose adds n steps to both curves and returns their ε at delta,
// converted by Balle et al. (2020).
func (r *rdpCurves) compose(n int, delta float64) (white, black privacy.EpsilonResult, err error) {
	if err := r.white.Compose(r.mWhite, n); err != nil {
		return white, black, fmt.Errorf("privacy figures: %w", err)
	}
	if err := r.black.Compose(r.mBlack, n); err != nil {
		return white, black, fmt.Errorf("privacy figures: %w", err)
	}
	if white, err = r.white.Epsilon(delta, privacy.ConversionBBG); err != nil {
		return white, black, fmt.Errorf("privacy figures: %w", err)
	}
	if black, err = r.black.Epsilon(delta, privacy.ConversionBBG); err != nil {
		return white, black, fmt.Errorf("privacy figures: %w", err)
	}
	return white, black, nil
}
