package privacy

import (
	"fmt"
	"math"
	"slices"
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
// Poisson-subsampled Gaussian with rate Q after the optional Prior history,
// to stay within (TargetEpsilon, Delta)-DP.
type CalibrationRequest struct {
	TargetEpsilon float64 // > 0
	Delta         float64 // in (0, 1)
	Q             float64 // sampling rate, in (0, 1]
	Steps         int     // ≥ 1
	// Orders is the grid of Rényi orders; nil means the Prior's orders, or
	// DefaultOrders without a Prior. With a Prior it must equal its orders.
	Orders []float64
	// Conversion from RDP to (ε, δ); "" means ConversionBBG (as Opacus).
	Conversion Conversion
	// Prior, if not nil, is the history already spent (PDP-SGD's Algorithm 4
	// calibrates each round after the previous ones). It is not modified.
	Prior *RDPAccountant
	// Accountant selects the accounting: "" or KindRDP (the fields above),
	// or KindPLD: ε is the PLD accountant's certified upper bound at
	// interval PLDInterval (0: default), after PriorPLD if not nil (then its
	// interval is used). Orders, Conversion and Prior must then be unset.
	Accountant  string
	PLDInterval float64
	PriorPLD    *PLDAccountant
	// Floor > 0 (PLD only) says that σ below Floor is of no use to the
	// caller, who takes a maximum over several requests (PDP-SGD's σ over
	// budget classes): when Floor already meets the target — on the search
	// grid's certified upper bound, else on the certified grid (see
	// calibrateSigmaPLD) — CalibrateSigma returns Floor at the cost of one
	// or two evaluations.
	Floor float64
}

// CalibrateSigma returns the smallest noise multiplier σ (to
// CalibrationTolerance) such that composing req.Steps
// SubsampledGaussian{req.Q, σ} steps after req.Prior is
// (req.TargetEpsilon, req.Delta)-DP under req.Conversion, minimized over the
// orders. It bisects on σ, using that the composed RDP, hence ε, decreases
// in σ at every order. It fails when the target is unreachable (the prior
// alone spends it, or σ would exceed 1e6).
func CalibrateSigma(req CalibrationRequest) (float64, error) {
	conv := req.Conversion
	if conv == "" {
		conv = ConversionBBG
	}
	switch {
	case !(req.TargetEpsilon > 0) || math.IsInf(req.TargetEpsilon, 0):
		return 0, fmt.Errorf("calibrate σ: target ε must be finite and > 0, got %v", req.TargetEpsilon)
	case !(req.Delta > 0 && req.Delta < 1):
		return 0, fmt.Errorf("calibrate σ: δ must be in (0, 1), got %v", req.Delta)
	case !(req.Q > 0 && req.Q <= 1):
		return 0, fmt.Errorf("calibrate σ: sampling rate q must be in (0, 1], got %v", req.Q)
	case req.Steps < 1:
		return 0, fmt.Errorf("calibrate σ: steps must be ≥ 1, got %d", req.Steps)
	}
	if err := conv.Validate(); err != nil {
		return 0, fmt.Errorf("calibrate σ: %w", err)
	}
	switch req.Accountant {
	case "", KindRDP:
		if req.PriorPLD != nil {
			return 0, fmt.Errorf("calibrate σ: a PLD prior needs accountant %q", KindPLD)
		}
		if req.Floor != 0 {
			return 0, fmt.Errorf("calibrate σ: a floor needs accountant %q", KindPLD)
		}
	case KindPLD:
		return calibrateSigmaPLD(req)
	default:
		return 0, fmt.Errorf("calibrate σ: unknown accountant %q", req.Accountant)
	}
	orders := req.Orders
	prior := make([]float64, 0)
	if req.Prior != nil {
		if orders == nil {
			orders = req.Prior.Orders()
		} else if !slices.Equal(orders, req.Prior.orders) {
			return 0, fmt.Errorf("calibrate σ: orders differ from the prior accountant's")
		}
		prior = req.Prior.RDP()
	} else if orders == nil {
		orders = DefaultOrders()
	}
	if err := checkOrders(orders); err != nil {
		return 0, fmt.Errorf("calibrate σ: %w", err)
	}
	if len(prior) == 0 {
		prior = make([]float64, len(orders))
	}
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
	} else if req.Prior != nil && req.Prior.Steps() > 0 && e >= req.TargetEpsilon {
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
