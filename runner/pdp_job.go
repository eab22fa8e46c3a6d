package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"time"

	"github.com/privtrain/privtrain/aggregate"
	"github.com/privtrain/privtrain/datasets"
	"github.com/privtrain/privtrain/internal/fileutil"
	"github.com/privtrain/privtrain/model"
	"github.com/privtrain/privtrain/optim"
	"github.com/privtrain/privtrain/optim/pdpsgd"
	"github.com/privtrain/privtrain/privacy"
	"github.com/privtrain/privtrain/randstream"
)

// Files a personalized-DP run adds to the run directory (see rundir.go); its
// ledger, rounds and in-progress round are the "pdp" part of state.json:
//
//	ledger.csv       per-example budget ε_i, δ_i, ε charged per round, spent, remaining
//	round-<R>.bin    pdp-adapdp: the model of round R (1-based)
const ledgerCSV = "ledger.csv"

// PDPRound reports one round of a personalized-DP run.
type PDPRound struct {
	Round int     `json:"round"`
	Tau   float64 `json:"tau"`
	Sigma float64 `json:"sigma"`
	Steps int     `json:"steps"`
	// Q is the round's base sampling rate (batch/N; pdp-sampling's one-time
	// draw: batch/Σπ_i).
	Q float64 `json:"q,omitempty"`
	// Eligible examples had budget left; Participants = Σ_i π_i is the
	// expected |D_R|.
	Eligible     int     `json:"eligible"`
	Participants float64 `json:"participants"`
	Loss         float64 `json:"threshold_loss"`
	// TestAccuracy is that of the model after the round (pdp-adapdp: of
	// the round's own model).
	TestAccuracy float64 `json:"test_accuracy"`
	Seconds      float64 `json:"seconds"`
}

// PDPReport is the personalized-DP part of summary.json.
type PDPReport struct {
	Method     string           `json:"method"`
	Budgets    string           `json:"budgets"`
	Rounds     []PDPRound       `json:"rounds"`
	Iterations int              `json:"iterations"`
	Guarantee  pdpsgd.Guarantee `json:"guarantee"`
	// EnsembleWeights are τ_T·|D_T| of pdp-adapdp's rounds.
	EnsembleWeights []float64 `json:"ensemble_weights,omitempty"`
	Ledger          string    `json:"ledger"`
	// Skipped says why pdp-sgd's noise guard skipped a round and ended the
	// run (stopped_by "noise-guard").
	Skipped string `json:"skipped,omitempty"`
	// StepEpsilonSeconds is the part of the summary's accounting_seconds
	// spent on the per-step ε of metrics.jsonl (the rest plans and charges
	// the rounds).
	StepEpsilonSeconds float64 `json:"step_epsilon_seconds,omitempty"`
}

// pdpSummary is summary.json of a personalized-DP run.
type pdpSummary struct {
	*Summary
	PDP PDPReport `json:"pdp"`
}

// pdpState is the personalized-DP part of state.json (checkpoint.PDP);
// the accountant, model file and step counters of the checkpoint complete it.
type pdpState struct {
	Version    int            `json:"version"`
	NextRound  int            `json:"next_round"`
	NextStep   int            `json:"next_step"`
	RoundSteps int            `json:"round_steps"`
	Rounds     int            `json:"rounds"`
	Ledger     *pdpsgd.Ledger `json:"ledger"`
	// RoundModels are the models of finished pdp-adapdp rounds, with
	// Weights τ_T·|D_T|.
	RoundModels []string   `json:"round_models,omitempty"`
	Weights     []float64  `json:"weights,omitempty"`
	Reports     []PDPRound `json:"reports"`
	Examples    int64      `json:"examples"`
	TrainSecs   float64    `json:"train_seconds"`
	LastLoss    float64    `json:"last_loss"`
	// Round is the round in progress (nil between rounds): a checkpoint
	// inside a round resumes at its next step. Its ledger charge is made
	// only when the round completes.
	Round *pdpProgress `json:"round,omitempty"`

	// Skipped says why the noise guard skipped a round (StoppedBy
	// "noise-guard"). AcctSecs is the time spent planning and charging
	// rounds, StepEpsSecs the time spent on the per-step ε of the log
	// (pdp_epsilon.go).
	Skipped     string  `json:"skipped,omitempty"`
	AcctSecs    float64 `json:"accounting_seconds,omitempty"`
	StepEpsSecs float64 `json:"step_epsilon_seconds,omitempty"`
}

// pdpProgress is a round in progress: its plan (re-derived on resume from
// the unchanged ledger and checked against these values) and its partial
// counters.
type pdpProgress struct {
	Tau      float64 `json:"tau"`
	Sigma    float64 `json:"sigma"`
	Steps    int     `json:"steps"`
	Start    int     `json:"start"`
	Examples int64   `json:"examples"`
	LastLoss float64 `json:"last_loss"`
	Seconds  float64 `json:"seconds"`
	// Recorded is the round's whole plan when it was planned by an earlier
	// accountant version whose plan this one does not reproduce
	// (recordedPlan): the round continues and is charged on it
	// (pdpsgd.Ledger.ChargeRecorded). Absent for rounds planned by this
	// code, which re-plan bit for bit.
	Recorded *pdpsgd.Round `json:"recorded_plan,omitempty"`
}

const pdpStateVersion = 2

// pdpJob is a personalized-DP run, driven by the shared loop (runJob): its
// steps fall into rounds, each planned from the ledger with its own
// sampler and trainer.
type pdpJob struct {
	*runBase
	spec        model.Spec
	model       model.Model
	acct        *privacy.RDPAccountant
	budgetsDesc string
	st          pdpState
	// key keys the privacy randomness (see privacyKey).
	key randstream.Key
	// The round in progress (tr nil between rounds): its plan and trainer.
	round pdpsgd.Round
	tr    *optim.Trainer
	// spend follows the round's largest per-example ε for the step log;
	// bound is its value after the last step.
	spend *pdpSpend
	bound pdpsgd.SpendBound
}

// The nominal batch makes the trainer divide the released (clipped, noised) sum
// by the nominal batch q·N instead of the round's expected batch q·Σ_i π_i.
// The model of pdp-sgd, pdp-sampling and pdp-dpsgd is trained across rounds
// like Opacus' DPOptimizer, whose expected batch size is fixed when the
// model is made private: the paper swaps in its PDP sampler but keeps that
// normalisation. Dividing by q·Σπ instead keeps the step size while the
// participants shrink (to 3000 of 60000 in the last rounds on MNIST): every
// step then averages ~3 clipped gradients with noise σ·C, and the last rounds
// destroyed the model (MNIST test accuracy 75% → 10%). Both are public
// constants, so privacy is unaffected; the signal-to-noise ratio of a step
// is the same, only the step size scales with the participation Σπ/N.
// pdp-adapdp trains a fresh model per round on D_T and keeps the round's
// expected batch.
//
// (The wrapper is datasets.WithExpectedBatchSize, which keeps the sampler a
// datasets.PoissonSubsampler.)

// The two round lengths of pdp-adapdp (PDPConfig.AdaPDPRounds) and the two
// draws of pdp-sampling (PDPConfig.SamplingDraw).
const (
	// adaPDPThreshold is Algorithm 2: a round runs until its spend reaches
	// τ_T (within one step's increment, never past any class's cap; the
	// ledger's PlanRequest.UntilCaps), whatever the configured length.
	// adaPDPRoundLimit only bounds the ledger's search: a round that has
	// not reached τ_T after that many steps fails the run.
	adaPDPThreshold  = "threshold"
	adaPDPSteps      = "steps"
	adaPDPRoundLimit = 10_000_000

	// samplingPerStep samples example i at rate q·π_i in every step (the
	// per-example RDP/PLD argument of optim/pdpsgd; under --pdp-accounting
	// paper the ledger instead draws D_R once and steps sample it at q).
	// samplingOnce is Definition B.1: D_s is drawn once (example i with
	// probability π_i), then DP-SGD runs on D_s at the public rate
	// batch/Σ_i π_i (the paper's batch/|D_s| with |D_s| replaced by its
	// expectation, which is public), and σ is calibrated so that this
	// DP-SGD run is (τ, δ)-DP for add/remove in D_s; Theorem 4.2 then makes
	// example i (log(1 + π_i(e^τ − 1)), π_i·δ)-DP ≤ (min(ε_i, τ), δ)
	// (--pdp-accounting paper, with one round: δ_R = δ).
	samplingPerStep = "per-step"
	samplingOnce    = "once"
)

// adaPDPToThreshold reports whether a pdp-adapdp run's rounds run to τ_T.
func (c *PDPConfig) adaPDPToThreshold() bool { return c.AdaPDPRounds != adaPDPSteps }

// pdpLength returns the number of rounds and steps per round (pdp-adapdp
// run to τ_T: adaPDPRoundLimit, a bound only).
func pdpLength(cfg TrainConfig, q float64) (rounds, steps int) {
	v := cfg.method().pdp
	if v.ensemble && cfg.PDP.adaPDPToThreshold() {
		return cfg.PDP.Rounds, adaPDPRoundLimit
	}
	rounds = cfg.PDP.Rounds
	total := 0
	if cfg.Steps > 0 {
		total = cfg.Steps
	} else {
		total = rounds * int(math.Ceil(cfg.PDP.RoundEpochs/q))
	}
	if v.oneRound {
		return 1, total
	}
	return rounds, (total + rounds - 1) / rounds
}

func buildPDPJob(cfg TrainConfig, ck *checkpoint) (*pdpJob, error) {
	b, err := newRunBase(cfg, ck)
	if err != nil {
		return nil, err
	}
	j := &pdpJob{runBase: b}
	if j.key, err = privacyKey(cfg, ck != nil); err != nil {
		return nil, err
	}
	budgets, err := j.budgets()
	if err != nil {
		return nil, err
	}
	j.spec = j.modelSpec()
	rounds, roundSteps := pdpLength(cfg, j.q)
	j.until, j.stoppedBy = rounds*roundSteps, "rounds"
	if cfg.method().pdp.ensemble && cfg.PDP.adaPDPToThreshold() {
		// Rounds end at τ_T (begin stops the run after the last one).
		j.until = math.MaxInt
	}
	if ck == nil {
		return j, j.start(budgets, rounds, roundSteps)
	}
	if err := j.resume(ck, budgets, rounds, roundSteps); err != nil {
		return nil, fmt.Errorf("resume %s: %w", cfg.Out, err)
	}
	return j, nil
}

// newPDPLedger is the ledger of a new run for the configured accounting.
func newPDPLedger(cfg TrainConfig, budgets []pdpsgd.Budget, conv privacy.Conversion, rounds int) (*pdpsgd.Ledger, error) {
	if acc := cfg.PDP.accounting(); acc != pdpsgd.AccountingPaper {
		return pdpsgd.NewLedger(budgets, string(acc), privacy.AccountantConfig{Conversion: conv, Interval: cfg.PLDInterval})
	}
	return pdpsgd.NewPaperLedger(budgets, conv, rounds)
}

// start sets up a new run: its ledger, model, accountant and state.
func (j *pdpJob) start(budgets []pdpsgd.Budget, rounds, roundSteps int) error {
	ledger, err := newPDPLedger(j.cfg, budgets, j.conv, rounds)
	if err != nil {
		return err
	}
	if j.model, err = j.initialModel(j.spec, nil); err != nil {
		return err
	}
	if j.acct, err = privacy.NewRDPAccountant(nil); err != nil {
		return err
	}
	j.history = j.acct
	j.st = pdpState{Version: pdpStateVersion, Ledger: ledger, Rounds: rounds, RoundSteps: roundSteps}
	return nil
}

// resume restores a run from its checkpoint ck after checking it against
// the configuration (budgets, rounds, steps).
func (j *pdpJob) resume(ck *checkpoint, budgets []pdpsgd.Budget, rounds, roundSteps int) error {
	if len(ck.PDP) == 0 {
		return errors.New("the checkpoint has no personalized-DP state (ledger, rounds)")
	}
	if err := json.Unmarshal(ck.PDP, &j.st); err != nil {
		return fmt.Errorf("personalized-DP state: %w", err)
	}
	var err error
	if j.acct, err = privacy.NewRDPAccountant(nil); err != nil {
		return err
	}
	j.history = j.acct
	if len(ck.Accountant) == 0 {
		return errors.New("the checkpoint has no accountant history")
	}
	if err := json.Unmarshal(ck.Accountant, j.acct); err != nil {
		return fmt.Errorf("accountant: %w", err)
	}
	if err := j.checkResumed(ck, budgets, rounds, roundSteps); err != nil {
		return err
	}
	if j.model, err = j.initialModel(j.spec, ck); err != nil {
		return err
	}
	if p := j.st.Round; p != nil && p.Start < ck.NextStep {
		// The checkpoint's counters are those of the finished rounds; the
		// round in progress holds its own (see save).
		j.examples += p.Examples
		j.lastLoss = p.LastLoss
		j.trainSecs += p.Seconds
	}
	return nil
}

// checkResumed checks the restored state against the configuration and
// the checkpoint.
func (j *pdpJob) checkResumed(ck *checkpoint, budgets []pdpsgd.Budget, rounds, roundSteps int) error {
	cfg := j.cfg
	switch {
	case j.st.Version != pdpStateVersion:
		return fmt.Errorf("PDP state version %d, this trainer reads %d", j.st.Version, pdpStateVersion)
	case j.st.Ledger == nil || !j.st.Ledger.SameBudgets(budgets):
		return errors.New("the ledger's budgets differ from the configuration's")
	case cfg.PDP.Accounting != "" && j.st.Ledger.Accounting() != cfg.PDP.accounting():
		return fmt.Errorf("the run uses %s accounting, the configuration %s", j.st.Ledger.Accounting(), cfg.PDP.accounting())
	case j.st.Rounds != rounds || j.st.RoundSteps != roundSteps:
		return fmt.Errorf("the run was planned as %d rounds of %d steps, the configuration now gives %d of %d: the run length of a personalized run cannot change", j.st.Rounds, j.st.RoundSteps, rounds, roundSteps)
	case j.st.NextStep != ck.NextStep:
		return fmt.Errorf("the personalized-DP state is at step %d, the checkpoint at step %d", j.st.NextStep, ck.NextStep)
	case j.acct.Steps() != ck.NextStep:
		return fmt.Errorf("the accountant history holds %d steps, the checkpoint is at step %d", j.acct.Steps(), ck.NextStep)
	}
	if err := j.checkResumedRounds(ck); err != nil {
		return err
	}
	return j.st.Ledger.Check()
}

// checkResumedRounds checks the restored rounds against the checkpoint's
// step.
func (j *pdpJob) checkResumedRounds(ck *checkpoint) error {
	inRound := 0
	if j.st.Round != nil {
		inRound = 1
	}
	switch {
	case j.st.NextRound < 0 || j.st.NextRound+inRound > j.st.Rounds:
		return fmt.Errorf("next round %d is outside the run's %d rounds", j.st.NextRound, j.st.Rounds)
	case len(j.st.Ledger.Rounds()) != j.st.NextRound || len(j.st.Reports) != j.st.NextRound:
		return fmt.Errorf("the ledger has charged %d rounds and the reports cover %d, but the state's next round is %d", len(j.st.Ledger.Rounds()), len(j.st.Reports), j.st.NextRound+1)
	case j.st.Round != nil && (j.st.Round.Start > ck.NextStep || ck.NextStep > j.st.Round.Start+j.st.Round.Steps):
		return fmt.Errorf("the round in progress spans steps %d–%d but the checkpoint is at step %d", j.st.Round.Start, j.st.Round.Start+j.st.Round.Steps, ck.NextStep)
	}
	done := 0 // steps of the finished rounds
	for _, r := range j.st.Reports {
		done += r.Steps
	}
	if start := ck.NextStep; j.st.Round != nil && j.st.Round.Start != done || j.st.Round == nil && start != done {
		return fmt.Errorf("the finished rounds hold %d steps, but the checkpoint is at step %d with round in progress %v", done, start, j.st.Round != nil)
	}
	return nil
}

// budgets loads the budgets file or generates the paper's groups.
func (j *pdpJob) budgets() ([]pdpsgd.Budget, error) {
	p := j.cfg.PDP
	if p.BudgetsFile != "" {
		j.budgetsDesc = "file " + p.BudgetsFile
		return pdpsgd.LoadBudgets(p.BudgetsFile, j.train.N, j.cfg.Delta)
	}
	s := pdpsgd.GroupSpec{Groups: p.BudgetGroups, Min: p.BudgetMin, Max: p.BudgetMax, K: p.BudgetK}
	j.budgetsDesc = fmt.Sprintf("%d groups in [%g, %g], k = %g", s.Groups, s.Min, s.Max, s.K)
	return s.Generate(j.train.N, j.cfg.Delta, optim.DeriveSeed(j.cfg.Seed, "budgets"))
}

// plan is the next round's plan request for the method.
func (j *pdpJob) plan() (pdpsgd.Round, error) {
	return j.st.Ledger.Plan(j.planRequest())
}

// planRequest is the method's plan request for the next round.
func (j *pdpJob) planRequest() pdpsgd.PlanRequest {
	req := pdpsgd.PlanRequest{Q: j.q, Steps: j.st.RoundSteps, Loss: j.cfg.PDP.loss()}
	if plan := j.cfg.method().pdp.plan; plan != nil {
		plan(&j.cfg, j.q, j.train.N, &req)
	}
	return req
}

func (j *pdpJob) base() *runBase       { return j.runBase }
func (j *pdpJob) current() model.Model { return j.model }

// begin starts round j.st.NextRound at its first step (or continues the
// round in progress of a resumed run): it plans the round from the ledger,
// builds its sampler and trainer and logs the round's header. It stops the
// run when the rounds are done or no round fits in the budgets. The ledger
// is charged only once, when the round completes (end); a resumed round
// re-derives its plan from the unchanged ledger and checks it against the
// recorded one (a round an earlier accountant version planned continues on
// its recorded plan, recordedPlan).
func (j *pdpJob) begin(step int, metrics *runLogs) (string, error) {
	if j.tr != nil {
		return "", nil
	}
	if j.st.Round == nil && j.st.NextRound >= j.st.Rounds {
		return "rounds", nil
	}
	R := j.st.NextRound
	prog := j.st.Round
	plan, stop, err := j.planRound(metrics)
	if stop != "" || err != nil {
		return stop, err
	}
	sampler, err := j.roundSampler(plan)
	if err != nil {
		return "", err
	}
	if j.cfg.method().pdp.ensemble && prog == nil {
		j.model, err = model.New(j.spec, optim.DeriveSeed(j.cfg.Seed, fmt.Sprintf("init-round-%d", R)))
		if err != nil {
			return "", fmt.Errorf("model: %w", err)
		}
	}
	agg, err := j.roundAggregator(plan)
	if err != nil {
		return "", err
	}
	// The trainer's accountant is the worst case, an example sampled at the
	// full rate q in every step; the ledger holds the personalized spend.
	tr, err := optim.NewTrainer(optim.Config{
		Model: j.model, Data: j.train, Labels: true, Sampler: sampler, Aggregator: agg,
		LR: j.cfg.LR, Q: plan.Q, Accountant: &privacy.RDPAccounting{Acc: j.acct},
		Delta: j.cfg.Delta, Conversion: j.conv,
		Seed: optim.DeriveSeed(j.cfg.Seed, "noise"), NoiseKey: j.key.Derive("noise"),
	})
	if err != nil {
		return "", err
	}
	if prog == nil {
		prog = &pdpProgress{Tau: plan.Tau, Sigma: plan.Sigma, Steps: plan.Steps, Start: step}
	}
	if step == prog.Start {
		// The round's header record (kept by openMetrics once a step of the
		// round is checkpointed).
		if err := metrics.public.Write(map[string]any{"step": prog.Start, "round": R + 1, "tau": plan.Tau, "sigma": plan.Sigma,
			"round_steps": plan.Steps, "eligible": plan.Eligible, "participants": plan.Participants}); err != nil {
			return "", err
		}
	}
	spend, err := newPDPSpend(j.st.Ledger, plan, prog.Start, &j.st.StepEpsSecs)
	if err != nil {
		return "", fmt.Errorf("round %d: %w", R+1, err)
	}
	j.st.Round, j.round, j.tr, j.spend = prog, plan, tr, spend
	return "", nil
}

// planRound plans round j.st.NextRound from the ledger (a resumed round:
// re-plans it and checks the plan against the recorded one, recordedPlan);
// stop is "budget" or "noise-guard" when no new round is to run.
func (j *pdpJob) planRound(metrics *runLogs) (plan pdpsgd.Round, stop string, err error) {
	R, prog := j.st.NextRound, j.st.Round
	t0 := time.Now()
	plan, err = j.plan()
	j.st.AcctSecs += time.Since(t0).Seconds()
	if prog == nil && (errors.Is(err, pdpsgd.ErrExhausted) || err == nil && plan.Steps == 0) {
		return plan, "budget", nil
	}
	if err != nil {
		return plan, "", fmt.Errorf("round %d: %w", R+1, err)
	}
	if prog == nil {
		skip, err := j.noiseGuard(metrics, plan)
		if err != nil || !skip {
			return plan, "", err
		}
		return plan, "noise-guard", nil
	}
	if prog.Recorded == nil && plan.Tau == prog.Tau && plan.Sigma == prog.Sigma && plan.Steps == prog.Steps {
		return plan, "", nil
	}
	return j.recordedPlan(plan)
}

// recordedPlan is the plan of the resumed round in progress when re-planning
// it gave replanned, not the recorded τ, σ and steps: the round was planned
// by an earlier accountant version (docs/pld-evidence.md §9: the PLD fast
// path's proven FFT charge moves ε, hence τ and σ, by up to 1.4e-4
// relative). Its steps so far ran at the recorded plan's rates and σ, so the
// round continues on that plan (pdpsgd.Ledger.RecordedRound, or the plan
// already kept in the checkpoint) and is charged with this version's
// accountant when it ends (ChargeRecorded: a class landing above its budget
// by at most privacy.RecertificationTolerance relative is retired and the
// guarantee states the excess; beyond, the charge is refused). A recorded τ
// or σ further than that tolerance from the re-planned one is not an
// accountant version's difference: refused.
func (j *pdpJob) recordedPlan(replanned pdpsgd.Round) (pdpsgd.Round, string, error) {
	R, prog := j.st.NextRound, j.st.Round
	near := func(a, b float64) bool {
		return math.Abs(a-b) <= privacy.RecertificationTolerance*math.Max(math.Abs(a), math.Abs(b))
	}
	if !near(replanned.Tau, prog.Tau) || !near(replanned.Sigma, prog.Sigma) {
		return replanned, "", fmt.Errorf("resume: round %d re-planned as τ = %v, σ = %v, %d steps, but the checkpoint recorded τ = %v, σ = %v, %d steps (more than %g relative apart: not a round an earlier accountant version planned)",
			R+1, replanned.Tau, replanned.Sigma, replanned.Steps, prog.Tau, prog.Sigma, prog.Steps, privacy.RecertificationTolerance)
	}
	if p := prog.Recorded; p != nil {
		if p.Index != R || p.Tau != prog.Tau || p.Sigma != prog.Sigma || p.Steps != prog.Steps {
			return replanned, "", fmt.Errorf("resume: round %d: the recorded plan (round %d, τ = %v, σ = %v, %d steps) is not the round in progress (τ = %v, σ = %v, %d steps)", R+1, p.Index+1, p.Tau, p.Sigma, p.Steps, prog.Tau, prog.Sigma, prog.Steps)
		}
		return *p, "", nil
	}
	plan, err := j.st.Ledger.RecordedRound(j.planRequest(), prog.Tau, prog.Sigma, prog.Steps)
	if err != nil {
		return plan, "", fmt.Errorf("resume: round %d: %w", R+1, err)
	}
	prog.Recorded = &plan
	return plan, "", nil
}

// roundSampler is the round's personalized Poisson sampler on the secret
// key (at the nominal batch q·N unless the method trains an ensemble).
func (j *pdpJob) roundSampler(plan pdpsgd.Round) (datasets.PoissonSubsampler, error) {
	R := j.st.NextRound
	var rates []float64
	var err error
	if j.st.Ledger.Accounting() == pdpsgd.AccountingPaper {
		// D_R is drawn once for the round (Theorem 4.2); the steps then
		// sample it at the public rate q. |D_R| is not reported: it is a
		// function of the secret draw.
		rates, _, err = j.st.Ledger.DrawRates(plan, j.key.Derive(fmt.Sprintf("draw-round-%d", R)))
	} else {
		rates, err = j.st.Ledger.SampleRates(plan)
	}
	if err != nil {
		return nil, err
	}
	ps, err := datasets.NewPersonalizedPoissonSamplerKey(rates, j.key.Derive("sampler"))
	if err != nil {
		return nil, fmt.Errorf("round %d: sampler: %w", R+1, err)
	}
	if j.cfg.method().pdp.ensemble {
		return ps, nil
	}
	// The nominal batch q·N (see nominalBatch's history above).
	sampler, err := datasets.WithExpectedBatchSize(ps, j.q*float64(j.train.N))
	if err != nil {
		return nil, fmt.Errorf("round %d: sampler: %w", R+1, err)
	}
	return sampler, nil
}

// roundAggregator is the round's release: the sum with Gaussian noise σ_R
// (secure unless FloatNoise), checked to be exactly the mechanism the
// ledger charges.
func (j *pdpJob) roundAggregator(plan pdpsgd.Round) (aggregate.Aggregator, error) {
	agg, err := aggregate.New("sum", aggregate.Config{Sigma: plan.Sigma, ClipNorm: j.cfg.ClipNorm, FloatNoise: !j.cfg.SecureRelease()})
	if err != nil {
		return nil, fmt.Errorf("aggregator: %w", err)
	}
	// The ledger charges every example the Gaussian mechanism's curves at
	// σ_R: the release must be exactly that mechanism (the secure sum is
	// its floating-point-safe post-processing, docs/secure-release.md).
	if mech, err := aggregate.PlannedMechanism(agg); err != nil {
		return nil, fmt.Errorf("aggregator: %w", err)
	} else if mech != (privacy.Gaussian{Sigma: plan.Sigma}) {
		return nil, fmt.Errorf("round %d: the %s release is the mechanism %s, not the Gaussian mechanism with σ = %v that the personalized ledger charges", j.st.NextRound+1, noiseName(j.cfg.SecureRelease()), mech.Spec().Kind, plan.Sigma)
	}
	return agg, nil
}

func (j *pdpJob) step(step int) (optim.StepResult, error) {
	res, err := j.tr.Step(step)
	if err != nil {
		return res, fmt.Errorf("round %d: %w", j.st.NextRound+1, err)
	}
	return res, nil
}

// end completes the round after its last step: it charges the ledger (which
// refuses, and the run stops, if any example would exceed its budget),
// evaluates the round's model and asks for a checkpoint.
func (j *pdpJob) end(step int, _ optim.StepResult, metrics *runLogs) (bool, error) {
	R, plan, end := j.st.NextRound, j.round, j.st.Round.Start+j.round.Steps
	if step+1 < end {
		return false, nil
	}
	t0 := time.Now()
	charge := j.st.Ledger.Charge
	if j.st.Round.Recorded != nil {
		charge = j.st.Ledger.ChargeRecorded
	}
	if err := charge(plan); err != nil {
		return false, err
	}
	j.st.AcctSecs += time.Since(t0).Seconds()
	acc, err := Accuracy(j.model, j.test.X, j.test.Labels, j.test.Dim())
	if err != nil {
		return false, err
	}
	if err := metrics.public.Write(map[string]any{"step": end - 1, "round": R + 1, "test_accuracy": acc}); err != nil {
		return false, err
	}
	rep := PDPRound{Round: R + 1, Tau: plan.Tau, Sigma: plan.Sigma, Steps: plan.Steps, Q: plan.Q, Eligible: plan.Eligible,
		Participants: plan.Participants, Loss: plan.Loss, TestAccuracy: acc, Seconds: j.seconds() - j.st.TrainSecs}
	j.st.Round, j.tr = nil, nil
	j.st.NextRound = R + 1
	j.st.Examples, j.st.LastLoss, j.st.TrainSecs = j.examples, j.lastLoss, j.st.TrainSecs+rep.Seconds
	j.st.Reports = append(j.st.Reports, rep)
	if j.cfg.method().pdp.ensemble {
		name := fmt.Sprintf("round-%d.bin", R+1)
		if err := model.Save(filepath.Join(j.cfg.Out, name), j.model); err != nil {
			return false, fmt.Errorf("checkpoint: %w", err)
		}
		j.st.RoundModels = append(j.st.RoundModels, name)
		j.st.Weights = append(j.st.Weights, plan.Tau*plan.Participants)
	}
	return true, nil
}

func (j *pdpJob) describe(res optim.StepResult) string {
	b := j.bound
	return fmt.Sprintf("%s round %d/%d loss %.3f ε %.3f (%s, group ε_i %.3g)", j.cfg.Method, j.st.NextRound+1, j.st.Rounds, res.Loss, b.Epsilon, b.Accounting, b.Group.Epsilon)
}

// logStep logs step res with the ledger's largest per-example ε after it
// (pdp_epsilon.go) instead of the trainer's own accountant.
func (j *pdpJob) logStep(logs *runLogs, res optim.StepResult) error {
	b, err := j.spend.logStep(logs, res)
	if err != nil {
		return fmt.Errorf("round %d: %w", j.st.NextRound+1, err)
	}
	j.bound = b
	return nil
}

func (j *pdpJob) where(step int) string {
	return fmt.Sprintf("in round %d at step %d", j.st.NextRound+1, step)
}

// save adds the PDP state (ledger, rounds, the round in progress) to the
// checkpoint. Its counters are those of the finished rounds; a round in
// progress records its own examples, last loss and seconds.
func (j *pdpJob) save(ck *checkpoint) error {
	j.st.NextStep = ck.NextStep
	if p := j.st.Round; p != nil {
		p.Examples, p.LastLoss, p.Seconds = ck.Examples-j.st.Examples, ck.LastLoss, ck.TrainSecs-j.st.TrainSecs
	}
	ck.Examples, ck.LastLoss, ck.TrainSecs = j.st.Examples, j.st.LastLoss, j.st.TrainSecs
	var err error
	if ck.PDP, err = json.Marshal(j.st); err != nil {
		return fmt.Errorf("checkpoint: personalized-DP state: %w", err)
	}
	return nil
}

// afterSave writes ledger.csv after each checkpoint.
func (j *pdpJob) afterSave() error { return j.writeLedgerCSV() }

// writeLedgerCSV writes ledger.csv crash-safely (fsynced before the rename).
func (j *pdpJob) writeLedgerCSV() error {
	if err := fileutil.WriteAtomicFunc(filepath.Join(j.cfg.Out, ledgerCSV), j.st.Ledger.WriteCSV); err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	return nil
}

// finish checks every example's spend and reports the personalized
// guarantee, the rounds and the (ensemble) test accuracy.
func (j *pdpJob) finish(s *Summary) (pub, full any, err error) {
	if len(j.st.Reports) == 0 {
		return nil, nil, fmt.Errorf("%s: no round could be trained within the budgets (σ = %v too small for a single step?)", j.cfg.Method, j.cfg.Sigma)
	}
	// The final check: fails loudly if any example overspent.
	g, err := j.st.Ledger.Guarantee()
	if err != nil {
		return nil, nil, err
	}
	// Every example i is (spent_i, δ_i)-DP, so the run is (max spent, max δ)-DP.
	s.Epsilon, s.Delta = g.SpentMax, g.DeltaMax
	s.Guarantee = g.Statement
	s.Accountant = string(j.cfg.PDP.accounting())
	s.AccountingSeconds = j.st.AcctSecs + j.st.StepEpsSecs
	if g.Converted() {
		// The guarantee converts RDP curves: name the conversion, the worst
		// order and the bounds of the curves. Under PLD accounting none of
		// these enter the guarantee (the worst-case RDP tracker only feeds
		// the per-step log), so the summary names none.
		s.Order, s.Conversion = g.WorstOrder, string(j.conv)
		s.Bounds, s.BoundAtOrder = privacy.BoundsUsed(&privacy.RDPAccounting{Acc: j.acct}, g.WorstOrder)
	}
	rep := PDPReport{Method: j.cfg.Method, Budgets: j.budgetsDesc, Rounds: j.st.Reports,
		Iterations: s.Steps, Guarantee: g, Ledger: ledgerCSV, Skipped: j.st.Skipped, StepEpsilonSeconds: j.st.StepEpsSecs}
	if j.cfg.method().pdp.ensemble {
		models := make([]model.Model, len(j.st.RoundModels))
		for i, name := range j.st.RoundModels {
			if models[i], err = model.Load(filepath.Join(j.cfg.Out, name)); err != nil {
				return nil, nil, err
			}
		}
		if s.TestAccuracy, err = ensembleAccuracy(models, j.st.Weights, j.test.X, j.test.Labels, j.test.Dim()); err != nil {
			return nil, nil, err
		}
		rep.EnsembleWeights = j.st.Weights
	} else if s.TestAccuracy, err = j.finalModel(j.model); err != nil {
		return nil, nil, err
	}
	if err := j.writeLedgerCSV(); err != nil {
		return nil, nil, err
	}
	p := publicSummary(*s)
	return pdpSummary{Summary: &p, PDP: rep}, pdpSummary{Summary: s, PDP: rep}, nil
}
