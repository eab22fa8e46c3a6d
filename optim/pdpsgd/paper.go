package pdpsgd

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/privtrain/privtrain/privacy"
	"github.com/privtrain/privtrain/randstream"
)

// Accounting selects how the Ledger accounts a personalized run.
//
// Accounting. Inside a round every example i enters each DP-SGD step
// independently with probability q·π_i (the PDP sampler of appendix C.3),
// where q = batch/N. For the add/remove of example i, that step is the
// Poisson-subsampled Gaussian mechanism at rate q·π_i, whatever the other
// examples' rates are, because their inclusion is independent of i's and
// the rates are public (functions of the budgets and of earlier public
// choices only, never of the data). So example i is (α, ρ_i(α))-individual
// RDP with ρ_i the composition over all its steps (Mironov 2017, Prop. 1),
// and (ε_i, δ_i)-DP with ε_i from the RDP conversion (Theorem 4.8 of the
// paper; the Balle et al. 2020 conversion by default). This replaces the
// paper's ε-level argument (Theorem 4.2 for one round, Theorem 4.3 summing
// rounds), which needs one sampling per round, by an exact RDP composition
// that is valid for sampling inside every step, and gives Δ = {δ_i} instead
// of Theorem 4.5's R_max·δ.
//
// What a round costs (AccountingRDP). In the paper's regime (σ ≈ 1,
// δ = 1e-5, q = 64/60000) the RDP-to-DP conversion has a floor: the ε of a
// composition is dominated by the large Rényi orders the conversion needs
// for log(1/δ)/(α − 1) to be small, where the subsampled Gaussian is far
// from its small-q quadratic regime. One step at σ = 1.1 already costs
// ε = 0.48, 938 steps 0.53, and 938 steps at rate q/4 still 0.42. So the
// Definition 4.1 rate π (made for Theorem 4.2's linear bound
// log(1 + π(e^τ − 1)) ≈ π·τ) barely lowers an example's RDP spend: in the
// first MNIST round (τ = 0.632) the class ε = 0.5 at π = 0.74 binds σ
// (1.10 instead of the 1.02 that τ alone needs), and every other class
// ends the round below its cap — the classes at π = 1 at 0.533, not τ.
// That is why classes sampled at π < 1 keep a small positive leftover.
// Plan retires them (see Plan): they were allotted their whole remaining
// budget, and keeping the accountant's slack is what made loss_a collapse.
//
// AccountingPaper (NewPaperLedger) is the paper's ε-level argument, made
// valid: D_R drawn once per round (Theorem 4.2 does not cover per-step
// personalized sampling), every eligible example charged — not only the
// sampled ones, as the paper's Algorithm 1 step 11 and its proof of
// Theorem 4.5 do, which is not a valid accounting — and δ_R = δ_i/k so that
// Δ = {δ_i} rather than Theorem 4.5's R_max·δ. It has no floor in π (a
// below-τ example spends its whole remaining budget with π < 1), but it
// composes rounds additively and each round's ε must be certified on its
// own: at δ/5 a round of 1876 steps cannot be certified below ε ≈ 0.13
// (the largest order, 63, leaves log(1/δ_R)/62 even as σ → ∞), so later
// rounds with small thresholds are impossible or very noisy. Which
// accounting trains the better model is an empirical question
// (docs/pdp-evidence.md). AccountingPLD (NewLedger with the pld accountant) is the per-example
// argument of AccountingRDP on the PLD accountant (certified upper bounds
// of the exact per-example (ε_i, δ_i) curve, no RDP conversion floor); it
// is the default of privtrain's PDP methods, with σ calibration on a
// coarse search grid and a certified final check (privacy.CalibrateSigma).
//
// Examples with the same budget (ε_i, δ_i) have identical histories, so the
// Ledger keeps one accountant per distinct budget (a privacy class); a
// file with many distinct budgets costs one calibration per class per round.
type Accounting string

const (
	// AccountingRDP is per-example individual RDP: every DP-SGD step
	// samples example i with probability q·π_i, and example i's spend is
	// the RDP composition of all its steps (see the package documentation).
	AccountingRDP Accounting = Accounting(privacy.KindRDP)
	// AccountingPaper is the paper's ε-level accounting, made valid: see
	// NewPaperLedger.
	AccountingPaper Accounting = "paper"
	// AccountingPLD is AccountingRDP's per-example argument on the PLD
	// accountant (NewLedger with privacy.KindPLD): each class composes the PLDs of its
	// Poisson-subsampled Gaussian steps at rate q·π, and ε_i is the PLD's
	// certified upper bound at δ_i.
	AccountingPLD Accounting = Accounting(privacy.KindPLD)
	// Any other registered accountant's name (privacy.RegisterAccountant)
	// is the same per-example argument on that accountant.
)

// Validate checks the accounting name ("" is not accepted; callers default
// it).
func (a Accounting) Validate() error {
	if a == AccountingPaper || privacy.CheckAccountantName(string(a)) == nil {
		return nil
	}
	return fmt.Errorf("unknown PDP accounting %q (want %q or an accountant: %s)", string(a), AccountingPaper, strings.Join(privacy.AccountantNames(), ", "))
}

// NewPaperLedger starts a ledger with the paper's ε-level accounting
// (Theorem 4.2 per round, Theorem 4.3 across rounds) for at most rounds
// rounds, under conversion c for the rounds' DP-SGD.
//
// Round R draws D_R once: every eligible example i independently with
// probability π_i = π(rem_i, τ_R) of Definition 4.1 (DrawRates), and runs
// DP-SGD on D_R (each step a Poisson sample of D_R at the public rate q)
// with σ_R calibrated so that this run is (τ_R, δ_R)-DP for add/remove of
// one record of D_R, δ_R = δ_i/rounds. By Theorem 4.2 the round is then
// (ε_{i,R}, π_i·δ_R)-DP for example i, with
//
//	ε_{i,R} = log(1 + π_i·(e^{ε_R} − 1)) ≤ min(rem_i, τ_R),
//
// ε_R ≤ τ_R the round's DP-SGD ε at δ_i/rounds; by Theorem 4.3 (adaptive
// basic composition) the run is (Σ_R ε_{i,R}, Σ_R π_{i,R}·δ_R)-DP for i, so
// (ε_i, δ_i)-DP when every charge is kept within the remaining budget.
//
// Validity conditions, enforced here:
//   - one draw of D_R per round, independent of everything else. Theorem
//     4.2 does not cover per-step personalized sampling (AccountingRDP's
//     sampler), so SampleRates refuses a paper ledger.
//   - every eligible example is charged ε_{i,R}, sampled or not. The
//     paper's Algorithm 1 (step 11) and its proof of Theorem 4.5 charge
//     only the examples in D_R and count the others as spending 0; that is
//     not valid: the amplified bound already pays for the chance of not
//     being sampled, and charging by the (secret) draw would make later
//     rounds' τ and π depend on it and let an unsampled example be
//     re-sampled with its full budget until it is picked.
//   - Σ_R π_{i,R}·δ_R ≤ δ_i: δ_R = δ_i/rounds and at most rounds rounds
//     (Theorem 4.5 instead states Δ = R_max·δ).
func NewPaperLedger(budgets []Budget, c privacy.Conversion, rounds int) (*Ledger, error) {
	if rounds < 1 {
		return nil, fmt.Errorf("ledger: paper accounting needs rounds ≥ 1, got %d", rounds)
	}
	l, err := NewLedger(budgets, privacy.KindRDP, privacy.AccountantConfig{Conversion: c})
	if err != nil {
		return nil, err
	}
	l.acc, l.paperRounds = AccountingPaper, rounds
	return l, nil
}

// Accounting returns the ledger's accounting.
func (l *Ledger) Accounting() Accounting { return l.acc }

// paperDelta is δ_R for the class: δ_i/rounds.
func (l *Ledger) paperDelta(c *class) float64 { return c.budget.Delta / float64(l.paperRounds) }

// paperIncrement is ε_{i,R} = log(1 + π·(e^{ε_R} − 1)) for a round of steps
// DP-SGD steps at (σ, q) that is (ε_R, delta)-DP by the RDP accountant.
func paperIncrement(conv privacy.Conversion, delta, sigma, q, pi float64, steps int) (float64, error) {
	a, err := privacy.NewRDPAccountant(nil)
	if err != nil {
		return 0, err
	}
	if err := a.Compose(mechanism(sigma, q, 1), steps); err != nil {
		return 0, err
	}
	res, err := a.Epsilon(delta, conv)
	if err != nil {
		return 0, err
	}
	return math.Log1p(pi * math.Expm1(res.Epsilon)), nil
}

// paperCharge is class c's ε_{i,R} for a round at (σ, q, π, steps).
func (l *Ledger) paperCharge(c *class, sigma, q, pi float64, steps int) (float64, error) {
	return paperIncrement(l.conv, l.paperDelta(c), sigma, q, pi, steps)
}

// floorSigma stands for σ → ∞ in paperFloor (privacy.CalibrateSigma's
// own search limit).
const floorSigma = 1e6

// paperFloor returns the least τ a round of req.Steps steps can be
// certified at under paper accounting: the round's DP-SGD ε at δ_R as
// σ → ∞ (positive: the RDP-to-DP conversion pays log(1/δ_R)/(α − 1) at the
// largest order α of the accountant). A smaller τ is unreachable, so the
// threshold is chosen among the remaining budgets ≥ this floor; when none
// is left, the run's budgets are exhausted.
func (l *Ledger) paperFloor(req PlanRequest) (float64, error) {
	delta := math.Inf(1)
	for _, c := range l.classes {
		if c.remaining() > MinRemaining {
			delta = math.Min(delta, l.paperDelta(c))
		}
	}
	// π = 1 gives ε_R itself.
	eps, err := paperIncrement(l.conv, delta, floorSigma, req.Q, 1, req.Steps)
	if err != nil {
		return 0, fmt.Errorf("ledger plan: %w", err)
	}
	return eps, nil
}

// DrawRates draws D_R of a paper-accounted round: example i is in D_R with
// probability π of its class (Definition 4.1), independently, from the
// stream ("pdp-draw", 0) of key — privacy randomness: a private run passes
// a secret key (randstream.NewSecret) — and returns the per-step rates (q
// for the examples in D_R, 0 otherwise) and |D_R|.
func (l *Ledger) DrawRates(r Round, key randstream.Key) ([]float64, int, error) {
	if l.acc != AccountingPaper {
		return nil, 0, errors.New("ledger: DrawRates is for paper accounting (RDP accounting samples per step: SampleRates)")
	}
	if len(r.Rates) != len(l.classes) {
		return nil, 0, fmt.Errorf("ledger: round has %d class rates, ledger %d classes", len(r.Rates), len(l.classes))
	}
	if key.IsZero() {
		return nil, 0, errors.New("ledger: DrawRates needs a non-zero key")
	}
	rng := key.Stream("pdp-draw", 0)
	out := make([]float64, len(l.class))
	n := 0
	for i, k := range l.class {
		// One uniform per example, so the draw of i does not depend on
		// the other examples' rates.
		if u := rng.Float64(); r.Rates[k] > 0 && u < r.Rates[k] {
			out[i] = r.Q
			n++
		}
	}
	return out, n, nil
}

// checkPaper recomputes every class's charges from the recorded rounds.
func (l *Ledger) checkPaper() []error {
	var errs []error
	if len(l.rounds) > l.paperRounds {
		errs = append(errs, fmt.Errorf("%d rounds recorded, paper accounting allows %d", len(l.rounds), l.paperRounds))
	}
	for k, c := range l.classes {
		if len(c.rounds) != len(l.rounds) {
			errs = append(errs, fmt.Errorf("class ε = %v: %d round charges for %d rounds", c.budget.Epsilon, len(c.rounds), len(l.rounds)))
			continue
		}
		var eps, delta float64
		for R, r := range l.rounds {
			inc := 0.0
			if r.Rates[k] > 0 && r.Steps > 0 {
				v, err := l.paperCharge(c, r.Sigma, r.Q, r.Rates[k], r.Steps)
				if err != nil {
					return append(errs, err)
				}
				inc = v
				delta += r.Rates[k] * l.paperDelta(c)
			}
			if inc != c.rounds[R] {
				errs = append(errs, fmt.Errorf("class ε = %v: round %d charge recorded %v, recomputed %v", c.budget.Epsilon, R+1, c.rounds[R], inc))
			}
			eps += inc
		}
		if math.Abs(eps-c.spent) > 1e-12*math.Max(1, eps) {
			errs = append(errs, fmt.Errorf("class ε = %v: recorded spend %v, round charges add up to %v", c.budget.Epsilon, c.spent, eps))
		}
		if math.Abs(delta-c.deltaSpent) > 1e-12*c.budget.Delta || c.deltaSpent > c.budget.Delta*(1+1e-12) {
			errs = append(errs, fmt.Errorf("class ε = %v: δ spent %v (recomputed %v) against δ_i = %v", c.budget.Epsilon, c.deltaSpent, delta, c.budget.Delta))
		}
	}
	return errs
}
