package runner

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/privtrain/privtrain/internal/fileutil"
)

// Run directory layout (see architecture.md, "Run"):
//
//	config.json      the resolved TrainConfig
//	metrics.jsonl    one JSON object per step (public values only, see release.go)
//	state.json       checkpoint: next step, accountant history, the rule's state, model file,
//	                 personalized-DP ledger and rounds, and the SHA-256 of every piece it
//	                 binds (runstate.go)
//	changes.jsonl    configuration changes made by resumes (run length, data directory)
//	.lock            flock of the process writing the run (its pid)
//	model-<step>.bin model parameters at the checkpoint
//	corrupted.json   indices of the corrupted training examples
//	summary.json     final results
//	model.bin        final model
//	private/         operator-only files (see release.go): noise.key,
//	                 diagnostics.jsonl, summary.json with diagnostics
const (
	configFile    = "config.json"
	metricsFile   = "metrics.jsonl"
	stateFile     = "state.json"
	summaryFile   = "summary.json"
	corruptedFile = "corrupted.json"
	finalModel    = "model.bin"
	changesFile   = "changes.jsonl"
)

// checkNewRunDir refuses to start a new run in an existing directory that
// holds no run (no config.json) but other files: `--out $HOME` would
// scatter a run's files among the user's. Allowed: nothing, the lock file,
// temporary files of interrupted writes, a private/ directory (a run killed
// before writing config.json), and the caller's foreign files.
func checkNewRunDir(dir string, foreign []string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("run directory %s: %w", dir, err)
	}
	if !fi.IsDir() && fi.Mode()&os.ModeSymlink == 0 {
		return fmt.Errorf("run directory %s exists and is not a directory", dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("run directory %s: %w", dir, err)
	}
	allowed := map[string]bool{fileutil.LockFile: true, privateDir: true}
	for _, f := range foreign {
		allowed[f] = true
	}
	var others []string
	for _, e := range entries {
		n := e.Name()
		switch {
		case n == configFile:
			return nil // a run: prepareRunDir decides
		case n == privateDir && !e.IsDir():
			return fmt.Errorf("run directory %s: %s is not a directory (%s): refusing to follow it", dir, privateDir, e.Type())
		case allowed[n], fileutil.IsTemp(n):
		default:
			others = append(others, n)
		}
	}
	if len(others) > 0 {
		if len(others) > 3 {
			others = append(others[:3], "…")
		}
		return fmt.Errorf("run directory %s is not empty and holds no run (%s; no %s): choose a new or empty directory", dir, strings.Join(others, ", "), configFile)
	}
	return nil
}

// writeFileAtomic writes data to path crash-safely (fileutil.WriteAtomic).
func writeFileAtomic(path string, data []byte) error { return fileutil.WriteAtomic(path, data) }

// writeJSONAtomic writes v as indented JSON, atomically.
func writeJSONAtomic(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	return writeFileAtomic(path, append(data, '\n'))
}

// readJSON decodes path into v, rejecting unknown fields.
func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("decode %s: %w", path, err)
	}
	return nil
}

// metricsLog appends JSON lines to metrics.jsonl.
type metricsLog struct {
	f *os.File
	w *bufio.Writer
}

// openMetrics opens metrics.jsonl for appending after keeping only the
// records of steps < keepBelow (the steps a resumed run will not redo).
func openMetrics(dir string, keepBelow int) (*metricsLog, error) {
	return openJSONL(filepath.Join(dir, metricsFile), keepBelow, 0o644)
}

// openJSONL opens the JSON-lines log at path (created with mode perm) for
// appending after keeping only the records of steps < keepBelow.
func openJSONL(path string, keepBelow int, perm os.FileMode) (*metricsLog, error) {
	var kept []byte
	if data, err := os.ReadFile(path); err == nil {
		for _, line := range bytes.Split(data, []byte("\n")) {
			var rec struct {
				Step *int `json:"step"`
			}
			if len(bytes.TrimSpace(line)) == 0 || json.Unmarshal(line, &rec) != nil || rec.Step == nil {
				continue // torn last line of a crashed run
			}
			if *rec.Step < keepBelow {
				kept = append(append(kept, line...), '\n')
			}
		}
	} else if !os.IsNotExist(err) {
		return nil, fmt.Errorf("metrics log: %w", err)
	}
	if err := writeFileAtomic(path, kept); err != nil {
		return nil, err
	}
	if err := os.Chmod(path, perm); err != nil {
		return nil, fmt.Errorf("metrics log: %w", err)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, perm)
	if err != nil {
		return nil, fmt.Errorf("metrics log: %w", err)
	}
	return &metricsLog{f: f, w: bufio.NewWriter(f)}, nil
}

// Write appends one record.
func (l *metricsLog) Write(v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("metrics log: %w", err)
	}
	l.w.Write(data)
	return l.w.WriteByte('\n')
}

// Sync flushes buffered records to disk (called at checkpoints).
func (l *metricsLog) Sync() error {
	if err := l.w.Flush(); err != nil {
		return fmt.Errorf("metrics log: %w", err)
	}
	return l.f.Sync()
}

// Close flushes and closes the log.
func (l *metricsLog) Close() error {
	if err := l.Sync(); err != nil {
		l.f.Close()
		return err
	}
	return l.f.Close()
}
