package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
	StoppedBy   string     `json:"stopped_by,omitempty"`
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
}

const pdpStateVersion = 2

type pdpJob struct {
	cfg         TrainConfig
	train, test *datasets.Dataset
	spec        model.Spec
	model       model.Model
	acct        *privacy.Accountant
	conv        privacy.Conversion
	q           float64
	budgetsDesc string
	resumed     bool
	st          pdpState
	// key keys the privacy randomness (see privacyKey).
	key randstream.Key
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

// pdpLength returns the number of rounds and steps per round.
func pdpLength(cfg TrainConfig, q float64) (rounds, steps int) {
	rounds = cfg.PDP.Rounds
	total := 0
	if cfg.Steps > 0 {
		total = cfg.Steps
	} else {
		total = rounds * int(math.Ceil(cfg.PDP.RoundEpochs/q))
	}
	if cfg.Method == "pdp-dpsgd" || cfg.Method == "pdp-sampling" {
		return 1, total
	}
	return rounds, (total + rounds - 1) / rounds
}

func buildPDPJob(cfg TrainConfig, ck *checkpoint) (*pdpJob, error) {
	dataDir := datasets.ResolveDataDir(cfg.DataDir)
	train, err := loadSplit(cfg, "train", dataDir)
	if err != nil {
		return nil, err
	}
	test, err := loadSplit(cfg, "test", dataDir)
	if err != nil {
		return nil, err
	}
	j := &pdpJob{cfg: cfg, train: train, test: test, conv: privacy.Conversion(cfg.Conversion), resumed: ck != nil}
	if j.conv == "" {
		j.conv = privacy.ConversionBBG
	}
	j.q = cfg.SamplingRate
	if j.q == 0 {
		j.q = float64(cfg.BatchSize) / float64(train.N)
	}
	if !(j.q > 0 && j.q <= 1) {
		return nil, fmt.Errorf("invalid configuration: sampling rate q = %v is not in (0, 1] (batch %d of %d examples)", j.q, cfg.BatchSize, train.N)
	}
	budgets, err := j.budgets()
	if err != nil {
		return nil, err
	}
	j.spec = model.Spec{Arch: cfg.Model, InputShape: train.Shape, Classes: train.Classes, Network: cfg.Network}
	rounds, roundSteps := pdpLength(cfg, j.q)
	if ck == nil {
		var ledger *pdpsgd.Ledger
		if cfg.PDP.accounting() == pdpsgd.AccountingPaper {
			ledger, err = pdpsgd.NewPaperLedger(budgets, j.conv, rounds)
		} else if cfg.PDP.accounting() == pdpsgd.AccountingPLD {
			ledger, err = pdpsgd.NewPLDLedger(budgets, cfg.PLDInterval)
		} else {
			ledger, err = pdpsgd.NewLedger(budgets, j.conv)
		}
		if err != nil {
			return nil, err
		}
		if j.model, err = model.New(j.spec, optim.DeriveSeed(cfg.Seed, "init")); err != nil {
			return nil, fmt.Errorf("model: %w", err)
		}
		if j.acct, err = privacy.NewAccountant(nil); err != nil {
			return nil, err
		}
		j.st = pdpState{Version: pdpStateVersion, Ledger: ledger, Rounds: rounds, RoundSteps: roundSteps}
		return j, nil
	}
	fail := func(format string, a ...any) (*pdpJob, error) {
		return nil, fmt.Errorf("resume %s: "+format, append([]any{cfg.Out}, a...)...)
	}
	if len(ck.PDP) == 0 {
		return fail("the checkpoint has no personalized-DP state (ledger, rounds)")
	}
	if err := json.Unmarshal(ck.PDP, &j.st); err != nil {
		return fail("personalized-DP state: %w", err)
	}
	if j.acct, err = privacy.NewAccountant(nil); err != nil {
		return nil, err
	}
	if len(ck.Accountant) == 0 {
		return fail("the checkpoint has no accountant history")
	}
	if err := json.Unmarshal(ck.Accountant, j.acct); err != nil {
		return fail("accountant: %w", err)
	}
	inRound := 0
	if j.st.Round != nil {
		inRound = 1
	}
	switch {
	case j.st.Version != pdpStateVersion:
		return fail("PDP state version %d, this trainer reads %d", j.st.Version, pdpStateVersion)
	case j.st.Ledger == nil || !j.st.Ledger.SameBudgets(budgets):
		return fail("the ledger's budgets differ from the configuration's")
	case cfg.PDP.Accounting != "" && j.st.Ledger.Accounting() != cfg.PDP.accounting():
		return fail("the run uses %s accounting, the configuration %s", j.st.Ledger.Accounting(), cfg.PDP.accounting())
	case j.st.Rounds != rounds || j.st.RoundSteps != roundSteps:
		return fail("the run was planned as %d rounds of %d steps, the configuration now gives %d of %d: the run length of a personalized run cannot change", j.st.Rounds, j.st.RoundSteps, rounds, roundSteps)
	case j.st.NextStep != ck.NextStep:
		return fail("the personalized-DP state is at step %d, the checkpoint at step %d", j.st.NextStep, ck.NextStep)
	case j.acct.Steps() != ck.NextStep:
		return fail("the accountant history holds %d steps, the checkpoint is at step %d", j.acct.Steps(), ck.NextStep)
	case j.st.NextRound < 0 || j.st.NextRound+inRound > j.st.Rounds:
		return fail("next round %d is outside the run's %d rounds", j.st.NextRound, j.st.Rounds)
	case len(j.st.Ledger.Rounds()) != j.st.NextRound || len(j.st.Reports) != j.st.NextRound:
		return fail("the ledger has charged %d rounds and the reports cover %d, but the state's next round is %d", len(j.st.Ledger.Rounds()), len(j.st.Reports), j.st.NextRound+1)
	case j.st.Round != nil && (j.st.Round.Start > ck.NextStep || ck.NextStep > j.st.Round.Start+j.st.Round.Steps):
		return fail("the round in progress spans steps %d–%d but the checkpoint is at step %d", j.st.Round.Start, j.st.Round.Start+j.st.Round.Steps, ck.NextStep)
	}
	done := 0 // steps of the finished rounds
	for _, r := range j.st.Reports {
		done += r.Steps
	}
	if start := ck.NextStep; j.st.Round != nil && j.st.Round.Start != done || j.st.Round == nil && start != done {
		return fail("the finished rounds hold %d steps, but the checkpoint is at step %d with round in progress %v", done, start, j.st.Round != nil)
	}
	if err := j.st.Ledger.Check(); err != nil {
		return fail("%w", err)
	}
	removeModelsExcept(cfg.Out, ck.ModelFile)
	if j.model, err = model.Load(filepath.Join(cfg.Out, ck.ModelFile)); err == nil && !sameModelSpec(j.model.Spec(), j.spec) {
		err = fmt.Errorf("checkpoint model %+v does not match the configuration %+v", j.model.Spec(), j.spec)
	}
	if err != nil {
		return fail("%w", err)
	}
	return j, nil
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
	req := pdpsgd.PlanRequest{Q: j.q, Steps: j.st.RoundSteps, Loss: j.cfg.PDP.loss()}
	switch j.cfg.Method {
	case "pdp-dpsgd":
		req.MinThreshold = true
	case "pdp-adapdp":
		req.Sigma = j.cfg.Sigma
	}
	return j.st.Ledger.Plan(req)
}

func (j *pdpJob) run(ctx context.Context, progress io.Writer) (*Summary, error) {
	metrics, err := openRunLogs(j.cfg.Out, j.st.NextStep)
	if err != nil {
		return nil, err
	}
	defer metrics.Close()
	if !j.resumed {
		// A round-0 checkpoint, so that even the first round can be resumed.
		if err := j.checkpoint(metrics); err != nil {
			return nil, err
		}
	}
	var bar stepProgress
	if progress != nil {
		bar = newStepBar(progress, j.cfg.Method, j.st.Rounds*j.st.RoundSteps, j.q*float64(j.train.N))
		bar.Set(j.st.NextStep)
	}
	for j.st.StoppedBy == "" && j.st.NextRound < j.st.Rounds {
		if err := j.round(ctx, metrics, bar); err != nil {
			return nil, err
		}
	}
	if bar != nil {
		bar.Finish()
	}
	return j.finish()
}

// round trains round j.st.NextRound (or continues the round in progress)
// and checkpoints after it, and every CheckpointEvery steps and on an
// interruption inside it. The ledger is charged only once, when the round
// completes; a resumed round re-derives its plan from the unchanged ledger
// and checks it against the recorded one.
func (j *pdpJob) round(ctx context.Context, metrics *runLogs, bar stepProgress) error {
	begin := time.Now()
	R := j.st.NextRound
	prog := j.st.Round
	t0 := time.Now()
	plan, err := j.plan()
	j.st.AcctSecs += time.Since(t0).Seconds()
	if prog == nil && (errors.Is(err, pdpsgd.ErrExhausted) || err == nil && plan.Steps == 0) {
		j.st.StoppedBy = "budget"
		return nil
	}
	if err != nil {
		return fmt.Errorf("round %d: %w", R+1, err)
	}
	if prog == nil {
		if skip, err := j.noiseGuard(metrics, plan); skip || err != nil {
			j.st.StoppedBy = "noise-guard"
			return err
		}
	}
	if prog != nil && (plan.Tau != prog.Tau || plan.Sigma != prog.Sigma || plan.Steps != prog.Steps) {
		return fmt.Errorf("resume: round %d re-planned as τ = %v, σ = %v, %d steps, but the checkpoint recorded τ = %v, σ = %v, %d steps", R+1, plan.Tau, plan.Sigma, plan.Steps, prog.Tau, prog.Sigma, prog.Steps)
	}
	var rates []float64
	if j.st.Ledger.Accounting() == pdpsgd.AccountingPaper {
		// D_R is drawn once for the round (Theorem 4.2); the steps then
		// sample it at the public rate q. |D_R| is not reported: it is a
		// function of the secret draw.
		rates, _, err = j.st.Ledger.DrawRates(plan, j.key.Derive(fmt.Sprintf("draw-round-%d", R)))
	} else {
		rates, err = j.st.Ledger.SampleRates(plan)
	}
	if err != nil {
		return err
	}
	ps, err := datasets.NewPersonalizedPoissonSamplerKey(rates, j.key.Derive("sampler"))
	if err != nil {
		return fmt.Errorf("round %d: sampler: %w", R+1, err)
	}
	var sampler datasets.PoissonSubsampler = ps
	if j.cfg.Method != "pdp-adapdp" {
		// The nominal batch q·N (see nominalBatch's history above).
		if sampler, err = datasets.WithExpectedBatchSize(ps, j.q*float64(j.train.N)); err != nil {
			return fmt.Errorf("round %d: sampler: %w", R+1, err)
		}
	}
	if j.cfg.Method == "pdp-adapdp" && prog == nil {
		j.model, err = model.New(j.spec, optim.DeriveSeed(j.cfg.Seed, fmt.Sprintf("init-round-%d", R)))
		if err != nil {
			return fmt.Errorf("model: %w", err)
		}
	}
	agg, err := aggregate.New("sum", aggregate.Config{Sigma: plan.Sigma, ClipNorm: j.cfg.ClipNorm})
	if err != nil {
		return fmt.Errorf("aggregator: %w", err)
	}
	// The trainer's accountant is the worst case, an example sampled at the
	// full rate q in every step; the ledger holds the personalized spend.
	tr, err := optim.NewTrainer(optim.Config{
		Model: j.model, Data: j.train, Labels: true, Sampler: sampler, Aggregator: agg,
		ClipNorm: j.cfg.ClipNorm, LR: j.cfg.LR, Q: j.q, Accountant: &privacy.RDPAccounting{Acc: j.acct},
		Delta: j.cfg.Delta, Conversion: j.conv,
		Seed: optim.DeriveSeed(j.cfg.Seed, "noise"), NoiseKey: j.key.Derive("noise"),
	})
	if err != nil {
		return err
	}
	if prog == nil {
		prog = &pdpProgress{Tau: plan.Tau, Sigma: plan.Sigma, Steps: plan.Steps, Start: j.st.NextStep}
	}
	if j.st.NextStep == prog.Start {
		// The round's header record (kept by openMetrics once a step of the
		// round is checkpointed).
		if err := metrics.public.Write(map[string]any{"step": prog.Start, "round": R + 1, "tau": plan.Tau, "sigma": plan.Sigma,
			"round_steps": plan.Steps, "eligible": plan.Eligible, "participants": plan.Participants}); err != nil {
			return err
		}
	}
	spend, err := newPDPSpend(j.st.Ledger, plan, prog.Start, &j.st.StepEpsSecs)
	if err != nil {
		return fmt.Errorf("round %d: %w", R+1, err)
	}
	end := prog.Start + plan.Steps
	for step := j.st.NextStep; step < end; step++ {
		if err := ctx.Err(); err != nil {
			prog.Seconds += time.Since(begin).Seconds()
			j.st.Round = prog
			if cerr := j.checkpoint(metrics); cerr != nil {
				return errors.Join(err, cerr)
			}
			return fmt.Errorf("interrupted in round %d at step %d (checkpoint written; continue with --resume): %w", R+1, step, err)
		}
		res, err := tr.Step(step)
		if err != nil {
			return fmt.Errorf("round %d: %w", R+1, err)
		}
		prog.Examples += int64(res.BatchSize)
		prog.LastLoss = res.Loss
		j.st.NextStep = step + 1
		b, err := spend.logStep(metrics, res)
		if err != nil {
			return fmt.Errorf("round %d: %w", R+1, err)
		}
		if bar != nil {
			bar.Describe(fmt.Sprintf("%s round %d/%d loss %.3f ε %.3f (%s, group ε_i %.3g)", j.cfg.Method, R+1, j.st.Rounds, res.Loss, b.Epsilon, b.Accounting, b.Group.Epsilon))
			bar.Add(1)
		}
		if ce := j.cfg.CheckpointEvery; ce > 0 && (step+1)%ce == 0 && step+1 < end {
			prog.Seconds += time.Since(begin).Seconds()
			begin = time.Now()
			j.st.Round = prog
			if err := j.checkpoint(metrics); err != nil {
				return err
			}
		}
	}
	// Charge the ledger: it refuses (and the run stops) if any example would
	// exceed its budget.
	t0 = time.Now()
	if err := j.st.Ledger.Charge(plan); err != nil {
		return err
	}
	j.st.AcctSecs += time.Since(t0).Seconds()
	acc, err := Accuracy(j.model, j.test.X, j.test.Labels, j.test.Dim())
	if err != nil {
		return err
	}
	if err := metrics.public.Write(map[string]any{"step": end - 1, "round": R + 1, "test_accuracy": acc}); err != nil {
		return err
	}
	j.st.Round = nil
	j.st.NextRound, j.st.NextStep = R+1, end
	j.st.Examples += prog.Examples
	j.st.LastLoss = prog.LastLoss
	rep := PDPRound{Round: R + 1, Tau: plan.Tau, Sigma: plan.Sigma, Steps: plan.Steps, Eligible: plan.Eligible,
		Participants: plan.Participants, Loss: plan.Loss, TestAccuracy: acc, Seconds: prog.Seconds + time.Since(begin).Seconds()}
	j.st.Reports = append(j.st.Reports, rep)
	j.st.TrainSecs += rep.Seconds
	if j.cfg.Method == "pdp-adapdp" {
		name := fmt.Sprintf("round-%d.bin", R+1)
		if err := model.Save(filepath.Join(j.cfg.Out, name), j.model); err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
		j.st.RoundModels = append(j.st.RoundModels, name)
		j.st.Weights = append(j.st.Weights, plan.Tau*plan.Participants)
	}
	return j.checkpoint(metrics)
}

// checkpoint writes the model, then state.json (the commit point: the PDP
// state, the accountant and the SHA-256 of every piece), then ledger.csv,
// and removes older model files.
func (j *pdpJob) checkpoint(metrics *runLogs) error {
	if err := metrics.Sync(); err != nil {
		return err
	}
	ck := checkpoint{Version: checkpointVersion, NextStep: j.st.NextStep, ModelFile: modelFileName(j.st.NextStep),
		Examples: j.st.Examples, TrainSecs: j.st.TrainSecs, LastLoss: j.st.LastLoss}
	if err := model.Save(filepath.Join(j.cfg.Out, ck.ModelFile), j.model); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	var err error
	if ck.Accountant, err = json.Marshal(j.acct); err != nil {
		return fmt.Errorf("checkpoint: accountant: %w", err)
	}
	if ck.PDP, err = json.Marshal(j.st); err != nil {
		return fmt.Errorf("checkpoint: personalized-DP state: %w", err)
	}
	if err := bind(j.cfg.Out, &j.cfg, &ck); err != nil {
		return err
	}
	if err := writeJSONAtomic(filepath.Join(j.cfg.Out, stateFile), ck); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := j.writeLedgerCSV(); err != nil {
		return err
	}
	removeModelsExcept(j.cfg.Out, ck.ModelFile)
	return nil
}

// writeLedgerCSV writes ledger.csv crash-safely (fsynced before the rename).
func (j *pdpJob) writeLedgerCSV() error {
	if err := fileutil.WriteAtomicFunc(filepath.Join(j.cfg.Out, ledgerCSV), j.st.Ledger.WriteCSV); err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	return nil
}

func (j *pdpJob) finish() (*Summary, error) {
	if j.st.StoppedBy == "" {
		j.st.StoppedBy = "rounds"
	}
	if len(j.st.Reports) == 0 {
		return nil, fmt.Errorf("%s: no round could be trained within the budgets (σ = %v too small for a single step?)", j.cfg.Method, j.cfg.Sigma)
	}
	// The final check: fails loudly if any example overspent.
	g, err := j.st.Ledger.Guarantee()
	if err != nil {
		return nil, err
	}
	s := &Summary{Method: j.cfg.Method, Dataset: j.cfg.Dataset, Model: j.cfg.Model,
		Steps: j.st.NextStep, StoppedBy: j.st.StoppedBy, TrainLoss: j.st.LastLoss,
		Examples: j.st.Examples, WallSeconds: j.st.TrainSecs,
		// Every example i is (spent_i, δ_i)-DP, so the run is (max spent, max δ)-DP.
		Epsilon: g.SpentMax, Delta: g.DeltaMax, Order: g.WorstOrder, Conversion: string(j.conv),
		Guarantee: g.Statement, PrivacyRandomness: randomnessNote(j.cfg)}
	if s.WallSeconds > 0 {
		s.ExamplesPerSecond = float64(s.Examples) / s.WallSeconds
	}
	s.AccountingSeconds = j.st.AcctSecs + j.st.StepEpsSecs
	s.Bounds, s.BoundAtOrder = boundsUsed(j.acct, g.WorstOrder)
	rep := PDPReport{Method: j.cfg.Method, Budgets: j.budgetsDesc, Rounds: j.st.Reports,
		Iterations: j.st.NextStep, Guarantee: g, Ledger: ledgerCSV, Skipped: j.st.Skipped, StepEpsilonSeconds: j.st.StepEpsSecs}
	if j.cfg.Method == "pdp-adapdp" {
		models := make([]model.Model, len(j.st.RoundModels))
		for i, name := range j.st.RoundModels {
			if models[i], err = model.Load(filepath.Join(j.cfg.Out, name)); err != nil {
				return nil, err
			}
		}
		if s.TestAccuracy, err = ensembleAccuracy(models, j.st.Weights, j.test.X, j.test.Labels, j.test.Dim()); err != nil {
			return nil, err
		}
		rep.EnsembleWeights = j.st.Weights
	} else {
		if s.TestAccuracy, err = Accuracy(j.model, j.test.X, j.test.Labels, j.test.Dim()); err != nil {
			return nil, err
		}
		if err := model.Save(filepath.Join(j.cfg.Out, finalModel), j.model); err != nil {
			return nil, err
		}
	}
	if err := j.writeLedgerCSV(); err != nil {
		return nil, err
	}
	pub := publicSummary(*s)
	return s, writeSummaries(j.cfg.Out, pdpSummary{Summary: &pub, PDP: rep}, pdpSummary{Summary: s, PDP: rep})
}
