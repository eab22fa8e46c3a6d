package runner

import (
	"fmt"
	"path/filepath"

	"github.com/privtrain/privtrain/corruption"
	"github.com/privtrain/privtrain/datasets"
	"github.com/privtrain/privtrain/optim"
)

// applyCorruption builds the run's corruption plan, applies data corruptions
// (labels, features) to the training set in place, records the corrupted
// examples in the run directory, and returns the gradient corruption for the
// optimizer (nil when the kind does not touch gradients) and the number of
// corrupted examples.
func applyCorruption(cfg TrainConfig, train *datasets.Dataset) (optim.GradientCorruption, int, error) {
	kind := cfg.Corruption
	if kind == "" {
		kind = corruption.None
	}
	plan, err := corruption.New(kind, cfg.CorruptionRatio, train.N, optim.DeriveSeed(cfg.Seed, "corruption"))
	if err != nil {
		return nil, 0, fmt.Errorf("invalid configuration: %w", err)
	}
	if plan.Count() == 0 {
		return nil, 0, nil
	}
	if err := plan.ApplyData(train.X, train.Dim(), train.Labels, train.Classes); err != nil {
		return nil, 0, err
	}
	if err := writeJSONAtomic(filepath.Join(cfg.Out, corruptedFile), plan.Record()); err != nil {
		return nil, 0, err
	}
	if plan.CorruptsGradients() {
		return plan, plan.Count(), nil
	}
	return nil, plan.Count(), nil
}
