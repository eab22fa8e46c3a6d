// Package runner runs training jobs (Train): the configuration (TrainConfig,
// presets, files, validation), the training methods as registered plug-ins
// (Method, RegisterMethod), run directories with checkpoints and exact resume,
// metrics and summaries, and one-run privacy audits (AuditRun).
package runner
