package privacy

import (
	"errors"
	"fmt"
	"math"
)

// CalibrationTolerance is the absolute accuracy of CalibrateSigma: the σ it
// returns meets the target while σ − CalibrationTolerance does not. (Opacus'
// get_noise_multiplier instead stops when ε is within 0.01 of the target,
// which leaves σ off by up to ~5e-3.)
const CalibrationTolerance = 1e-5

// calibrationMaxSigma bounds the search: a target that σ = 1e6 cannot meet
// is reported as unreachable.
const calibrationMaxSigma = 1e6

// CalibrationRequest describes a noise calibration: Steps compositions of a
// Poisson-subsampled Gaussian (or of the Step mechanism) with rate Q after
// the optional Prior history, to stay within (TargetEpsilon, Delta)-DP on an
// accountant.
type CalibrationRequest struct {
	TargetEpsilon float64 // > 0
	Delta         float64 // in (0, 1)
	Q             float64 // sampling rate, in (0, 1]
	Steps         int     // ≥ 1
	// Prior, if not nil, is the history already spent, on the accountant
	// whose ε is calibrated (PDP-SGD's Algorithm 4 calibrates each round
	// after the previous ones); its kind and configuration decide ε. It is
	// not modified. The fields below that choose an accountant must then
	// be unset (Accountant may name the prior's kind).
	Prior Accountant
	// Accountant names a fresh accountant (any registered one) when Prior
	// is nil; "" means DefaultAccountant of the subsampled Gaussian (the
	// PLD accountant). Orders and Conversion configure the RDP accountant
	// (nil: DefaultOrders; "": DefaultConversion), PLDInterval the PLD one
	// (0: default): see AccountantConfig.
	Accountant  string
	Orders      []float64
	Conversion  Conversion
	PLDInterval float64
	// Step, if not nil, is the (not subsampled) mechanism of one step as a
	// function of the noise multiplier σ, for a step other than the
	// Gaussian — e.g. TSGD+PTR's PTR{Sigma1: σ, Tau, B, Delta0}: every
	// candidate σ composes PoissonSubsampled{Base: Step(σ), Q}. nil means
	// the Gaussian, SubsampledGaussian{Q, σ}. With Step, CalibrateSigma
	// searches on the accountant's reported ε (the PLD accountant with its
	// coarse-grid search and certified refinement, pld_calibrate.go; any
	// other by bisection), so the σ it returns meets the target in every
	// case; it is the smallest one (to CalibrationTolerance) when ε
	// decreases in σ, as it does for PTR (its branches' Gaussian noise
	// scales with σ, its test does not).
	Step func(sigma float64) Mechanism
	// Floor > 0 says that σ below Floor is of no use to the caller, who
	// takes a maximum over several requests (PDP-SGD's σ over budget
	// classes): when Floor already meets the target, CalibrateSigma
	// returns Floor at the cost of one evaluation (on the PLD accountant:
	// one or two, see calibrateSigmaPLD).
	Floor float64
}

// sigmaCalibrator is an accountant with its own (faster, same contract)
// CalibrateSigma: the RDP accountant sums curves directly, the PLD one
// searches on a coarser certified grid first (pld_calibrate.go).
type sigmaCalibrator interface {
	calibrateSigma(req CalibrationRequest) (float64, error)
}

// stepCalibrator is a sigmaCalibrator that also handles
// CalibrationRequest.Step (the PLD one: its search evaluates the reported ε
// of whatever step the request names; the RDP one sums Gaussian curves
// only).
type stepCalibrator interface {
	sigmaCalibrator
	calibratesStep()
}

// CalibrateSigma returns the smallest noise multiplier σ (to
// CalibrationTolerance) such that composing req.Steps
// SubsampledGaussian{req.Q, σ} steps (or PoissonSubsampled{req.Step(σ),
// req.Q}, see CalibrationRequest.Step) after req.Prior keeps the
// accountant's ε at req.Delta ≤ req.TargetEpsilon. It is the one
// calibration for every accountant: it bisects on σ, using that ε
// decreases in σ (composed RDP decreases at every order; a PLD's losses
// shrink); the built-in accountants answer the same question faster
// (sigmaCalibrator). It fails when the target is unreachable (the prior
// alone spends it, or σ would exceed 1e6).
func CalibrateSigma(req CalibrationRequest) (float64, error) {
	switch {
	case !(req.TargetEpsilon > 0) || math.IsInf(req.TargetEpsilon, 0):
		return 0, fmt.Errorf("calibrate σ: target ε must be finite and > 0, got %v", req.TargetEpsilon)
	case !(req.Delta > 0 && req.Delta < 1):
		return 0, fmt.Errorf("calibrate σ: δ must be in (0, 1), got %v", req.Delta)
	case !(req.Q > 0 && req.Q <= 1):
		return 0, fmt.Errorf("calibrate σ: sampling rate q must be in (0, 1], got %v", req.Q)
	case req.Steps < 1:
		return 0, fmt.Errorf("calibrate σ: steps must be ≥ 1, got %d", req.Steps)
	case req.Floor < 0 || math.IsNaN(req.Floor) || math.IsInf(req.Floor, 0):
		return 0, fmt.Errorf("calibrate σ: floor must be finite and ≥ 0, got %v", req.Floor)
	}
	if err := req.Conversion.OrDefault().Validate(); err != nil {
		return 0, fmt.Errorf("calibrate σ: %w", err)
	}
	if req.Step != nil {
		if err := req.stepAt(1).Validate(); err != nil {
			return 0, fmt.Errorf("calibrate σ: step mechanism at σ = 1: %w", err)
		}
	}
	prior := req.Prior
	if prior == nil {
		name := req.Accountant
		if name == "" {
			name = DefaultAccountant(req.stepAt(1))
		}
		var err error
		if prior, err = NewAccountant(name, AccountantConfig{Conversion: req.Conversion, Orders: req.Orders, Interval: req.PLDInterval}); err != nil {
			return 0, fmt.Errorf("calibrate σ: %w", err)
		}
	} else if req.Accountant != "" && req.Accountant != prior.Kind() || req.Orders != nil || req.Conversion != "" || req.PLDInterval != 0 {
		return 0, errors.New("calibrate σ: with a prior history, the accountant and its configuration are the prior's (leave Accountant, Orders, Conversion and PLDInterval unset)")
	}
	if c, ok := prior.(sigmaCalibrator); ok && req.Step == nil {
		return c.calibrateSigma(req)
	}
	if c, ok := prior.(stepCalibrator); ok {
		return c.calibrateSigma(req)
	}
	if s, ok, err := floorMeets(prior, req); err != nil || ok {
		return s, err
	}
	if err := priorWithin(prior, req); err != nil {
		return 0, err
	}
	// An evaluation that fails counts as "does not meet the target" (the
	// search moves to larger σ, which is always safe); the last error is
	// kept for the message when no σ works.
	var lastErr error
	epsAt := func(sigma float64) (float64, error) {
		e, err := epsilonAfter(prior, req, sigma)
		if err != nil {
			lastErr = err
			return math.Inf(1), nil
		}
		return e, nil
	}
	s, err := bisectSigma(epsAt, req.TargetEpsilon)
	if err != nil && lastErr != nil {
		err = fmt.Errorf("%w (last evaluation error: %v)", err, lastErr)
	}
	return s, err
}

// stepAt is the subsampled step of req at noise multiplier σ:
// SubsampledGaussian{req.Q, σ}, or PoissonSubsampled{req.Step(σ), req.Q}.
func (req CalibrationRequest) stepAt(sigma float64) Mechanism {
	if req.Step == nil {
		return SubsampledGaussian{Q: req.Q, Sigma: sigma}
	}
	return PoissonSubsampled{Base: req.Step(sigma), Q: req.Q}
}

// epsilonAfter is the accountant's ε at req.Delta after req.Steps more
// subsampled steps at σ (stepAt; on a copy).
func epsilonAfter(a Accountant, req CalibrationRequest, sigma float64) (float64, error) {
	c := a.CloneAccountant()
	if err := c.Compose(req.stepAt(sigma), req.Steps); err != nil {
		return 0, err
	}
	g, err := c.EpsilonFor(req.Delta)
	return g.Epsilon, err
}

// floorMeets reports whether req.Floor > 0 meets the target on a (one
// evaluation).
func floorMeets(a Accountant, req CalibrationRequest) (float64, bool, error) {
	if req.Floor == 0 {
		return 0, false, nil
	}
	if e, err := epsilonAfter(a, req, req.Floor); err == nil && e <= req.TargetEpsilon {
		return req.Floor, true, nil
	}
	return 0, false, nil
}

// priorWithin fails when the prior history alone spends the target.
func priorWithin(a Accountant, req CalibrationRequest) error {
	if a.Steps() == 0 {
		return nil
	}
	g, err := a.EpsilonFor(req.Delta)
	if err != nil {
		return fmt.Errorf("calibrate σ: %w", err)
	}
	if g.Epsilon >= req.TargetEpsilon {
		return fmt.Errorf("calibrate σ: the prior history alone spends ε = %v ≥ target %v", g.Epsilon, req.TargetEpsilon)
	}
	return nil
}

// calibrateSigma is CalibrateSigma on the RDP accountant: the prior's
// composed curve plus Steps times the step's curve, converted at every
// order.
func (r *RDPAccounting) calibrateSigma(req CalibrationRequest) (float64, error) {
	if s, ok, err := floorMeets(r, req); err != nil || ok {
		return s, err
	}
	conv := r.conv()
	orders := r.Acc.orders
	prior := r.Acc.RDP()
	total := make([]float64, len(orders))
	epsAt := func(sigma float64) (float64, error) {
		m := SubsampledGaussian{Q: req.Q, Sigma: sigma}
		for i, a := range orders {
			v, err := m.RDP(a)
			if err != nil {
				return 0, err
			}
			total[i] = prior[i] + float64(req.Steps)*v.Epsilon
		}
		e, _, err := EpsilonFromRDP(orders, total, req.Delta, conv)
		return e, err
	}
	if e, _, err := EpsilonFromRDP(orders, prior, req.Delta, conv); err != nil {
		return 0, fmt.Errorf("calibrate σ: %w", err)
	} else if r.Acc.Steps() > 0 && e >= req.TargetEpsilon {
		return 0, fmt.Errorf("calibrate σ: the prior history alone spends ε = %v ≥ target %v", e, req.TargetEpsilon)
	}
	return bisectSigma(epsAt, req.TargetEpsilon)
}

// bisectSigma returns the smallest σ (to CalibrationTolerance) with
// epsAt(σ) ≤ target, for epsAt decreasing in σ.
func bisectSigma(epsAt func(float64) (float64, error), target float64) (float64, error) {
	return bisectSigmaTol(epsAt, target, CalibrationTolerance)
}

// bisectSigmaTol is bisectSigma to absolute tolerance tol.
func bisectSigmaTol(epsAt func(float64) (float64, error), target, tol float64) (float64, error) {
	hi := 1.0
	for {
		e, err := epsAt(hi)
		if err != nil {
			return 0, fmt.Errorf("calibrate σ: %w", err)
		}
		if e <= target {
			break
		}
		if hi *= 2; hi > calibrationMaxSigma {
			return 0, fmt.Errorf("calibrate σ: target ε = %v unreachable with σ ≤ %g", target, calibrationMaxSigma)
		}
	}
	lo := hi / 2
	for {
		e, err := epsAt(lo)
		if err != nil {
			return 0, fmt.Errorf("calibrate σ: %w", err)
		}
		if e > target {
			break
		}
		hi = lo
		if lo /= 2; lo < tol {
			return hi, nil
		}
	}
	// Invariant: ε(lo) > target ≥ ε(hi).
	for hi-lo > tol {
		mid := lo + (hi-lo)/2
		e, err := epsAt(mid)
		if err != nil {
			return 0, fmt.Errorf("calibrate σ: %w", err)
		}
		if e <= target {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, nil
}
