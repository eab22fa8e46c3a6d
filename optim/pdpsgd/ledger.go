package pdpsgd

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/privtrain/privtrain/privacy"
)

// MinRemaining is the remaining budget below which an example counts as
// exhausted: it is no longer eligible and never sampled again.
const MinRemaining = 1e-9

// Ledger is the per-example privacy ledger of a personalized run: each
// example's budget (ε_i, δ_i) and what every round spent of it. Examples
// with the same budget share one class and one RDP accountant (see the
// package documentation for the accounting argument).
//
// A round is first planned (Plan), then trained with the per-example rates
// of SampleRates, then charged (Charge). Charge refuses, without changing
// the ledger, a round after which some example's ε would exceed its budget.
//
// A Ledger is not safe for concurrent use.
type Ledger struct {
	conv privacy.Conversion
	// acc is the accounting; paperRounds the k of AccountingPaper (δ_R =
	// δ_i/k per round).
	acc         Accounting
	paperRounds int
	class       []int // example → class
	classes     []*class
	rounds      []Round
	// recertified is set when loading found a class whose recorded spend
	// differs from its accountant's (within SpendTolerance; see
	// adoptRecomputed).
	recertified bool
	// loaded holds each class's spend and retirement as loaded, before
	// adoptRecomputed raised any (nil once a round is charged): the state
	// the writer planned its round in progress from (RecordedRound).
	loaded []loadedClass
	// memo caches after's PLD results until the next Charge: planning
	// checks the caps (fits) with the same compositions that Charge then
	// records, each costing a full PLD composition of the class history.
	memo map[afterKey]afterResult
}

type afterKey struct {
	c            *class
	sigma, q, pi float64
	steps        int
}

type afterResult struct {
	res  privacy.Guarantee
	acct privacy.Accountant
}

type class struct {
	budget Budget
	count  int
	// acct is the class's one accountant (any registered kind; the RDP
	// accountant under AccountingPaper, where it stays empty).
	acct   privacy.Accountant
	spent  float64   // ε at budget.Delta of acct (0 before any step)
	order  float64   // Rényi order attaining spent
	rounds []float64 // ε increments per charged round
	// retired is set once a charged round allotted the class its whole
	// remaining budget (see Round.Retires): it is never sampled again.
	retired bool
	// deltaSpent is Σ_R π_{i,R}·δ_R under AccountingPaper (Theorem 4.2's
	// δ per round, summed by Theorem 4.3); unused under AccountingRDP.
	deltaSpent float64
}

// Round is the plan of one round and, once charged, what it spent.
type Round struct {
	// Index is the 0-based round number.
	Index int `json:"index"`
	// Tau is the threshold τ_R, Sigma the noise multiplier σ_R, Q the base
	// sampling rate q (example i's per-step rate is Q·Rates[class(i)]) and
	// Steps the number of DP-SGD steps.
	Tau   float64 `json:"tau"`
	Sigma float64 `json:"sigma"`
	Q     float64 `json:"q"`
	Steps int     `json:"steps"`
	// Rates holds π per class (0 for an exhausted class), Caps the ε each
	// class may have spent in total after the round.
	Rates []float64 `json:"rates"`
	Caps  []float64 `json:"caps"`
	// Retires marks the classes whose cap is their whole budget (remaining
	// ≤ τ_R): charging the round retires them (see Plan).
	Retires []bool `json:"retires,omitempty"`
	// Eligible is the number of examples with budget left, Participants
	// the expected number of examples sampled in the round, Σ_i π_i (the
	// |D_R| of Algorithms 1 and 2).
	Eligible     int     `json:"eligible"`
	Participants float64 `json:"participants"`
	// Loss is the threshold loss at Tau.
	Loss float64 `json:"loss"`
	// RoundDelta is, under AccountingPaper, the δ_R at which the round's
	// DP-SGD is (≤ τ_R, δ_R)-DP (min over eligible classes of δ_i/k).
	RoundDelta float64 `json:"round_delta,omitempty"`
}

// DefaultAccounting is the accounting of a ledger made without a name:
// privacy.DefaultAccountant of the ledger's step, the Poisson-subsampled
// Gaussian (the PLD accountant).
func DefaultAccounting() Accounting {
	return Accounting(privacy.DefaultAccountant(mechanism(1, 1, 1)))
}

// NewLedger starts a ledger for the given budgets on the registered
// accountant name ("" means the default accountant of the ledger's step,
// privacy.DefaultAccountant): every budget class composes its
// Poisson-subsampled Gaussian steps at its own rates q·π on its own
// accountant, and is charged its certified ε(δ_i) (the per-example argument
// of AccountingRDP, on any accountant). cfg configures the accountants
// (cfg.Conversion, "" meaning privacy.DefaultConversion, is also the
// ledger's conversion); the ledger reads only certified upper bounds, and
// its classes share work (cfg.UpperOnly and cfg.Cache are set).
func NewLedger(budgets []Budget, name string, cfg privacy.AccountantConfig) (*Ledger, error) {
	if name == "" {
		name = string(DefaultAccounting())
	}
	conv := cfg.Conversion.OrDefault()
	if err := conv.Validate(); err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	if len(budgets) == 0 {
		return nil, errors.New("ledger: no budgets")
	}
	cfg.UpperOnly = true
	if cfg.Cache == nil {
		// Classes sampled at the same rate in a round (every class with
		// π = 1) compose the same mechanism.
		cfg.Cache = privacy.NewPLDCache()
	}
	l := &Ledger{conv: conv, acc: Accounting(name), class: make([]int, len(budgets))}
	index := map[Budget]int{}
	for i, b := range budgets {
		if err := checkBudget(b); err != nil {
			return nil, fmt.Errorf("ledger: example %d: %w", i, err)
		}
		k, ok := index[b]
		if !ok {
			acct, err := privacy.NewAccountant(name, cfg)
			if err != nil {
				return nil, fmt.Errorf("ledger: %w", err)
			}
			k = len(l.classes)
			index[b] = k
			l.classes = append(l.classes, &class{budget: b, acct: acct})
		}
		l.class[i] = k
		l.classes[k].count++
	}
	return l, nil
}

// Len returns the number of examples.
func (l *Ledger) Len() int { return len(l.class) }

// Rounds returns the charged rounds.
func (l *Ledger) Rounds() []Round { return append([]Round(nil), l.rounds...) }

// Budget returns example i's budget.
func (l *Ledger) Budget(i int) Budget { return l.classes[l.class[i]].budget }

// Spent returns the ε example i has spent so far (at its δ_i).
func (l *Ledger) Spent(i int) float64 { return l.classes[l.class[i]].spent }

// SpentInRound returns the part of example i's ε charged in round r: the
// increase of its composed ε over the round (the increments sum to Spent).
func (l *Ledger) SpentInRound(i, r int) float64 { return l.classes[l.class[i]].rounds[r] }

// Remaining returns example i's budget still available to later rounds:
// ε_i − spent_i, or 0 once the example is retired (Retired).
func (l *Ledger) Remaining(i int) float64 { return l.classes[l.class[i]].remaining() }

// Retired reports whether example i was retired: a charged round allotted
// it its whole remaining budget, so it is never sampled again even if the
// accountant shows part of that allotment unspent (Unused).
func (l *Ledger) Retired(i int) bool { return l.classes[l.class[i]].retired }

// Unused returns ε_i − spent_i, the budget example i did not spend (for a
// retired example: forfeited).
func (l *Ledger) Unused(i int) float64 {
	c := l.classes[l.class[i]]
	return math.Max(c.budget.Epsilon-c.spent, 0)
}

func (c *class) remaining() float64 {
	if c.retired {
		return 0
	}
	return math.Max(c.budget.Epsilon-c.spent, 0)
}

// PlanRequest configures one round.
type PlanRequest struct {
	// Q is the base Poisson rate (batch/N); Steps the number of steps (with
	// a fixed Sigma: the most steps).
	Q     float64
	Steps int
	// Loss picks τ among the remaining budgets (Threshold).
	Loss Loss
	// MinThreshold sets τ to the smallest remaining budget, so every
	// eligible example has π = 1 (plain DP-SGD at min ε_i).
	MinThreshold bool
	// Sigma > 0 fixes the noise multiplier; the round then runs as many
	// steps (≤ Steps) as keep every class within its cap (AdaPDP's loop,
	// Algorithm 2). Sigma = 0 calibrates σ for exactly Steps steps.
	Sigma float64
	// UntilCaps (with Sigma > 0) makes Steps a safety bound only: the round
	// must end because one more step would take some class past its cap —
	// Algorithm 2's "while ‖ε − τ_T‖ ≤ β": the spend reaches τ_T (or the
	// class's whole remaining budget) within one step's increment, and never
	// passes it. Plan fails if Steps steps all fit.
	UntilCaps bool
	// DrawnBatch > 0 (AccountingPaper only) runs the round's steps on the
	// drawn D_R at the public rate min(1, DrawnBatch/Σ_i π_i) instead of Q:
	// Definition B.1's DP-SGD on D_s at rate batch/|D_s|, with |D_s| (a
	// function of the secret draw) replaced by its public expectation
	// Σ_i π_i, so that the rate stays a public constant as the DP-SGD
	// analysis the round's (τ_R, δ_R) rests on requires.
	DrawnBatch float64
}

// Plan chooses the next round: τ_R from the remaining budgets of eligible
// examples, π per class (Definition 4.1), the cap of each class
// (spent + min(remaining, τ_R): the ε_{i,R} of Theorem 4.5's proof), and σ_R
// = the largest over eligible classes of the σ that keeps that class within
// its cap given its history (Algorithm 4 with the class's own accountant as
// the history h and its own rate q·π). With every cap met, no example can
// exceed its budget. Plan fails when no example has budget left.
//
// Retirement. A class with remaining ≤ τ_R is allotted its whole remaining
// budget (cap = ε_i) and is retired when the round is charged: Algorithm 1's
// step 11 leaves it max(ε_i − ε', 0) = 0. The RDP accountant usually shows
// such a class spent less than its cap — σ_R is set by the most demanding
// class, and the accountant is tighter than the allotment — but that slack
// is not kept for later rounds. Keeping it is what made loss_a collapse:
// every class sampled at π < 1 ended the round with a small positive
// leftover, loss_a (≈ 2·min(waste_u, waste_s)) then put τ_{R+1} at those
// leftovers (0.006, then 1e-5 on MNIST), and the calibrated σ for such τ
// (1.4, then 31) destroyed the model. Retiring only stops spending, so the
// ledger's guarantee is unchanged. A fixed-σ round (AdaPDP) that ends at
// its step limit before reaching the caps retires nobody.
func (l *Ledger) Plan(req PlanRequest) (Round, error) {
	if !(req.Q > 0 && req.Q <= 1) {
		return Round{}, fmt.Errorf("ledger plan: sampling rate q must be in (0, 1], got %v", req.Q)
	}
	if req.Steps < 1 {
		return Round{}, fmt.Errorf("ledger plan: steps must be ≥ 1, got %d", req.Steps)
	}
	if req.Sigma < 0 || math.IsNaN(req.Sigma) || math.IsInf(req.Sigma, 0) {
		return Round{}, fmt.Errorf("ledger plan: σ must be finite and ≥ 0, got %v", req.Sigma)
	}
	if l.paper() && len(l.rounds) >= l.paperRounds {
		return Round{}, fmt.Errorf("%w: paper accounting was set up for %d rounds (δ_R = δ_i/%d); round %d would exceed Δ", ErrExhausted, l.paperRounds, l.paperRounds, len(l.rounds)+1)
	}
	r := Round{Index: len(l.rounds), Q: req.Q, Steps: req.Steps,
		Rates: make([]float64, len(l.classes)), Caps: make([]float64, len(l.classes)),
		Retires: make([]bool, len(l.classes))}
	var values, counts []float64
	for _, c := range l.classes {
		if rem := c.remaining(); rem > MinRemaining {
			values = append(values, rem)
			counts = append(counts, float64(c.count))
			r.Eligible += c.count
		}
	}
	if r.Eligible == 0 {
		return Round{}, ErrExhausted
	}
	if req.MinThreshold {
		r.Tau = values[0]
		for _, v := range values {
			r.Tau = math.Min(r.Tau, v)
		}
		r.Loss = req.Loss.Value(values, counts, r.Tau)
	} else {
		minTau := 0.0
		if l.paper() {
			var err error
			if minTau, err = l.paperFloor(req); err != nil {
				return Round{}, err
			}
		}
		var err error
		if r.Tau, r.Loss, err = req.Loss.ThresholdFrom(values, counts, minTau); errors.Is(err, ErrNoThreshold) {
			return Round{}, fmt.Errorf("%w: every remaining budget is below %v, the least ε a round of %d steps can be certified at", ErrExhausted, minTau, req.Steps)
		} else if err != nil {
			return Round{}, fmt.Errorf("ledger plan: %w", err)
		}
	}
	for k, c := range l.classes {
		if rem := c.remaining(); rem > MinRemaining {
			r.Rates[k] = Rate(rem, r.Tau)
			r.Caps[k] = c.spent + math.Min(rem, r.Tau)
			r.Retires[k] = rem <= r.Tau
			r.Participants += float64(c.count) * r.Rates[k]
		} else {
			r.Caps[k] = c.spent
		}
	}
	if req.DrawnBatch > 0 {
		if !l.paper() || math.IsInf(req.DrawnBatch, 0) || !(r.Participants > 0) {
			return Round{}, fmt.Errorf("ledger plan: a batch over the drawn D_R (%v) needs paper accounting (Theorem 4.2) and participants, got %s and %v", req.DrawnBatch, l.acc, r.Participants)
		}
		r.Q = math.Min(1, req.DrawnBatch/r.Participants)
	}
	if l.paper() {
		r.RoundDelta = math.Inf(1)
		for k, c := range l.classes {
			if r.Rates[k] > 0 {
				r.RoundDelta = math.Min(r.RoundDelta, c.budget.Delta/float64(l.paperRounds))
			}
		}
	}
	var err error
	if req.Sigma > 0 {
		r.Sigma = req.Sigma
		if r.Steps, err = l.stepsThatFit(r); err == nil && r.Steps == req.Steps {
			if req.UntilCaps {
				return Round{}, fmt.Errorf("ledger plan: %d steps at σ = %v do not reach τ = %v (the round's safety bound)", req.Steps, r.Sigma, r.Tau)
			}
			// The step limit, not the budgets, ends this round: no class
			// is allotted its whole remaining budget, none retires.
			clear(r.Retires)
		}
	} else {
		r.Sigma, err = l.calibrate(r)
	}
	if err != nil {
		return Round{}, err
	}
	return r, nil
}

// ErrExhausted reports that no example has budget left.
var ErrExhausted = errors.New("ledger: every example's budget is spent")

// mechanism is the per-step mechanism for a class sampled at rate q·π.
func mechanism(sigma, q, pi float64) privacy.Mechanism {
	return privacy.PoissonSubsampled{Base: privacy.Gaussian{Sigma: sigma}, Q: q * pi}
}

// after returns the class's ε after steps more steps at (σ, q·π), with the
// class's accountant after them (memoized until the next Charge).
func (l *Ledger) after(c *class, sigma, q, pi float64, steps int) (privacy.Guarantee, privacy.Accountant, error) {
	key := afterKey{c: c, sigma: sigma, q: q, pi: pi, steps: steps}
	if m, ok := l.memo[key]; ok {
		return m.res, m.acct, nil
	}
	a := c.acct.CloneAccountant()
	if err := a.Compose(mechanism(sigma, q, pi), steps); err != nil {
		return privacy.Guarantee{}, nil, err
	}
	g, err := a.EpsilonFor(c.budget.Delta)
	if err != nil {
		return privacy.Guarantee{}, nil, err
	}
	if l.memo == nil {
		l.memo = map[afterKey]afterResult{}
	}
	l.memo[key] = afterResult{res: g, acct: a}
	return g, a, nil
}

// calibrate returns the smallest σ (to privacy.CalibrationTolerance) meeting
// every eligible class's cap after r.Steps steps.
func (l *Ledger) calibrate(r Round) (float64, error) {
	var sigma float64
	if l.paper() {
		// One (τ_R, δ_R)-DP DP-SGD run at rate q over D_R (Theorem 4.2's
		// A^{τ,δ}); no history (Theorem 4.3 composes the rounds).
		s, err := privacy.CalibrateSigma(privacy.CalibrationRequest{
			TargetEpsilon: r.Tau, Delta: r.RoundDelta, Q: r.Q, Steps: r.Steps, Accountant: privacy.KindRDP, Conversion: l.conv})
		if err != nil {
			return 0, fmt.Errorf("ledger plan: %w", err)
		}
		sigma = s
	}
	// Budget groups with the same rates in every round so far and the
	// same rate, cap and δ now ask the same question (their histories are
	// equal): one calibration answers all of them.
	asked := map[string]bool{}
	for _, k := range l.calibrationOrder(r) {
		c := l.classes[k]
		if r.Rates[k] == 0 || l.paper() {
			continue
		}
		key := l.requestKey(k, r)
		if asked[key] {
			continue
		}
		asked[key] = true
		// Algorithm 4 on the class's history. Floor: a class that already
		// meets its cap at the σ so far cannot raise the maximum, which
		// the calibrator checks with one evaluation (on the PLD
		// accountant, on its certified, coarser search grid first). With
		// many budget groups this keeps planning linear in the number of
		// classes with a small constant.
		req := privacy.CalibrationRequest{
			TargetEpsilon: r.Caps[k], Delta: c.budget.Delta, Q: r.Q * r.Rates[k], Steps: r.Steps,
			Prior: c.acct, Floor: sigma,
		}
		s, err := privacy.CalibrateSigma(req)
		if err != nil {
			return 0, fmt.Errorf("ledger plan: class ε = %v: %w", c.budget.Epsilon, err)
		}
		sigma = math.Max(sigma, s)
	}
	// The calibrator sums the prior and the new steps in its own order; make
	// sure the accountant's own sum meets every cap too (a last-bit
	// difference moves σ by at most a few tolerances).
	for try := 0; ; try++ {
		ok, err := l.fits(r, sigma, r.Steps)
		if err != nil {
			return 0, fmt.Errorf("ledger plan: %w", err)
		}
		if ok {
			return sigma, nil
		}
		if try == 100 {
			return 0, fmt.Errorf("ledger plan: calibrated σ = %v does not meet the caps", sigma)
		}
		sigma += privacy.CalibrationTolerance
	}
}

// calibrationOrder is the order in which calibrate asks the classes: the
// highest rate π first (ties: ledger order). The σ a class needs does not depend on the floor when the floor
// does not meet its cap (the calibrator then searches from scratch), and a
// floor that meets it is returned as is, so the maximum over the classes is
// the same in any order; the order only decides how many classes need a
// search rather than a single check of the floor. The classes at
// π = 1 usually bind (no conversion floor: they spend exactly τ_R), so
// asking them first leaves one cheap check to every other class.
func (l *Ledger) calibrationOrder(r Round) []int {
	order := make([]int, len(l.classes))
	for k := range order {
		order[k] = k
	}
	sort.SliceStable(order, func(a, b int) bool { return r.Rates[order[a]] > r.Rates[order[b]] })
	return order
}

// requestKey identifies class k's calibration question in round r: its
// rates in the charged rounds (which, with the rounds' public σ, q and
// steps, determine its history), its rate, its cap and its δ.
func (l *Ledger) requestKey(k int, r Round) string {
	var b strings.Builder
	for _, past := range l.rounds {
		fmt.Fprintf(&b, "%x,", math.Float64bits(past.Rates[k]))
	}
	c := l.classes[k]
	fmt.Fprintf(&b, "|%x|%x|%x", math.Float64bits(r.Rates[k]), math.Float64bits(r.Caps[k]), math.Float64bits(c.budget.Delta))
	return b.String()
}

// fits reports whether every eligible class stays within its cap after
// steps steps at σ.
func (l *Ledger) fits(r Round, sigma float64, steps int) (bool, error) {
	for k, c := range l.classes {
		if r.Rates[k] == 0 {
			continue
		}
		var eps float64
		if l.paper() {
			inc, err := l.paperCharge(c, sigma, r.Q, r.Rates[k], steps)
			if err != nil {
				return false, err
			}
			eps = c.spent + inc
		} else {
			res, _, err := l.after(c, sigma, r.Q, r.Rates[k], steps)
			if err != nil {
				return false, err
			}
			eps = res.Epsilon
		}
		if eps > r.Caps[k] || eps > c.budget.Epsilon {
			return false, nil
		}
	}
	return true, nil
}

// stepsThatFit returns the largest n ≤ r.Steps such that n steps at r.Sigma
// keep every class within its cap (0 if not even one step fits). Outside
// AccountingPaper n is the smallest of the classes' MaxSteps answers, checked
// with fits (the PLD accountant's greedy composition can be a step more
// cautious than the canonical one; never less safe, since fits decides).
func (l *Ledger) stepsThatFit(r Round) (int, error) {
	if !l.paper() {
		// Each class's own allowance (Accountant.MaxSteps; on PLD O(log n)
		// compositions of powers, confirmed on the class's canonical
		// composition); the round runs the smallest, checked below on
		// every class, falling back to the search if that check fails.
		n := r.Steps
		for k, c := range l.classes {
			if r.Rates[k] == 0 {
				continue
			}
			m, err := c.acct.MaxSteps(mechanism(r.Sigma, r.Q, r.Rates[k]), math.Min(r.Caps[k], c.budget.Epsilon), c.budget.Delta, n)
			if err != nil {
				return 0, fmt.Errorf("ledger plan: %w", err)
			}
			n = min(n, m)
		}
		if n == 0 {
			return 0, nil
		}
		if ok, err := l.fits(r, r.Sigma, n); err != nil {
			return 0, fmt.Errorf("ledger plan: %w", err)
		} else if ok {
			return n, nil
		}
	}
	n := sort.Search(r.Steps, func(k int) bool {
		ok, err := l.fits(r, r.Sigma, k+1)
		return err != nil || !ok
	})
	// Re-check the answer (sort.Search treats errors as "does not fit").
	if n > 0 {
		ok, err := l.fits(r, r.Sigma, n)
		if err != nil {
			return 0, fmt.Errorf("ledger plan: %w", err)
		}
		if !ok {
			return 0, fmt.Errorf("ledger plan: %d steps at σ = %v do not fit", n, r.Sigma)
		}
	}
	return n, nil
}

// SampleRates returns the per-example, per-step Poisson rates q·π_i of
// round r (0 for exhausted examples).
func (l *Ledger) SampleRates(r Round) ([]float64, error) {
	if l.paper() {
		return nil, errors.New("ledger: paper accounting needs D_R drawn once per round (DrawRates), not per-step personalized rates: Theorem 4.2 does not cover per-step sampling")
	}
	if len(r.Rates) != len(l.classes) {
		return nil, fmt.Errorf("ledger: round has %d class rates, ledger %d classes", len(r.Rates), len(l.classes))
	}
	out := make([]float64, len(l.class))
	for i, k := range l.class {
		out[i] = r.Q * r.Rates[k]
	}
	return out, nil
}

// Charge records round r, which must be the next round: every class with
// π > 0 composes r.Steps Poisson-subsampled Gaussian steps at (σ, q·π). It
// fails, leaving the ledger unchanged, if the round's number is wrong or
// some class would exceed its cap or its budget — the loud failure that
// stops a run before it claims a guarantee it does not have.
func (l *Ledger) Charge(r Round) error { return l.charge(r, false) }

// charge is Charge; recorded (ChargeRecorded) widens the cap and budget
// checks by SpendTolerance and retires a class charged above its budget.
func (l *Ledger) charge(r Round, recorded bool) error {
	if r.Index != len(l.rounds) {
		return fmt.Errorf("ledger: charging round %d, but %d rounds are recorded (a round is charged exactly once)", r.Index, len(l.rounds))
	}
	if len(r.Rates) != len(l.classes) || len(r.Caps) != len(l.classes) || r.Retires != nil && len(r.Retires) != len(l.classes) {
		return fmt.Errorf("ledger: round %d has %d rates, %d caps and %d retirements for %d classes", r.Index, len(r.Rates), len(r.Caps), len(r.Retires), len(l.classes))
	}
	type update struct {
		acct  privacy.Accountant
		res   privacy.Guarantee
		delta float64
	}
	ups := make([]*update, len(l.classes))
	for k, c := range l.classes {
		pi := r.Rates[k]
		if pi == 0 || r.Steps == 0 {
			continue
		}
		if !(pi > 0 && pi <= 1) {
			return fmt.Errorf("ledger: round %d: rate π = %v of class ε = %v outside [0, 1]", r.Index, pi, c.budget.Epsilon)
		}
		if c.remaining() <= MinRemaining && !recorded {
			// (A recorded round's steps have run: they are charged.)
			return fmt.Errorf("ledger: round %d samples the exhausted class ε = %v", r.Index, c.budget.Epsilon)
		}
		var res privacy.Guarantee
		var a privacy.Accountant
		var inc float64
		var err error
		if l.paper() {
			inc, err = l.paperCharge(c, r.Sigma, r.Q, pi, r.Steps)
			res, a = privacy.Guarantee{Epsilon: c.spent + inc}, c.acct
		} else {
			res, a, err = l.after(c, r.Sigma, r.Q, pi, r.Steps)
			// A spend never falls: a class may hold a recorded spend
			// above its accountant's (adoptRecomputed).
			res.Epsilon = math.Max(res.Epsilon, c.spent)
			inc = res.Epsilon - c.spent
		}
		if err != nil {
			return fmt.Errorf("ledger: round %d: %w", r.Index, err)
		}
		budget, capK, beyond := c.budget.Epsilon, r.Caps[k], ""
		if recorded {
			budget, capK = budget*(1+SpendTolerance), capK*(1+SpendTolerance)
			beyond = fmt.Sprintf(" by more than SpendTolerance = %g relative (a round planned by an earlier accountant version)", SpendTolerance)
		}
		if res.Epsilon > budget {
			return fmt.Errorf("ledger: round %d would spend ε = %v of the %d examples with budget ε = %v%s: OVERSPEND, refused", r.Index, res.Epsilon, c.count, c.budget.Epsilon, beyond)
		}
		if res.Epsilon > capK {
			return fmt.Errorf("ledger: round %d would spend ε = %v of class ε = %v, above its round cap %v%s: refused", r.Index, res.Epsilon, c.budget.Epsilon, r.Caps[k], beyond)
		}
		ups[k] = &update{acct: a, res: res, delta: inc}
	}
	for k, c := range l.classes {
		inc := 0.0
		if u := ups[k]; u != nil {
			c.acct, c.spent, c.order, inc = u.acct, u.res.Epsilon, u.res.Order, u.delta
			// Above its budget only under ChargeRecorded (within
			// SpendTolerance): retired, the Guarantee states the excess.
			c.retired = c.retired || r.Retires != nil && r.Retires[k] || c.spent > c.budget.Epsilon
			if l.paper() {
				c.deltaSpent += r.Rates[k] * l.paperDelta(c)
			}
		}
		c.rounds = append(c.rounds, inc)
	}
	l.rounds = append(l.rounds, r)
	l.memo, l.loaded = nil, nil
	return nil
}

// SpendTolerance is the relative difference between a class's recorded
// spend and the spend its accountant recomputes that Check accepts:
// |recorded − recomputed| ≤ SpendTolerance·max(recorded, recomputed). It is
// privacy.RecertificationTolerance (why not zero, and the measured moves it
// covers, are stated there). The width does not weaken a guarantee:
// loading adopts the larger of the two spends (adoptRecomputed), so a
// recorded spend can only raise what the ledger counts as spent, never
// lower it below the certified one.
const SpendTolerance = privacy.RecertificationTolerance

// spendAgrees reports whether a recorded spend and a recomputed one agree
// to SpendTolerance (both finite and ≥ 0).
func spendAgrees(recorded, recomputed float64) bool {
	if recorded == recomputed {
		return true
	}
	if !(recorded >= 0 && recomputed >= 0) || math.IsInf(recorded, 0) || math.IsInf(recomputed, 0) {
		return false
	}
	return math.Abs(recorded-recomputed) <= SpendTolerance*math.Max(recorded, recomputed)
}

// Check recomputes every class's ε from its accountant and fails loudly if
// it differs from the recorded one by more than SpendTolerance (relative),
// if the per-round charges do not add up to the recorded one, or if any
// example's spent ε exceeds its budget ε_i — except a retired class whose
// re-certified spend (adoptRecomputed) exceeds its budget by at most
// SpendTolerance relative (class.inherited): that excess was spent under
// an earlier accountant version's bound, and the Guarantee states it.
func (l *Ledger) Check() error {
	var errs []error
	if l.paper() {
		errs = l.checkPaper()
	}
	inherited := make([]bool, len(l.classes))
	for k, c := range l.classes {
		if l.paper() {
			break
		}
		res, err := c.epsilon()
		if err != nil {
			return fmt.Errorf("ledger check: %w", err)
		}
		inherited[k] = c.inherited(res.Epsilon)
		if !spendAgrees(c.spent, res.Epsilon) {
			errs = append(errs, fmt.Errorf("class ε = %v: recorded spend %v, accountant says %v (relative difference above %g: tampered or corrupt)", c.budget.Epsilon, c.spent, res.Epsilon, SpendTolerance))
		}
		var sum float64
		for _, v := range c.rounds {
			sum += v
		}
		if math.Abs(sum-c.spent) > 1e-9*math.Max(1, c.spent) {
			errs = append(errs, fmt.Errorf("class ε = %v: round charges add up to %v, recorded spend %v", c.budget.Epsilon, sum, c.spent))
		}
		if len(c.rounds) != len(l.rounds) {
			errs = append(errs, fmt.Errorf("class ε = %v: %d round charges for %d rounds", c.budget.Epsilon, len(c.rounds), len(l.rounds)))
		}
	}
	for i, k := range l.class {
		c := l.classes[k]
		if c.spent > c.budget.Epsilon && !inherited[k] {
			errs = append(errs, fmt.Errorf("example %d spent ε = %v > its budget %v: OVERSPEND", i, c.spent, c.budget.Epsilon))
			break
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("ledger check failed: %w", errors.Join(errs...))
	}
	return nil
}

// inherited reports whether the class's spend above its budget (if any)
// is one adoptRecomputed or ChargeRecorded re-certified: the class is
// retired, its accountant's spend recomputed exceeds the budget too, and by
// at most SpendTolerance relative. Charge refuses any round that would
// overspend, so nothing else makes such a class; a recorded spend above
// the budget that the accountant does not confirm is an overspend.
func (c *class) inherited(recomputed float64) bool {
	return c.retired && recomputed > c.budget.Epsilon && c.spent <= c.budget.Epsilon*(1+SpendTolerance)
}

// adoptRecomputed makes every class's spend the larger of its recorded
// spend and the ε its accountant recomputes (which Check found to agree to
// SpendTolerance), so that a ledger written with an earlier version of an
// accountant (a PLD ledger before the proven FFT round-off charge) resumes
// without forgetting or re-spending budget. A raised spend is added to the
// class's last round charge (the per-round charges keep adding up to it); a
// class whose re-certified spend exceeds its budget is retired (never
// sampled again) and the Guarantee states the excess. A ledger written by
// this code is unchanged.
func (l *Ledger) adoptRecomputed() error {
	if l.paper() {
		return nil
	}
	l.loaded = make([]loadedClass, len(l.classes))
	for k, c := range l.classes {
		l.loaded[k] = loadedClass{spent: c.spent, retired: c.retired}
		res, err := c.epsilon()
		if err != nil {
			return fmt.Errorf("ledger: %w", err)
		}
		c.order = res.Order
		l.recertified = l.recertified || res.Epsilon != c.spent
		if !(res.Epsilon > c.spent) {
			continue
		}
		if len(c.rounds) == 0 || !spendAgrees(c.spent, res.Epsilon) {
			return fmt.Errorf("ledger: class ε = %v: recorded spend %v, accountant says %v", c.budget.Epsilon, c.spent, res.Epsilon)
		}
		c.rounds[len(c.rounds)-1] += res.Epsilon - c.spent
		c.spent = res.Epsilon
		if c.spent > c.budget.Epsilon {
			c.retired = true
		}
	}
	return nil
}

// Recertified reports whether the ledger, when loaded, held a recorded
// spend that its accountant now certifies differently (by at most
// SpendTolerance relative; the ledger holds the larger). Such a ledger was
// written with an earlier accountant version (a PLD ledger before the
// proven FFT round-off charge): its next round may be planned differently
// than that version planned it.
func (l *Ledger) Recertified() bool { return l.recertified }

// epsilon recomputes the class's ε at its δ from its accountant.
func (c *class) epsilon() (privacy.Guarantee, error) {
	return c.acct.EpsilonFor(c.budget.Delta)
}

// paper reports whether the ledger uses the paper's ε-level accounting
// (AccountingPaper) rather than per-example composition on its accountant.
func (l *Ledger) paper() bool { return l.acc == AccountingPaper }

// SameBudgets reports whether the ledger was made for these budgets.
func (l *Ledger) SameBudgets(b []Budget) bool {
	if len(b) != len(l.class) {
		return false
	}
	for i := range b {
		if b[i] != l.Budget(i) {
			return false
		}
	}
	return true
}
