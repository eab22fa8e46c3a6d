package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/privtrain/privtrain/aggregate"
	"github.com/privtrain/privtrain/datasets"
	"github.com/privtrain/privtrain/internal/fileutil"
	"github.com/privtrain/privtrain/model"
	"github.com/privtrain/privtrain/optim"
	"github.com/privtrain/privtrain/privacy"
	"github.com/privtrain/privtrain/randstream"
)

// Summary is the outcome of a training run (summary.json).
type Summary struct {
	Method       string  `json:"method"`
	Dataset      string  `json:"dataset"`
	Model        string  `json:"model"`
	Steps        int     `json:"steps"`
	StoppedBy    string  `json:"stopped_by"`
	TestAccuracy float64 `json:"test_accuracy"`
	// Epsilon is ε at Delta for the whole run, at the optimal Order (rdp)
	// or the PLD's certified upper bound (pld).
	Epsilon    float64 `json:"epsilon,omitempty"`
	Delta      float64 `json:"delta,omitempty"`
	Order      float64 `json:"order,omitempty"`
	Conversion string  `json:"conversion,omitempty"`
	// Recertified says why Epsilon exceeds the target ε (--target-epsilon):
	// the run stopped at its target under an earlier accountant version,
	// and this version certifies the same steps higher by at most
	// privacy.RecertificationTolerance relative (sgdJob.planLength).
	Recertified string `json:"recertified,omitempty"`

	// Accountant names the accountant of Epsilon: "rdp" or "pld"; with pld,
	// EpsilonOptimistic is the optimistic estimate at discretization
	// interval PLDInterval, or absent with EpsilonOptimisticOmitted saying
	// why (privacy.OptimisticOmitted: steps × interval could bias it low by
	// more than privacy.OptimisticBiasLimit). AccountingSeconds is the time
	// spent in budget checks and ε queries.
	Accountant               string  `json:"accountant,omitempty"`
	EpsilonOptimistic        float64 `json:"epsilon_optimistic,omitempty"`
	EpsilonOptimisticOmitted string  `json:"epsilon_optimistic_omitted,omitempty"`
	PLDInterval              float64 `json:"pld_interval,omitempty"`
	AccountingSeconds        float64 `json:"accounting_seconds,omitempty"`
	// Bounds lists the RDP bounds the accountant used (over all orders),
	// BoundAtOrder the one(s) at the optimal order, and Unproven whether any
	// was used outside its proven conditions (only with --allow-unproven).
	Bounds       []string `json:"bounds,omitempty"`
	BoundAtOrder []string `json:"bound_at_order,omitempty"`
	Unproven     bool     `json:"unproven,omitempty"`
	// PTR statistics: tests run, tests passed (TSUM released), pass rate,
	// final trim level F.
	PTRTests    int     `json:"ptr_tests,omitempty"`
	PTRPassed   int     `json:"ptr_passed,omitempty"`
	PTRPassRate float64 `json:"ptr_pass_rate,omitempty"`
	FinalF      int     `json:"final_f,omitempty"`

	// Guarantee states a personalized-DP run's (Φ, Δ)-PDP guarantee
	// (Theorem 4.5 of the personalized DP-SGD paper); empty otherwise.
	Guarantee string `json:"guarantee,omitempty"`

	// PrivacyRandomness says where the privacy noise and sampling came from
	// (secret, or a reproducible seed the guarantee assumes secret).
	// SecureNoise is true when the releases were floating-point safe
	// (the default; aggregate.Config.FloatNoise unset), FloatNoise when float noise
	// was asked for (--float-noise); Noise states what that means for the
	// guarantee in one sentence (noiseStatement).
	PrivacyRandomness string `json:"privacy_randomness,omitempty"`
	SecureNoise       bool   `json:"secure_noise,omitempty"`
	FloatNoise        bool   `json:"float_noise,omitempty"`
	Noise             string `json:"noise,omitempty"`

	// Operator-only diagnostics (not privatized): written to
	// private/summary.json, zero in the public summary.json.
	TrainLoss         float64 `json:"final_train_loss,omitempty"`
	CorruptedExamples int     `json:"corrupted_examples,omitempty"`
	Examples          int64   `json:"examples_processed,omitempty"`
	WallSeconds       float64 `json:"wall_seconds,omitempty"`
	ExamplesPerSecond float64 `json:"examples_per_second,omitempty"`
}

// checkpoint is state.json: everything besides the model needed to resume.
type checkpoint struct {
	Version    int             `json:"version"`
	NextStep   int             `json:"next_step"`
	ModelFile  string          `json:"model_file"`
	Accountant json.RawMessage `json:"accountant,omitempty"`
	// Rule is the aggregation rule's state (aggregate.Stateful), e.g. the
	// trim level F of tsum and ptr-tsum and ptr-tsum's test counts.
	Rule      json.RawMessage `json:"rule,omitempty"`
	Examples  int64           `json:"examples"`
	TrainSecs float64         `json:"train_seconds"`
	LastLoss  float64         `json:"last_loss"`
	// PDP is the personalized-DP state (pdpState) of pdp-* runs.
	PDP json.RawMessage `json:"pdp,omitempty"`
	// Optimizer is the optimizer's state (optim.Trainer.OptimizerState:
	// update count and moments); absent for plain SGD.
	Optimizer json.RawMessage `json:"optimizer,omitempty"`
	// Bound maps each piece the checkpoint binds to its SHA-256 (runstate.go).
	Bound map[string]string `json:"sha256"`

	// Version 2 held the rule's state at the top level; it is read into
	// Rule (upgrade) and never written.
	V2TrimLevel int `json:"trim_level,omitempty"`
	V2PTRTests  int `json:"ptr_tests,omitempty"`
	V2PTRPassed int `json:"ptr_passed,omitempty"`
}

// checkpointVersion 2 binds its pieces by SHA-256 and holds the PDP state;
// version 3 holds the rule's state under "rule".
const checkpointVersion = 3

// upgrade reads a version-2 checkpoint as version 3: its top-level trim
// level and PTR test counts are the state of the rule (tsum, ptr-tsum)
// under the keys the rule reads (aggregate.Stateful); rules without state
// ignore it.
func (ck *checkpoint) upgrade() error {
	if ck.Version != 2 {
		return nil
	}
	rule, err := json.Marshal(map[string]int{"trim_level": ck.V2TrimLevel, "ptr_tests": ck.V2PTRTests, "ptr_passed": ck.V2PTRPassed})
	if err != nil {
		return err
	}
	ck.Version, ck.Rule = checkpointVersion, rule
	ck.V2TrimLevel, ck.V2PTRTests, ck.V2PTRPassed = 0, 0, 0
	return nil
}

// Options controls a run's side effects.
type Options struct {
	// Progress receives the progress bar (nil: none).
	Progress io.Writer
	// Resume continues the run in cfg.Out from its checkpoint.
	Resume bool
	// Banner is written to Progress (a line) when the run has passed its
	// setup and starts stepping: refusals print nothing.
	Banner string
	// Foreign names files of the caller's own that the directory of a new
	// run may already hold (a grid cell's cell.json and .cell.lock); any
	// other file in a directory holding no run is refused (checkNewRunDir).
	Foreign []string
}

// SetupError is an error Train found before its first step: an invalid
// configuration, a run directory in use or inconsistent, missing data. The
// run directory is then as it was (a directory Train created is removed).
type SetupError struct{ Err error }

func (e *SetupError) Error() string { return e.Err.Error() }
func (e *SetupError) Unwrap() error { return e.Err }

// Train runs one training job as configured, writing its run directory, and
// returns the summary. A cancelled ctx checkpoints and returns ctx.Err().
// Errors before the first step are *SetupError.
func Train(ctx context.Context, cfg TrainConfig, opt Options) (*Summary, error) {
	var run func() (*Summary, error)
	sum, err := setupTrain(ctx, cfg, opt, &run)
	if err != nil {
		return sum, &SetupError{err}
	}
	return run()
}

// setupTrain validates, locks and prepares the run directory and builds the
// job; *run is then the training itself.
func setupTrain(ctx context.Context, cfg TrainConfig, opt Options, run *func() (*Summary, error)) (sum *Summary, err error) {
	pdp := cfg.pdp()
	if pdp {
		cfg.PDP.FillDefaults() // as the CLI's flag defaults
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := resolveRunConfig(&cfg, opt.Resume); err != nil {
		return nil, err
	}
	_, statErr := os.Stat(cfg.Out)
	created := os.IsNotExist(statErr)
	if !created && !opt.Resume {
		if err := checkNewRunDir(cfg.Out, opt.Foreign); err != nil {
			return nil, err
		}
	}
	// One writer per run directory, for the life of this call.
	lock, err := fileutil.Lock(cfg.Out)
	if err != nil {
		return nil, err
	}
	defer func() {
		// A run that failed before writing its configuration leaves
		// nothing: the directory if this call created it, else the lock
		// file and what it wrote under private/.
		if err != nil && lock != nil {
			if _, serr := os.Stat(filepath.Join(cfg.Out, configFile)); os.IsNotExist(serr) {
				if created {
					os.RemoveAll(cfg.Out)
				} else if !opt.Resume {
					os.RemoveAll(filepath.Join(cfg.Out, privateDir))
				}
				lock.ReleaseAndRemove()
			}
		}
		lock.Release() // unless handed over to *run (lock = nil)
	}()
	if _, err := fileutil.RemoveTemps(cfg.Out); err != nil {
		return nil, err
	}
	rp, err := prepareRunDir(&cfg, opt.Resume)
	if err != nil {
		return nil, err
	}
	var j stepJob
	if pdp {
		j, err = buildPDPJob(cfg, rp.ck)
	} else {
		j, err = buildJob(cfg, rp.ck)
	}
	if err != nil {
		return nil, err
	}
	if rp.fresh && !pdp {
		cfg.LRDecaySteps = j.base().cfg.LRDecaySteps // resolved cosine horizon
	}
	if rp.fresh && !pdp && cfg.EvalEvery == 0 {
		cfg.EvalEvery = j.base().epochSteps()
		j.base().cfg.EvalEvery = cfg.EvalEvery
	}
	if err := rp.commit(&cfg); err != nil {
		return nil, fmt.Errorf("run directory %s: %w", cfg.Out, err)
	}
	l := lock
	*run = func() (*Summary, error) {
		defer l.Release()
		if opt.Progress != nil && opt.Banner != "" {
			fmt.Fprintln(opt.Progress, opt.Banner)
		}
		return runJob(ctx, j, opt.Progress)
	}
	lock = nil // released by run
	return nil, nil
}

// resolveRunConfig records in cfg what its config.json states beyond the
// caller's settings: the noise mode, the key's source (a new run) and the
// data directory made absolute (so the run resumes from any working
// directory).
func resolveRunConfig(cfg *TrainConfig, resume bool) error {
	cfg.ResolveNoise() // config.json records the noise mode
	if cfg.Out == "" {
		return errors.New("invalid configuration: an output directory is required")
	}
	if !resume {
		if cfg.ReproducibleNoise {
			return errLegacyReproducible
		}
		cfg.NoiseKeySource = ""
		if cfg.NoiseKey != nil {
			cfg.NoiseKeySource = noiseKeySupplied
		}
	}
	if cfg.DataDir == "" {
		return nil
	}
	abs, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	cfg.DataDir = abs
	return nil
}

// sgdJob is a run of the SGD family (nonprivate, dpsgd, tsgd-gaussian,
// tsgd-ptr, nonprivate-robust): one trainer for the whole run, driven by
// the shared loop (runJob).
type sgdJob struct {
	*runBase
	model     model.Model
	trainer   *optim.Trainer
	agg       aggregate.Aggregator
	acct      privacy.Accountant
	acctTime  time.Duration
	corrupted int
	// recertified is Summary.Recertified (planLength).
	recertified string
}

func buildJob(cfg TrainConfig, resume *checkpoint) (*sgdJob, error) {
	b, err := newRunBase(cfg, resume)
	if err != nil {
		return nil, err
	}
	j := &sgdJob{runBase: b}

	gradCorruption, n, err := applyCorruption(cfg, j.train)
	if err != nil {
		return nil, err
	}
	j.corrupted = n

	var sampler optim.Sampler
	var key randstream.Key // privacy randomness: secret (privacyKey)
	if cfg.Private() {
		if key, err = privacyKey(cfg, resume != nil); err != nil {
			return nil, err
		}
		sampler, err = datasets.NewPoissonSamplerKey(j.train.N, j.q, key.Derive("sampler"))
	} else {
		sampler, err = datasets.NewShuffleSampler(j.train.N, int(math.Round(j.expected)), optim.DeriveSeed(cfg.Seed, "sampler"))
	}
	if err != nil {
		return nil, fmt.Errorf("sampler: %w", err)
	}
	if j.model, err = j.initialModel(j.modelSpec(), resume); err != nil {
		return nil, err
	}

	if err := j.buildAggregator(cfg); err != nil {
		return nil, err
	}
	if err := addRuleSummary(&Summary{}, j.agg); err != nil {
		return nil, err
	}
	if st, ok := j.agg.(aggregate.Stateful); ok && resume != nil {
		if len(resume.Rule) == 0 {
			return nil, fmt.Errorf("resume %s: the checkpoint holds no state of rule %s", cfg.Out, j.agg.Name())
		}
		if err := st.UnmarshalState(resume.Rule); err != nil {
			return nil, fmt.Errorf("resume %s: %w", cfg.Out, err)
		}
	}

	if err := cfg.resolveDecaySteps(j.train.N, j.expected); err != nil {
		return nil, err
	}
	j.cfg.LRDecaySteps = cfg.LRDecaySteps
	tc := optim.Config{
		Optimizer: cfg.optimConfig(), Accumulate: cfg.Accumulate,
		Model: j.model, Data: j.train, Labels: true, Sampler: sampler, Aggregator: j.agg,
		LR:    cfg.LR, // R is the rule's (aggregate.Clipping)
		Delta: cfg.Delta, Conversion: j.conv,
		Bound: privacy.SubsampleBound(cfg.Bound), AllowUnproven: cfg.AllowUnproven,
		Corruption: gradCorruption, Seed: optim.DeriveSeed(cfg.Seed, "noise"),
	}
	if cfg.Private() {
		tc.NoiseKey = key.Derive("noise")
	}
	if p := cfg.method().Policy; p != nil {
		tc.Policy = p(&cfg, j.expected)
	}
	if cfg.Private() {
		stepMech, err := aggregate.PlannedMechanism(j.agg)
		if err != nil {
			return nil, err
		}
		if j.acct, err = newAccountant(cfg, privacy.PoissonSubsampled{Base: stepMech, Q: j.q}, j.conv, resume); err != nil {
			return nil, err
		}
		if resume != nil && j.acct.Steps() != resume.NextStep {
			return nil, fmt.Errorf("resume %s: the accountant history holds %d steps, the checkpoint is at step %d", cfg.Out, j.acct.Steps(), resume.NextStep)
		}
		tc.Accountant = j.acct
		j.history = j.acct
	}
	if j.trainer, err = optim.NewTrainer(tc); err != nil {
		return nil, err
	}
	if resume != nil {
		if err := j.trainer.RestoreOptimizerState(resume.Optimizer); err != nil {
			return nil, fmt.Errorf("resume %s: %w", cfg.Out, err)
		}
	}
	return j, j.planLength()
}

// buildAggregator creates the method's aggregation rule (Method.Rule; none
// for nonprivate); a private rule states its own step mechanism
// (aggregate.Planned), which the trainer accounts.
func (j *sgdJob) buildAggregator(cfg TrainConfig) error {
	rule := cfg.method().Rule
	if rule == nil {
		return nil
	}
	name, ac := rule(&cfg, cfg.aggregateConfig(j.expected))
	if name == "" {
		return nil
	}
	agg, err := aggregate.New(name, ac)
	if err != nil {
		return fmt.Errorf("aggregator: %w", err)
	}
	j.agg = agg
	return nil
}

// planLength fixes the last step from the configured steps/epochs and, for
// a target ε, the largest number of steps whose composition stays within it.
func (j *sgdJob) planLength() error {
	if j.acct != nil {
		// One step composed on a copy: a bound that cannot be used (say the
		// white-box bound outside its conditions) fails here, before the run
		// directory is written.
		one := j.acct.CloneAccountant()
		if err := one.Compose(j.trainer.StepMechanism(), 1); err != nil {
			return fmt.Errorf("invalid configuration: %w", err)
		}
		if _, err := one.EpsilonFor(j.cfg.Delta); err != nil {
			return fmt.Errorf("invalid configuration: %w", err)
		}
	}
	limit := math.MaxInt
	j.stoppedBy = "budget"
	if j.cfg.Steps > 0 {
		limit, j.stoppedBy = j.cfg.Steps, "steps"
	} else if j.cfg.Epochs > 0 {
		limit, j.stoppedBy = int(math.Ceil(j.cfg.Epochs*float64(j.train.N)/j.expected)), "epochs"
	}
	if j.cfg.TargetEpsilon > 0 {
		t0 := time.Now()
		// The search never looks past the configured length (--steps or
		// --epochs): its cost grows with the number of steps it may try.
		search := math.MaxInt32
		if limit < math.MaxInt {
			search = max(min(limit-j.acct.Steps(), search), 0)
		}
		b, err := j.acct.MaxSteps(j.trainer.StepMechanism(), j.cfg.TargetEpsilon, j.cfg.Delta, search)
		j.acctTime += time.Since(t0)
		if err != nil {
			return err
		}
		if b == 0 && j.acct.Steps() > 0 {
			// A resume whose target lies below what was already spent
			// would "finish" at once, reporting a budget the run exceeds.
			g, err := j.acct.EpsilonFor(j.cfg.Delta)
			if err != nil {
				return err
			}
			switch {
			case g.Epsilon <= j.cfg.TargetEpsilon:
			case privacy.WithinRecertification(j.cfg.TargetEpsilon, g.Epsilon):
				// An earlier accountant version stopped the run at its
				// target; this one certifies the same steps slightly
				// higher (docs/pld-evidence.md §9). The run is finished
				// at its target and reports the higher ε.
				j.recertified = fmt.Sprintf("the run stopped at its target ε = %v under an earlier accountant version; this version re-certifies its %d steps at ε = %v (%.3g relative above the target, within privacy.RecertificationTolerance = %g)",
					j.cfg.TargetEpsilon, j.acct.Steps(), g.Epsilon, g.Epsilon/j.cfg.TargetEpsilon-1, privacy.RecertificationTolerance)
			default:
				return fmt.Errorf("resume %s: target ε = %v is below the ε already spent (%.6g at δ = %g after %d steps): a run cannot be shortened", j.cfg.Out, j.cfg.TargetEpsilon, g.Epsilon, j.cfg.Delta, j.acct.Steps())
			}
		}
		if b == 0 && j.acct.Steps() == 0 {
			one := j.acct.CloneAccountant()
			if err := one.Compose(j.trainer.StepMechanism(), 1); err != nil {
				return err
			}
			r, err := one.EpsilonFor(j.cfg.Delta)
			if err != nil {
				return err
			}
			return fmt.Errorf("invalid configuration: target ε = %v is smaller than the ε of a single step (%.6g at δ = %g): no step fits; raise the target ε or σ", j.cfg.TargetEpsilon, r.Epsilon, j.cfg.Delta)
		}
		if total := j.acct.Steps() + b; total < limit {
			limit, j.stoppedBy = total, "budget"
		}
	}
	if limit < j.start {
		return fmt.Errorf("resume %s: the configured length (%d steps) is shorter than the %d steps already done; a run cannot be shortened", j.cfg.Out, limit, j.start)
	}
	j.until = limit
	return nil
}

// newAccountant starts an accountant, or restores it from the checkpoint.
// The kind is cfg.Accountant (any registered accountant), or by default
// privacy.DefaultAccountant of the subsampled step mechanism; a resumed run
// keeps the kind of its checkpoint (an explicit, different cfg.Accountant is
// an error).
func newAccountant(cfg TrainConfig, step privacy.Mechanism, conv privacy.Conversion, resume *checkpoint) (privacy.Accountant, error) {
	kind := cfg.Accountant
	if kind == "" {
		kind = privacy.DefaultAccountant(step)
	}
	acfg := privacy.AccountantConfig{Conversion: privacy.Conversion(cfg.Conversion), AllowUnproven: cfg.AllowUnproven, Interval: cfg.PLDInterval}
	if resume == nil {
		if err := privacy.CheckAccountant(kind, step); err != nil {
			return nil, fmt.Errorf("invalid configuration: method %s: %w; use accountant rdp", cfg.Method, err)
		}
		if _, err := privacy.NewAccountant(kind, acfg); err != nil {
			return nil, fmt.Errorf("invalid configuration: the step of %s is accounted with %s: %w", cfg.Method, strings.ToUpper(kind), err)
		}
	}
	if resume != nil {
		if len(resume.Accountant) == 0 {
			return nil, fmt.Errorf("resume %s: the checkpoint has no accountant history", cfg.Out)
		}
		acct, err := privacy.LoadAccountant(resume.Accountant, privacy.AccountantConfig{Conversion: conv})
		if err != nil {
			return nil, fmt.Errorf("resume: accountant history: %w", err)
		}
		if cfg.Accountant != "" && acct.Kind() != cfg.Accountant {
			return nil, fmt.Errorf("resume: the checkpoint was accounted with %s, not %s", acct.Kind(), cfg.Accountant)
		}
		return acct, nil
	}
	return privacy.NewAccountant(kind, acfg)
}

func (j *sgdJob) base() *runBase       { return j.runBase }
func (j *sgdJob) current() model.Model { return j.model }

// begin stops the run when the next step would exceed the target ε.
func (j *sgdJob) begin(step int, _ *runLogs) (string, error) {
	if j.cfg.TargetEpsilon <= 0 {
		return "", nil
	}
	// planLength already stops inside the budget; this re-check makes the
	// guarantee independent of that plan (looking no further than its end).
	t0 := time.Now()
	ok, err := j.trainer.NextStepFitsWithin(j.cfg.TargetEpsilon, j.until-step)
	j.acctTime += time.Since(t0)
	if err != nil || ok {
		return "", err
	}
	return "budget", nil
}

func (j *sgdJob) step(step int) (optim.StepResult, error) { return j.trainer.Step(step) }

func (j *sgdJob) end(int, optim.StepResult, *runLogs) (bool, error) { return false, nil }

func (j *sgdJob) describe(res optim.StepResult) string {
	// The console is the operator's: the loss is shown there.
	desc := fmt.Sprintf("%s loss %.3f", j.cfg.Method, res.Loss)
	if res.Accountant != "" {
		desc += fmt.Sprintf(" ε %.3f (%s)", res.Epsilon, res.Accountant)
	}
	return desc
}

func (j *sgdJob) where(step int) string { return fmt.Sprintf("at step %d", step) }

// save records the rule's and the optimizer's state.
func (j *sgdJob) save(ck *checkpoint) error {
	var err error
	if ck.Optimizer, err = j.trainer.OptimizerState(); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if st, ok := j.agg.(aggregate.Stateful); ok {
		var err error
		if ck.Rule, err = st.MarshalState(); err != nil {
			return fmt.Errorf("checkpoint: rule %s: %w", j.agg.Name(), err)
		}
	}
	return nil
}

// finish adds the rule's statistics, the test accuracy and the (ε, δ)
// report, and saves the final model.
func (j *sgdJob) finish(s *Summary) (pub, full any, err error) {
	s.CorruptedExamples = j.corrupted
	if err := addRuleSummary(s, j.agg); err != nil {
		return nil, nil, err
	}
	if j.acct != nil && j.acct.Steps() > 0 {
		t0 := time.Now()
		s.Accountant = j.acct.Kind()
		g, err := j.acct.EpsilonFor(j.cfg.Delta)
		if err != nil {
			return nil, nil, err
		}
		s.Epsilon, s.Delta, s.Order, s.Conversion, s.PLDInterval = g.Epsilon, g.Delta, g.Order, string(g.Conversion), g.Interval
		switch why := g.OptimisticOmitted(); {
		case why != "":
			s.EpsilonOptimisticOmitted = why
		case !math.IsNaN(g.Optimistic):
			s.EpsilonOptimistic = g.Optimistic
		}
		s.Bounds, s.BoundAtOrder = privacy.BoundsUsed(j.acct, g.Order)
		s.Unproven = !g.Proven
		s.Recertified = j.recertified
		j.acctTime += time.Since(t0)
		s.AccountingSeconds = (j.acctTime + j.trainer.StepEpsilonTime()).Seconds()
	}
	if s.TestAccuracy, err = j.finalModel(j.model); err != nil {
		return nil, nil, err
	}
	return publicSummary(*s), s, nil
}

// addRuleSummary sets the summary fields the rule reports
// (aggregate.Summarizer); a field the summary does not have is an error.
func addRuleSummary(s *Summary, rule aggregate.Aggregator) error {
	sm, ok := rule.(aggregate.Summarizer)
	if !ok {
		return nil
	}
	data, err := json.Marshal(sm.Summary())
	if err != nil {
		return fmt.Errorf("rule %s: summary: %w", rule.Name(), err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(s); err != nil {
		return fmt.Errorf("rule %s: its summary does not fit the run's summary: %w", rule.Name(), err)
	}
	return nil
}

// ptrOutcome is the PTR test's outcome of a step (NoPTRTest for rules
// without one), for the run audit's counts.
func ptrOutcome(r optim.StepResult) aggregate.PTROutcome {
	if d, ok := r.Rule.(aggregate.PTRDiagnostics); ok {
		return d.Branch
	}
	return aggregate.NoPTRTest
}

func sameModelSpec(a, b model.Spec) bool {
	if a.Arch != b.Arch || a.Classes != b.Classes || len(a.InputShape) != len(b.InputShape) || !a.Network.Equal(b.Network) {
		return false
	}
	for i := range a.InputShape {
		if a.InputShape[i] != b.InputShape[i] {
			return false
		}
	}
	return true
}

// newStepBar is the progress bar of a training run: total steps, steps/s,
// and a description the loop updates with loss and ε. When w is not a
// terminal (a batch job's log), it is a line every few seconds instead
// (newLineProgress); batch is the expected batch size, for examples/s.
func newStepBar(w io.Writer, method string, total int, batch float64) stepProgress {
	if !isTerminal(w) {
		return newLineProgress(w, method, total, batch, progressInterval())
	}
	return progressbar.NewOptions(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(method),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString("steps"),
		progressbar.OptionThrottle(500*time.Millisecond),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(w) }),
	)
}
