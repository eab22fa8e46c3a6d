package runner

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"time"
)

// A checkpoint (state.json) binds together everything a resumed run relies
// on: its step, the configuration, the accountant history, the
// personalized-DP ledger and rounds, and the model file. Each piece's SHA-256
// is recorded in state.json's "sha256" map when the checkpoint is written,
// and a resume recomputes and compares every one of them, so that a
// missing, edited or swapped piece is refused with an error naming it.
// state.json is written last (atomically): it is the commit point, and every
// piece it binds is either inside it or a file written before it under a
// step-specific name (model-<step>.bin), so a crash at any moment leaves a
// consistent checkpoint.
//
// To bind another piece (say a key file), add one entry to boundPieces.

// boundPiece is one piece of state a checkpoint binds.
type boundPiece struct {
	key  string // key in the sha256 map
	what string // for error messages
	// required: the checkpoint of this run must bind the piece.
	required bool
	// data returns the piece's bytes, or nil when it is absent.
	data func() ([]byte, error)
}

// boundPieces lists the pieces of ck in run directory dir for a run of cfg.
func boundPieces(dir string, cfg *TrainConfig, ck *checkpoint) []boundPiece {
	pdp := cfg.pdp()
	return []boundPiece{
		{"config", "the configuration (config.json)", true, func() ([]byte, error) { return configIdentity(cfg) }},
		{"model", "the model file " + ck.ModelFile, true, fileIfNamed(dir, ck.ModelFile)},
		{"accountant", "the accountant history", cfg.Private() || pdp, compactRaw(ck.Accountant)},
		{"pdp", "the personalized-DP ledger and rounds", pdp, compactRaw(ck.PDP)},
		// The secret key of the privacy randomness (release.go): resuming with
		// another key would redo steps with fresh noise, releasing more.
		{"noise-key", "the secret noise key " + filepath.Join(privateDir, noiseKeyFile), (cfg.Private() || pdp) && !cfg.ReproducibleNoise, fileIfNamed(dir, filepath.Join(privateDir, noiseKeyFile))},
	}
}

// configIdentity is the part of the configuration that defines the run:
// everything but where its files live and how often it checkpoints or
// evaluates, which may change when a run is moved or resumed.
func configIdentity(cfg *TrainConfig) ([]byte, error) {
	c := cfg.NoiseIdentity()
	c.Out, c.DataDir, c.CheckpointEvery, c.EvalEvery = "", "", 0, 0
	return json.Marshal(c)
}

func fileIfNamed(dir, name string) func() ([]byte, error) {
	return func() ([]byte, error) {
		if name == "" {
			return nil, nil
		}
		data, err := os.ReadFile(filepath.Join(dir, name))
		if os.IsNotExist(err) {
			return nil, nil
		}
		return data, err
	}
}

func compactRaw(raw json.RawMessage) func() ([]byte, error) {
	return func() ([]byte, error) {
		if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			return nil, nil
		}
		var b bytes.Buffer
		if err := json.Compact(&b, raw); err != nil {
			return nil, err
		}
		return b.Bytes(), nil
	}
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// bind records the SHA-256 of every present piece in ck.Bound.
func bind(dir string, cfg *TrainConfig, ck *checkpoint) error {
	ck.Bound = map[string]string{}
	for _, p := range boundPieces(dir, cfg, ck) {
		data, err := p.data()
		if err != nil {
			return fmt.Errorf("checkpoint: %s: %w", p.what, err)
		}
		if data == nil {
			if p.required {
				return fmt.Errorf("checkpoint: %s is missing", p.what)
			}
			continue
		}
		ck.Bound[p.key] = sha256Hex(data)
	}
	return nil
}

// verifyBinding checks that every piece ck binds is present and unchanged,
// and that ck binds every piece a run of cfg needs.
func verifyBinding(dir string, cfg *TrainConfig, ck *checkpoint) error {
	known := map[string]bool{}
	for _, p := range boundPieces(dir, cfg, ck) {
		known[p.key] = true
		want, bound := ck.Bound[p.key]
		data, err := p.data()
		if err != nil {
			return fmt.Errorf("%s: %w", p.what, err)
		}
		switch {
		case data == nil && (bound || p.required):
			return fmt.Errorf("%s is missing from the checkpoint", p.what)
		case data == nil:
		case !bound:
			return fmt.Errorf("the checkpoint does not bind %s (state.json was edited or comes from another run)", p.what)
		case sha256Hex(data) != want:
			return fmt.Errorf("%s does not match the checkpoint (SHA-256 %.12s…, the checkpoint recorded %.12s…): it was changed or swapped after the checkpoint was written", p.what, sha256Hex(data), want)
		}
	}
	var extra []string
	for k := range ck.Bound {
		if !known[k] {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		return fmt.Errorf("the checkpoint binds pieces this run does not have: %s (state.json comes from another kind of run)", strings.Join(extra, ", "))
	}
	return nil
}

// readCheckpoint reads state.json of dir: (nil, nil) when there is none.
func readCheckpoint(dir string) (*checkpoint, error) {
	var ck checkpoint
	if err := readJSON(filepath.Join(dir, stateFile), &ck); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	if ck.Version != 2 && ck.Version != checkpointVersion {
		return nil, fmt.Errorf("checkpoint version %d, this trainer reads 2 and %d", ck.Version, checkpointVersion)
	}
	if err := ck.upgrade(); err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	if ck.NextStep < 0 {
		return nil, fmt.Errorf("checkpoint: next step %d is negative", ck.NextStep)
	}
	if want := modelFileName(ck.NextStep); ck.ModelFile != want {
		return nil, fmt.Errorf("checkpoint: the model file of step %d is %s, state.json names %q", ck.NextStep, want, ck.ModelFile)
	}
	return &ck, nil
}

func modelFileName(step int) string { return fmt.Sprintf("model-%d.bin", step) }

// ReadRunConfig reads the configuration stored in a run directory.
func ReadRunConfig(dir string) (TrainConfig, error) {
	var c TrainConfig
	if err := readJSON(filepath.Join(dir, configFile), &c); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return c, fmt.Errorf("%s holds no run (no %s)", dir, configFile)
		}
		return c, err
	}
	c.readLegacyNoise()
	return c, nil
}

// ResumeMutable lists the configuration fields (JSON names) a resume may
// change: where files live, how often it checkpoints and evaluates, and the
// run length (checked against the steps done and the accountant, and
// recorded in changes.jsonl).
var resumeMutable = map[string]bool{
	"out": true, "data_dir": true, "checkpoint_every": true, "eval_every": true,
	"steps": true, "epochs": true, "target_epsilon": true,
}

// configChange is one changed configuration field.
type configChange struct {
	Field string `json:"field"`
	From  any    `json:"from"`
	To    any    `json:"to"`
}

// diffConfigs lists the fields (JSON names, nested with ".") that differ.
func diffConfigs(a, b TrainConfig) ([]configChange, error) {
	ma, err := flatJSON(a)
	if err != nil {
		return nil, err
	}
	mb, err := flatJSON(b)
	if err != nil {
		return nil, err
	}
	keys := map[string]bool{}
	for k := range ma {
		keys[k] = true
	}
	for k := range mb {
		keys[k] = true
	}
	var out []configChange
	for k := range keys {
		if !reflect.DeepEqual(ma[k], mb[k]) {
			out = append(out, configChange{Field: k, From: ma[k], To: mb[k]})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Field < out[j].Field })
	return out, nil
}

func flatJSON(c TrainConfig) (map[string]any, error) {
	data, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("configuration: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	flat := map[string]any{}
	var walk func(prefix string, v map[string]any)
	walk = func(prefix string, v map[string]any) {
		for k, x := range v {
			if sub, ok := x.(map[string]any); ok {
				walk(prefix+k+".", sub)
				continue
			}
			flat[prefix+k] = x
		}
	}
	walk("", m)
	return flat, nil
}

// resumeChanges compares the configuration given for a resume with the
// stored one: a change to anything but a resume-mutable field is an error
// naming the field.
func resumeChanges(stored, given TrainConfig) ([]configChange, error) {
	changes, err := diffConfigs(stored, given)
	if err != nil {
		return nil, err
	}
	var bad []string
	for _, c := range changes {
		if !resumeMutable[c.Field] {
			bad = append(bad, fmt.Sprintf("%s (stored %v, given %v)", c.Field, jsonString(c.From), jsonString(c.To)))
		}
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("the configuration conflicts with the stored run in %s: a resumed run continues exactly as configured; only the run length (steps, epochs, target_epsilon), data_dir, checkpoint_every and eval_every may change", strings.Join(bad, ", "))
	}
	return changes, nil
}

func jsonString(v any) string {
	if v == nil {
		return "unset"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// recordChanges appends the resume's configuration changes to
// changes.jsonl, one line per resume.
func recordChanges(dir string, atStep int, changes []configChange) error {
	if len(changes) == 0 {
		return nil
	}
	old, err := os.ReadFile(filepath.Join(dir, changesFile))
	if err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("%s: %w", changesFile, err)
	}
	line, err := json.Marshal(map[string]any{"time": time.Now().UTC().Format(time.RFC3339), "at_step": atStep, "changes": changes})
	if err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(dir, changesFile), append(append(old, line...), '\n'))
}

// prepareRunDir creates a new run in cfg.Out (refusing to overwrite a run
// that has done any step) or, when resuming, reads the stored configuration
// and the checkpoint, verifies that they belong together and applies the
// allowed changes (recorded in changes.jsonl). The caller holds the run
// directory's lock. It returns nil for a new run.
func prepareRunDir(cfg *TrainConfig, resume bool) (*resumePlan, error) {
	ck, ckErr := readCheckpoint(cfg.Out)
	if !resume {
		switch {
		case ckErr != nil:
			return nil, fmt.Errorf("run directory %s already holds a run (its checkpoint: %v): resume it with --resume or choose another --out", cfg.Out, ckErr)
		case ck != nil && ck.NextStep > 0:
			return nil, fmt.Errorf("run directory %s already holds a run (%d steps done): resume it with --resume or choose another --out", cfg.Out, ck.NextStep)
		case ck == nil && runHasProgress(cfg.Out):
			return nil, fmt.Errorf("run directory %s holds a run whose checkpoint (%s) is missing: choose another --out", cfg.Out, stateFile)
		}
		// A run that failed before its first step spent nothing: a new run
		// may take its place (commit removes its checkpoint).
		return &resumePlan{fresh: true, replace: ck != nil}, nil
	}
	fail := func(err error) (*resumePlan, error) { return nil, fmt.Errorf("resume %s: %w", cfg.Out, err) }
	stored, err := ReadRunConfig(cfg.Out)
	if err != nil {
		return fail(err)
	}
	if ckErr != nil {
		return fail(ckErr)
	}
	if ck == nil && runHasProgress(cfg.Out) {
		return fail(fmt.Errorf("%s is missing but the run has trained (model files or a summary exist): refusing to start it again from step 0", stateFile))
	}
	if ck != nil {
		// Bound against the configuration as stored, before any change.
		if err := verifyBinding(cfg.Out, &stored, ck); err != nil {
			return fail(err)
		}
	}
	if cfg.EvalEvery == 0 {
		cfg.EvalEvery = stored.EvalEvery // unset: as stored
	}
	if cfg.LRDecaySteps == 0 {
		cfg.LRDecaySteps = stored.LRDecaySteps // resolved when the run started
	}
	cfg.NoiseKeySource = stored.NoiseKeySource // where the stored run's key came from
	changes, err := resumeChanges(stored, *cfg)
	if err != nil {
		return fail(err)
	}
	if err := cfg.Validate(); err != nil {
		return fail(err)
	}
	return &resumePlan{ck: ck, changes: changes}, nil
}

// resumePlan is what prepareRunDir found: for a new run (fresh), whether it
// replaces a run that failed before its first step; for a resume, the
// checkpoint (nil: start at step 0) and the configuration changes. Nothing
// is written until commit, after the job is built, so that a configuration
// that fails to build leaves the directory as it was.
type resumePlan struct {
	fresh, replace bool
	ck             *checkpoint
	changes        []configChange
}

// commit writes config.json of a new run, or records a resume's changes
// (changes.jsonl), writes the changed configuration and re-binds the
// checkpoint to it.
func (r *resumePlan) commit(cfg *TrainConfig) error {
	if r.fresh {
		if r.replace {
			if err := os.Remove(filepath.Join(cfg.Out, stateFile)); err != nil {
				return fmt.Errorf("run directory: %w", err)
			}
			removeModelsExcept(cfg.Out, "")
		}
		return writeJSONAtomic(filepath.Join(cfg.Out, configFile), cfg)
	}
	if len(r.changes) == 0 {
		return nil
	}
	at := 0
	if r.ck != nil {
		at = r.ck.NextStep
	}
	if err := recordChanges(cfg.Out, at, r.changes); err != nil {
		return err
	}
	if err := writeJSONAtomic(filepath.Join(cfg.Out, configFile), cfg); err != nil {
		return err
	}
	if r.ck == nil {
		return nil
	}
	if err := bind(cfg.Out, cfg, r.ck); err != nil {
		return err
	}
	return writeJSONAtomic(filepath.Join(cfg.Out, stateFile), r.ck)
}

// removeModelsExcept deletes model-*.bin files of dir other than keep
// (checkpoints superseded by a later one).
func removeModelsExcept(dir, keep string) {
	old, _ := filepath.Glob(filepath.Join(dir, "model-*.bin"))
	for _, f := range old {
		if filepath.Base(f) != keep {
			os.Remove(f)
		}
	}
}

// runHasProgress reports whether dir holds a trained model (a checkpoint's
// model file or the final model) or a summary. Logged metrics alone do not
// count: a run killed before its first checkpoint has released nothing, and
// redoing its steps from the same seed repeats them bit for bit.
func runHasProgress(dir string) bool {
	if m, _ := filepath.Glob(filepath.Join(dir, "model*.bin")); len(m) > 0 {
		return true
	}
	_, err := os.Stat(filepath.Join(dir, summaryFile))
	return err == nil
}
