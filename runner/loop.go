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

	"github.com/privtrain/privtrain/datasets"
	"github.com/privtrain/privtrain/model"
	"github.com/privtrain/privtrain/optim"
	"github.com/privtrain/privtrain/privacy"
)

// The shared job loop. Every training job (the SGD family in train.go, the
// personalized-DP methods in pdp_job.go) runs in one loop, runJob, which
// owns what all jobs share: the run logs, the progress bar, interruption,
// periodic evaluation, atomic checkpoints at intervals and at the end, the
// counters every summary reports, and the summary files. A job supplies
// only what is its own through the stepJob interface: how a step runs, what
// ends the run early, its part of the checkpoint and its part of the
// summary.

// stepJob is one kind of training job, as the shared loop drives it.
type stepJob interface {
	// base returns the state the loop keeps for the job.
	base() *runBase
	// current is the model the job trains now (checkpointed and evaluated).
	current() model.Model
	// begin readies step before it runs; a non-empty stop instead ends the
	// run before step, with stop as Summary.StoppedBy.
	begin(step int, logs *runLogs) (stop string, err error)
	// step runs training step step.
	step(step int) (optim.StepResult, error)
	// end is called after step's result is logged; checkpoint asks the
	// loop for a checkpoint now (besides the periodic ones).
	end(step int, res optim.StepResult, logs *runLogs) (checkpoint bool, err error)
	// describe is the progress bar's text after a step; where names the
	// position of an interruption before step (e.g. "at step 12").
	describe(res optim.StepResult) string
	where(step int) string
	// save fills the job's part of the checkpoint ck (the loop has filled
	// the step, the model file, the counters and the accountant).
	save(ck *checkpoint) error
	// finish completes the summary s (the loop has filled the shared
	// fields) and returns the public and the full summary to write.
	finish(s *Summary) (pub, full any, err error)
}

// stepLogger is implemented by jobs that write their steps' records to the
// run logs themselves (personalized DP: the ε of the ledger's accountant).
type stepLogger interface {
	logStep(logs *runLogs, res optim.StepResult) error
}

// afterSaver is implemented by jobs that write files of their own after
// each checkpoint's commit point (state.json).
type afterSaver interface{ afterSave() error }

// runBase is what the shared loop keeps for every job: the configuration,
// the data, the run's extent and the counters a checkpoint restores.
type runBase struct {
	cfg         TrainConfig
	train, test *datasets.Dataset
	conv        privacy.Conversion
	// q is the Poisson sampling rate and expected = q·N the expected batch.
	q, expected float64
	// history is the accountant whose history the checkpoint stores (nil:
	// none); it must marshal to JSON.
	history any
	// The run starts at step start and ends before step until
	// (math.MaxInt: no fixed length) with Summary.StoppedBy stoppedBy,
	// unless begin stops it earlier.
	start, until int
	stoppedBy    string
	// resumed: the run continues a checkpoint.
	resumed bool
	// examples processed, the last step's loss and the training seconds
	// before this process (restored from the checkpoint).
	examples  int64
	lastLoss  float64
	trainSecs float64
	// began is when this process started training; savedSecs the training
	// seconds recorded by the last checkpoint.
	began     time.Time
	savedSecs float64
}

// newRunBase loads the data and resolves the sampling rate, the conversion
// and the counters of a resumed run (ck; nil for a new run).
func newRunBase(cfg TrainConfig, ck *checkpoint) (*runBase, error) {
	dataDir := datasets.ResolveDataDir(cfg.DataDir)
	train, err := loadSplit(cfg, "train", dataDir)
	if err != nil {
		return nil, err
	}
	test, err := loadSplit(cfg, "test", dataDir)
	if err != nil {
		return nil, err
	}
	b := &runBase{cfg: cfg, train: train, test: test, conv: privacy.Conversion(cfg.Conversion).OrDefault(), until: math.MaxInt}
	b.q = cfg.SamplingRate
	if b.q == 0 {
		b.q = float64(cfg.BatchSize) / float64(train.N)
	}
	if !(b.q > 0 && b.q <= 1) {
		return nil, fmt.Errorf("invalid configuration: sampling rate q = %v is not in (0, 1] (batch %d of %d examples)", b.q, cfg.BatchSize, train.N)
	}
	b.expected = b.q * float64(train.N)
	if ck != nil {
		b.resumed, b.start = true, ck.NextStep
		b.examples, b.lastLoss, b.trainSecs = ck.Examples, ck.LastLoss, ck.TrainSecs
	}
	return b, nil
}

// modelSpec is the model of the configuration on the training data.
func (b *runBase) modelSpec() model.Spec {
	spec := model.Spec{Arch: b.cfg.Model, InputShape: b.train.Shape, Classes: b.train.Classes, Network: b.cfg.Network}
	if b.cfg.Model == "logreg" {
		spec.InputShape = []int{b.train.Dim()} // a dense model sees flat inputs
	}
	return spec
}

// initialModel is the model a run starts from: a new one from the seed, or
// the checkpoint's (ck) after checking it is the configured model.
func (b *runBase) initialModel(spec model.Spec, ck *checkpoint) (model.Model, error) {
	if ck == nil {
		m, err := model.New(spec, optim.DeriveSeed(b.cfg.Seed, "init"))
		if err != nil {
			return nil, err // "model: …" already
		}
		return m, nil
	}
	removeModelsExcept(b.cfg.Out, ck.ModelFile) // superseded checkpoints of a crashed run
	m, err := model.Load(filepath.Join(b.cfg.Out, ck.ModelFile))
	if err == nil && !sameModelSpec(m.Spec(), spec) {
		err = fmt.Errorf("checkpoint model %+v does not match the configuration %+v", m.Spec(), spec)
	}
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	return m, nil
}

// epochSteps is the number of steps of one epoch, ⌈N/expected batch⌉ (the
// default evaluation interval, TrainConfig.EvalEvery).
func (b *runBase) epochSteps() int {
	return max(1, int(math.Ceil(float64(b.train.N)/b.expected)))
}

// seconds is the run's training time so far.
func (b *runBase) seconds() float64 { return b.trainSecs + time.Since(b.began).Seconds() }

// runJob is the shared job loop: it trains j from its first step to its end
// (or until j stops it, ctx is cancelled or a step fails), logging every
// step, evaluating every EvalEvery steps, checkpointing a new run at its
// start, every CheckpointEvery steps, when j asks, on an interruption or a
// failed step and at the end, and writes the summaries.
func runJob(ctx context.Context, j stepJob, progress io.Writer) (*Summary, error) {
	b := j.base()
	logs, err := openRunLogs(b.cfg.Out, b.start)
	if err != nil {
		return nil, err
	}
	defer logs.Close()
	b.began = time.Now()
	if !b.resumed {
		// A checkpoint before the first step, so that even a run
		// interrupted before its first periodic checkpoint can be resumed.
		if err := checkpointJob(j, b.start, logs); err != nil {
			return nil, err
		}
	}
	var bar stepProgress
	if progress != nil && b.until != math.MaxInt {
		bar = newStepBar(progress, b.cfg.Method, b.until, b.expected)
		bar.Set(b.start)
	}
	step, stoppedBy := b.start, b.stoppedBy
	for ; step < b.until; step++ {
		if err := ctx.Err(); err != nil {
			if cerr := checkpointJob(j, step, logs); cerr != nil {
				return nil, errors.Join(err, cerr)
			}
			return nil, fmt.Errorf("interrupted %s (checkpoint written; continue with --resume): %w", j.where(step), err)
		}
		stop, err := j.begin(step, logs)
		if err != nil {
			return nil, err
		}
		if stop != "" {
			stoppedBy = stop
			break
		}
		res, err := j.step(step)
		if err != nil {
			if cerr := checkpointJob(j, step, logs); cerr != nil {
				err = errors.Join(err, cerr)
			}
			return nil, err
		}
		if err := recordStep(j, step, res, logs, bar); err != nil {
			return nil, err
		}
	}
	if bar != nil {
		bar.Finish()
	}
	if err := checkpointJob(j, step, logs); err != nil {
		return nil, err
	}
	s := &Summary{
		Method: b.cfg.Method, Dataset: b.cfg.Dataset, Model: b.cfg.Model,
		Steps: step, StoppedBy: stoppedBy, TrainLoss: b.lastLoss, Examples: b.examples,
		WallSeconds:       b.savedSecs,
		PrivacyRandomness: randomnessNote(b.cfg),
	}
	s.setNoise(b.cfg)
	if s.WallSeconds > 0 {
		s.ExamplesPerSecond = float64(s.Examples) / s.WallSeconds
	}
	pub, full, err := j.finish(s)
	if err != nil {
		return nil, err
	}
	return s, writeSummaries(b.cfg.Out, pub, full)
}

// recordStep logs a finished step, updates the progress bar, ends the
// step (stepJob.end), evaluates when EvalEvery says so and checkpoints when
// the job asks or CheckpointEvery says so.
func recordStep(j stepJob, step int, res optim.StepResult, logs *runLogs, bar stepProgress) error {
	b := j.base()
	b.examples += int64(res.BatchSize)
	b.lastLoss = res.Loss
	var err error
	if sl, ok := j.(stepLogger); ok {
		err = sl.logStep(logs, res)
	} else {
		err = logs.Step(res)
	}
	if err != nil {
		return err
	}
	if bar != nil {
		bar.Describe(j.describe(res))
		bar.Add(1)
	}
	due, err := j.end(step, res, logs)
	if err != nil {
		return err
	}
	if ev := b.cfg.EvalEvery; ev > 0 && (step+1)%ev == 0 {
		acc, err := Accuracy(j.current(), b.test.X, b.test.Labels, b.test.Dim())
		if err != nil {
			return err
		}
		if err := logs.public.Write(map[string]any{"step": step, "test_accuracy": acc}); err != nil {
			return err
		}
	}
	if ce := b.cfg.CheckpointEvery; due || ce > 0 && (step+1)%ce == 0 {
		return checkpointJob(j, step+1, logs)
	}
	return nil
}

// checkpointJob atomically records the state before step next: the model
// file first, then state.json naming it and binding every piece (the
// commit point), then the job's own files; older model files are then
// removed.
func checkpointJob(j stepJob, next int, logs *runLogs) error {
	b := j.base()
	if err := logs.Sync(); err != nil {
		return err
	}
	ck := checkpoint{Version: checkpointVersion, NextStep: next, ModelFile: modelFileName(next),
		Examples: b.examples, TrainSecs: b.seconds(), LastLoss: b.lastLoss}
	if err := model.Save(filepath.Join(b.cfg.Out, ck.ModelFile), j.current()); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if b.history != nil {
		data, err := json.Marshal(b.history)
		if err != nil {
			return fmt.Errorf("checkpoint: accountant: %w", err)
		}
		ck.Accountant = data
	}
	if err := j.save(&ck); err != nil {
		return err
	}
	if err := bind(b.cfg.Out, &b.cfg, &ck); err != nil {
		return err
	}
	if err := writeJSONAtomic(filepath.Join(b.cfg.Out, stateFile), ck); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	b.savedSecs = ck.TrainSecs
	if a, ok := j.(afterSaver); ok {
		if err := a.afterSave(); err != nil {
			return err
		}
	}
	removeModelsExcept(b.cfg.Out, ck.ModelFile)
	return nil
}

// finalModel evaluates m on the test set and saves it as model.bin.
func (b *runBase) finalModel(m model.Model) (float64, error) {
	acc, err := Accuracy(m, b.test.X, b.test.Labels, b.test.Dim())
	if err != nil {
		return 0, err
	}
	return acc, model.Save(filepath.Join(b.cfg.Out, finalModel), m)
}
