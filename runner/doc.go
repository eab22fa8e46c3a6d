// Package runner runs training jobs: a TrainConfig (methods, presets,
// JSON/YAML files, validation), the run directory (lock, config.json,
// checkpoints bound by SHA-256, exact resume, metrics.jsonl and the
// operator-only private/ files, summaries), the job loops of the SGD
// methods (Train) and of the personalized-DP methods, and one-run privacy
// audits (AuditRun). The papers' reproductions built on it live under
// experiments/.
package runner
