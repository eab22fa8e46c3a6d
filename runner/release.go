package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/privtrain/privtrain/optim"
	"github.com/privtrain/privtrain/randstream"
)

// What a run writes is split into what may be published and what is for the
// operator only (README, "Run directory"; ReleaseSafety says it per run):
//
//   - release-safe: config.json (the configuration: the public seed, no
//     secret — except in a run started before the seeds were split, see
//     TrainConfig.ReproducibleNoise), metrics.jsonl (per step only public or
//     privatized values: ε so far, the PTR test's outcome bit and the trim
//     level F, which is a function of those bits; test-set accuracy),
//     summary.json (the (ε, δ) report, test accuracy, PTR pass counts), the
//     models, corrupted.json (the attacker's plan, a function of the public
//     seed, from which nothing secret derives), ledger.csv (PDP budgets and
//     spend, functions of the public budgets), changes.jsonl (the run-length
//     changes of resumes);
//   - operator-only, under private/ (mode 0700, files 0600): noise.key (the
//     secret key of the run's privacy randomness: whoever holds it can
//     regenerate all the noise and void the guarantee), diagnostics.jsonl
//     (per step: exact batch size, loss, PTR safety margin Δ and noisy Δ̂,
//     trimmed and corrupted counts — none privatized) and summary.json (the
//     full summary with the final training loss, the number of examples
//     processed and the timings); and state.json, the checkpoint (it holds
//     the example count and the last loss);
//   - .lock holds the pid of the process writing the run: neither secret
//     nor part of the results.
const (
	privateDir      = "private"
	noiseKeyFile    = "noise.key"
	diagnosticsFile = "diagnostics.jsonl"
	privateReadme   = "README.txt"
)

const privateReadmeText = `OPERATOR-ONLY FILES: DO NOT PUBLISH OR SHARE.

noise.key          secret key of this run's privacy randomness (DP noise,
                   Poisson sampling, PTR test). Anyone holding it can
                   regenerate the noise: the (epsilon, delta) guarantee of the
                   released model no longer holds against them.
diagnostics.jsonl  exact per-step values that are NOT privatized: batch size,
                   loss, PTR safety margin, trimmed and corrupted counts.
summary.json       the summary with non-privatized diagnostics (final
                   training loss, examples processed, timings).

Everything outside this directory except state.json (the checkpoint) is
release-safe (.lock holds only a process id), unless config.json says
"reproducible_noise": true: such a run, started before privtrain split its
seeds, derives its noise from the seed in config.json, which is then
operator-only too. See the privtrain README, "Run directory".
`

// privateDirPath returns out/private, creating it (mode 0700, with its
// README) when create is set.
func privateDirPath(out string, create bool) (string, error) {
	dir := filepath.Join(out, privateDir)
	if fi, err := os.Lstat(dir); err == nil && !fi.IsDir() {
		// A symlink would send the noise key (and a chmod) elsewhere.
		return "", fmt.Errorf("private run files: %s is not a directory (%s): refusing to follow it", dir, fi.Mode().Type())
	}
	if !create {
		return dir, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("private run files: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return "", fmt.Errorf("private run files: %w", err)
	}
	if err := writeFileAtomic(filepath.Join(dir, privateReadme), []byte(privateReadmeText)); err != nil {
		return "", err
	}
	return dir, nil
}

// privacyKey returns the key of a private run's privacy randomness (noise,
// Poisson sampling, PTR test; see randstream).
//
// It is secret: a new run takes cfg.NoiseKey, or draws a key from the OS,
// and stores it in private/noise.key (mode 0600); a resumed run reads it
// back (and refuses a different cfg.NoiseKey), so the redone steps draw
// exactly the randomness of an uninterrupted run. Only a run started before
// the seeds were split (ReproducibleNoise) derives it from its seed; such
// runs may resume but not start.
func privacyKey(cfg TrainConfig, resume bool) (randstream.Key, error) {
	if cfg.ReproducibleNoise {
		if !resume {
			return randstream.Key{}, errLegacyReproducible
		}
		return randstream.FromSeed(cfg.Seed).Derive("privacy"), nil
	}
	if cfg.Out == "" && !resume {
		// A run without a run directory (e.g. AuditRun) cannot be resumed:
		// its secret key lives in memory only.
		if cfg.NoiseKey != nil {
			return *cfg.NoiseKey, nil
		}
		return randstream.NewSecret()
	}
	dir, err := privateDirPath(cfg.Out, !resume)
	if err != nil {
		return randstream.Key{}, err
	}
	path := filepath.Join(dir, noiseKeyFile)
	if resume {
		data, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			return randstream.Key{}, fmt.Errorf("resume %s: the run's secret noise key %s is missing, so its steps cannot be redone exactly: start a new run", cfg.Out, path)
		}
		if err != nil {
			return randstream.Key{}, fmt.Errorf("resume %s: %w", cfg.Out, err)
		}
		var k randstream.Key
		if err := k.UnmarshalText(trimNewline(data)); err != nil {
			return randstream.Key{}, fmt.Errorf("resume %s: %s: %w", cfg.Out, path, err)
		}
		if cfg.NoiseKey != nil && *cfg.NoiseKey != k {
			return randstream.Key{}, fmt.Errorf("resume %s: the given noise key is not the run's key (%s)", cfg.Out, path)
		}
		return k, nil
	}
	var k randstream.Key
	if cfg.NoiseKey != nil {
		k = *cfg.NoiseKey
	} else if k, err = randstream.NewSecret(); err != nil {
		return randstream.Key{}, err
	}
	txt, _ := k.MarshalText()
	if err := writeFileAtomic(path, append(txt, '\n')); err != nil {
		return randstream.Key{}, err
	}
	if err := os.Chmod(path, 0o600); err != nil {
		return randstream.Key{}, fmt.Errorf("private run files: %w", err)
	}
	return k, nil
}

// errLegacyReproducible refuses a new run that would derive its privacy
// randomness from the public seed.
var errLegacyReproducible = errors.New("invalid configuration: reproducible_noise (privacy noise derived from the seed) is only for resuming runs started before the seeds were split; the seed is public now: give a secret key for reproducible noise (--noise-key-file, TrainConfig.NoiseKey)")

func trimNewline(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// randomnessNote is the plain statement of where the run's privacy
// randomness comes from, for the summary and the console. It never names a
// secret.
func randomnessNote(cfg TrainConfig) string {
	if !cfg.Noisy() {
		return ""
	}
	switch {
	case cfg.ReproducibleNoise:
		return "REPRODUCIBLE (a run started before the seeds were split): the privacy noise and sampling are a function of the seed in config.json, which is therefore operator-only; the guarantee holds only while that seed is kept secret"
	case cfg.NoiseKeySource == noiseKeySupplied:
		return "secret: the operator's key (--noise-key-file), copied to private/noise.key (operator-only); runs given the same key and seed draw the same noise"
	}
	return "secret: drawn from the OS (crypto/rand); the key is in private/noise.key (operator-only)"
}

// noiseKeySupplied is TrainConfig.NoiseKeySource of a run given NoiseKey.
const noiseKeySupplied = "supplied"

// ReleaseSafety states which of the files in cfg's run directory may be
// published (the console's last block and the README's table).
func ReleaseSafety(cfg TrainConfig) string {
	if cfg.ReproducibleNoise {
		return "release-safe: everything but config.json (it holds the secret seed of this pre-split run), state.json and private/, which are operator-only"
	}
	return "release-safe: everything but state.json and private/, which are operator-only"
}

// runLogs are a run's public and operator-only per-step logs.
type runLogs struct {
	public, diag *metricsLog
}

// openRunLogs opens metrics.jsonl and private/diagnostics.jsonl, keeping the
// records of steps < keepBelow.
func openRunLogs(out string, keepBelow int) (*runLogs, error) {
	dir, err := privateDirPath(out, true)
	if err != nil {
		return nil, err
	}
	pub, err := openMetrics(out, keepBelow)
	if err != nil {
		return nil, err
	}
	diag, err := openJSONL(filepath.Join(dir, diagnosticsFile), keepBelow, 0o600)
	if err != nil {
		pub.Close()
		return nil, err
	}
	return &runLogs{public: pub, diag: diag}, nil
}

// Step logs one step: the release-safe part (optim.StepResult.PublicJSON:
// ε so far and the rule's public diagnostics, for TSGD+PTR the outcome bit
// and the trim level F) to metrics.jsonl; everything, including the batch
// size, the loss and the rule's private diagnostics (PTR's Δ and Δ̂), to
// diagnostics.jsonl.
func (l *runLogs) Step(r optim.StepResult) error {
	pub, err := r.PublicJSON()
	if err != nil {
		return fmt.Errorf("metrics log: %w", err)
	}
	if err := l.public.Write(json.RawMessage(pub)); err != nil {
		return err
	}
	return l.diag.Write(r)
}

// Sync flushes both logs.
func (l *runLogs) Sync() error { return errors.Join(l.public.Sync(), l.diag.Sync()) }

// Close flushes and closes both logs.
func (l *runLogs) Close() error { return errors.Join(l.public.Close(), l.diag.Close()) }

// publicSummary returns s without its operator-only diagnostics.
func publicSummary(s Summary) Summary {
	s.TrainLoss, s.Examples, s.WallSeconds, s.ExamplesPerSecond, s.CorruptedExamples = 0, 0, 0, 0, 0
	return s
}

// writeSummaries writes summary.json (public: pub, built from s without
// diagnostics) and private/summary.json (full, the value full).
func writeSummaries(out string, pub, full any) error {
	dir, err := privateDirPath(out, true)
	if err != nil {
		return err
	}
	if err := writeJSONAtomic(filepath.Join(dir, summaryFile), full); err != nil {
		return err
	}
	if err := os.Chmod(filepath.Join(dir, summaryFile), 0o600); err != nil {
		return fmt.Errorf("private run files: %w", err)
	}
	return writeJSONAtomic(filepath.Join(out, summaryFile), pub)
}

// readFullSummary reads a finished run's full summary: private/summary.json,
// or summary.json for a run written before the split.
func readFullSummary(out string, v any) error {
	err := readJSON(filepath.Join(out, privateDir, summaryFile), v)
	if errors.Is(err, os.ErrNotExist) {
		return readJSON(filepath.Join(out, summaryFile), v)
	}
	return err
}
