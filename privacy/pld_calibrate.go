package privacy

import (
	"fmt"
	"math"
)

// σ calibration on the PLD accountant.
//
// Every candidate σ of a plain bisection composes Steps subsampled steps
// (SubsampledGaussian{Q, σ}, or PoissonSubsampled{Step(σ), Q} for a
// CalibrationRequest.Step such as PTR) on the certified grid (interval h):
// ~20 candidates, each a discretisation and O(log Steps) FFT convolutions
// of both estimates. calibrateSigmaPLD instead
//
//  1. searches on a coarser grid (interval pldSearchFactor·h, at most
//     pldSearchMaxInterval; upper estimate only): ε there is still a
//     certified upper bound (pld.go), only looser, and ~10× cheaper;
//     every evaluation is the ε the accountant reports (EpsilonFor:
//     min(PLD, RDP), the PLD bound from the fast or the tilted path), so
//     the PLD σ is never above the RDP one;
//  2. then finds the smallest σ on the certified grid (interval h, upper
//     estimate only, which is bit for bit the upper estimate the accountant
//     composes) by a bracket around the search answer and regula falsi
//     (Illinois), to CalibrationTolerance — usually 5–8 certified
//     evaluations;
//  3. composes the prior once per grid (the accountant's cached
//     composition on the certified grid) and the new steps by repeated
//     squaring, instead of re-composing the whole history per candidate.
//
// So the σ it returns meets the target on the certified grid, and σ −
// CalibrationTolerance does not: the same contract as the bisection it
// replaces. No number from the search grid is ever returned except Floor,
// whose ε on the search grid is itself a certified upper bound.

// pldSearchFactor is the ratio of the search grid's interval to the
// certified one; pldSearchMaxInterval caps the search interval.
const (
	pldSearchFactor      = 10
	pldSearchMaxInterval = 2e-3
)

// pldSearchTolerance is the absolute σ accuracy of the search on the coarse
// grid (the certified stage refines it to CalibrationTolerance).
const pldSearchTolerance = 1e-4

// calibrateSigma is CalibrateSigma on the PLD accountant (see above), after
// the accountant's history.
func (a *PLDAccountant) calibrateSigma(req CalibrationRequest) (float64, error) {
	return calibrateSigmaPLD(req, a)
}

// calibratesStep marks the PLD calibration as valid for any
// CalibrationRequest.Step: it only ever evaluates the accountant's reported
// ε of req.stepAt(σ) (stepCalibrator).
func (a *PLDAccountant) calibratesStep() {}

// calibrateSigmaPLD is CalibrateSigma on the PLD accountant prior (see above).
func calibrateSigmaPLD(req CalibrationRequest, prior *PLDAccountant) (float64, error) {
	h := prior.Interval()
	if prior.Steps() > 0 {
		g, err := prior.EpsilonFor(req.Delta)
		if err != nil {
			return 0, fmt.Errorf("calibrate σ: %w", err)
		}
		if g.Epsilon >= req.TargetEpsilon {
			return 0, fmt.Errorf("calibrate σ: the prior history alone spends ε = %v ≥ target %v", g.Epsilon, req.TargetEpsilon)
		}
	}
	hs := math.Max(h, math.Min(pldSearchFactor*h, pldSearchMaxInterval))
	priorSearch := prior
	if hs != h {
		var err error
		if priorSearch, err = reaccount(prior.History(), hs); err != nil {
			return 0, fmt.Errorf("calibrate σ: %w", err)
		}
		if _, err := priorSearch.Composed(); err != nil { // cached for the clones
			return 0, fmt.Errorf("calibrate σ: %w", err)
		}
	}
	// An evaluation that fails (at a tiny σ the loss range outgrows any
	// grid) counts as "does not meet the target": the search then moves
	// to larger σ, which is always safe, and the answer is a σ whose
	// certified evaluation succeeded. The last such error is kept for the
	// message when no σ works.
	var lastErr error
	guard := func(e float64, err error) (float64, error) {
		if err != nil {
			lastErr = err
			return math.Inf(1), nil
		}
		return e, nil
	}
	search := func(sigma float64) (float64, error) {
		return guard(reportedEpsilonAfter(priorSearch, req.stepAt(sigma), req.Steps, req.Delta))
	}
	certified := func(sigma float64) (float64, error) {
		return guard(reportedEpsilonAfter(prior, req.stepAt(sigma), req.Steps, req.Delta))
	}
	withCause := func(s float64, err error) (float64, error) {
		if err != nil && lastErr != nil {
			err = fmt.Errorf("%w (last evaluation error: %v)", err, lastErr)
		}
		return s, err
	}
	if req.Floor > 0 {
		// The search grid is looser: when it does not show the floor
		// meeting the target, one certified evaluation decides.
		if e, _ := search(req.Floor); e <= req.TargetEpsilon {
			return req.Floor, nil
		}
		if e, _ := certified(req.Floor); e <= req.TargetEpsilon {
			return req.Floor, nil
		}
	}
	if hs == h {
		// No coarser grid: the search is the certified bisection itself.
		return withCause(bisectSigma(certified, req.TargetEpsilon))
	}
	start, err := bisectSigmaTol(search, req.TargetEpsilon, pldSearchTolerance)
	if err != nil {
		return withCause(0, err)
	}
	// The certified grid's ε differs from the search grid's by a nearly
	// constant offset near the answer: one certified evaluation measures
	// it, the search grid (shifted by it) predicts the certified answer,
	// and refineSigma brackets that prediction with steps from
	// CalibrationTolerance up.
	es, _ := search(start)
	ef, _ := certified(start)
	guess := start
	if d := ef - es; !math.IsInf(es, 0) && !math.IsInf(ef, 0) && !math.IsNaN(d) {
		shifted := func(sigma float64) (float64, error) {
			e, err := search(sigma)
			return e + d, err
		}
		if g, err := bisectSigmaTol(shifted, req.TargetEpsilon, CalibrationTolerance/4); err == nil {
			guess = g
		}
	}
	return withCause(refineSigma(certified, req.TargetEpsilon, guess, CalibrationTolerance))
}

// reportedEpsilonAfter returns the ε at δ that the accountant prior reports
// after composing steps copies of step: min(PLD, RDP) with the PLD bound
// from the fast or the tilted path (EpsilonFor), upper estimates only (bit
// for bit the same upper bounds). prior is not changed.
func reportedEpsilonAfter(prior *PLDAccountant, step Mechanism, steps int, delta float64) (float64, error) {
	c := prior.cloneP()
	c.upperOnly = true
	if err := c.Compose(step, steps); err != nil {
		return 0, err
	}
	g, err := c.EpsilonFor(delta)
	return g.Epsilon, err
}

// reaccount returns a PLD accountant at interval h with history hist.
func reaccount(hist []Composition, h float64) (*PLDAccountant, error) {
	a, err := NewPLDAccountant(h)
	if err != nil {
		return nil, err
	}
	a.upperOnly = true
	for _, c := range hist {
		m, err := FromSpec(c.Spec)
		if err != nil {
			return nil, err
		}
		if err := a.Compose(m, c.Count); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// refineSigma returns the smallest σ (to tol) with eps(σ) ≤ target, for eps
// decreasing in σ, starting from a guess: it brackets the answer with
// steps growing geometrically from the guess, then narrows the bracket by
// regula falsi with the Illinois modification (each new point at least
// tol/2 inside the bracket), which needs few evaluations of a smooth eps.
func refineSigma(eps func(float64) (float64, error), target, guess, tol float64) (float64, error) {
	hi := guess
	eh, err := eps(hi)
	if err != nil {
		return 0, fmt.Errorf("calibrate σ: %w", err)
	}
	step := tol
	var lo, el float64
	if eh > target {
		for {
			lo, el = hi, eh
			if hi += step; hi > calibrationMaxSigma {
				return 0, fmt.Errorf("calibrate σ: target ε = %v unreachable with σ ≤ %g", target, calibrationMaxSigma)
			}
			if eh, err = eps(hi); err != nil {
				return 0, fmt.Errorf("calibrate σ: %w", err)
			}
			if eh <= target {
				break
			}
			step *= 2
		}
	} else {
		for {
			// Never below half of the smallest σ known to fit.
			lo = math.Max(hi-step, hi/2)
			if hi-lo <= tol/2 {
				return hi, nil
			}
			if el, err = eps(lo); err != nil {
				return 0, fmt.Errorf("calibrate σ: %w", err)
			}
			if el > target {
				break
			}
			hi, eh = lo, el
			step *= 2
		}
	}
	// Invariant: eps(lo) = el > target ≥ eh = eps(hi); fl, fh are the
	// (Illinois-scaled) values of eps − target at the ends.
	fl, fh := el-target, eh-target
	side := 0
	for hi-lo > tol {
		x := hi - fh*(hi-lo)/(fh-fl)
		if math.IsNaN(x) || math.IsInf(fl, 0) {
			x = lo + (hi-lo)/2
		}
		x = math.Min(math.Max(x, lo+tol/2), hi-tol/2)
		ex, err := eps(x)
		if err != nil {
			return 0, fmt.Errorf("calibrate σ: %w", err)
		}
		if ex <= target {
			hi, fh = x, ex-target
			if side == 1 {
				fl /= 2
			}
			side = 1
		} else {
			lo, fl = x, ex-target
			if side == -1 {
				fh /= 2
			}
			side = -1
		}
	}
	return hi, nil
}
