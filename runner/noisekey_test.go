package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/privtrain/privtrain/randstream"
)

// testNoiseKey is a fixed noise key for tests that compare runs: the key a
// run with seed had before the seeds were split (FromSeed(seed) derived
// "privacy"), so golden values of those runs stay valid.
func testNoiseKey(seed uint64) *randstream.Key {
	k := randstream.FromSeed(seed).Derive("privacy")
	return &k
}

// TestSeedSplit: the public seed is published and nothing secret derives
// from it. A run given --seed 7 publishes its seed in config.json but its
// noise key (drawn from the OS or supplied) appears in no release-safe file
// and is not the pre-split key of seed 7; two runs with the same seed and
// no key differ; a new run asking for seed-derived noise is refused; a run
// started before the split (reproducible_noise, key derived from the seed,
// no private/noise.key) still resumes bit-identically.
func TestSeedSplit(t *testing.T) {
	dir := t.TempDir()
	train := func(c TrainConfig, resume bool) *Summary {
		t.Helper()
		s, err := Train(context.Background(), c, Options{Resume: resume})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a, b := logregRun(filepath.Join(dir, "a"), 3), logregRun(filepath.Join(dir, "b"), 3)
	a.Seed, b.Seed = 7, 7
	train(a, false)
	train(b, false)
	if fileHash(t, filepath.Join(a.Out, finalModel)) == fileHash(t, filepath.Join(b.Out, finalModel)) {
		t.Fatal("two runs with the same public seed released the same model: the noise derives from the seed")
	}
	keyText, err := os.ReadFile(filepath.Join(a.Out, privateDir, noiseKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	legacy, _ := testNoiseKey(7).MarshalText()
	if strings.TrimSpace(string(keyText)) == string(legacy) {
		t.Fatal("the noise key is the one derived from the public seed")
	}
	// No release-safe file holds the key; config.json holds the seed.
	public := 0
	filepath.WalkDir(a.Out, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(a.Out, p)
		if d.IsDir() || rel == stateFile || strings.HasPrefix(rel, privateDir+string(filepath.Separator)) {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		public++
		if bytes.Contains(data, bytes.TrimSpace(keyText)) {
			t.Errorf("release-safe file %s holds the noise key", rel)
		}
		if bytes.Contains(bytes.ToLower(data), []byte("reproducible")) {
			t.Errorf("release-safe file %s calls the run reproducible", rel)
		}
		return nil
	})
	if public < 4 {
		t.Errorf("only %d release-safe files checked", public)
	}
	stored, err := ReadRunConfig(a.Out)
	if err != nil || stored.Seed != 7 || stored.ReproducibleNoise || stored.NoiseKeySource != "" {
		t.Errorf("config.json: seed %d, reproducible %v, key source %q, %v", stored.Seed, stored.ReproducibleNoise, stored.NoiseKeySource, err)
	}
	if got := ReleaseSafety(stored); strings.Contains(got, "config.json") {
		t.Errorf("ReleaseSafety of a new run: %q", got)
	}

	// A new run with seed-derived noise is refused before anything is written.
	n := logregRun(filepath.Join(dir, "new-legacy"), 3)
	n.ReproducibleNoise = true
	var setup *SetupError
	if _, err := Train(context.Background(), n, Options{}); !errors.As(err, &setup) || !strings.Contains(err.Error(), "reproducible_noise") {
		t.Errorf("new reproducible_noise run: %v", err)
	}
	if _, err := os.Stat(n.Out); !os.IsNotExist(err) {
		t.Errorf("refused run left %s (%v)", n.Out, err)
	}

	// A run given the key FromSeed(7)/"privacy" is, step for step, the
	// pre-split run with --seed 7. Stop it at step 3, rewrite its directory
	// as the old code left it, resume to 6: it must end where the
	// uninterrupted run ends.
	full := logregRun(filepath.Join(dir, "full"), 6)
	full.Seed, full.NoiseKey = 7, testNoiseKey(7)
	train(full, false)
	old := logregRun(filepath.Join(dir, "old"), 3)
	old.Seed, old.NoiseKey, old.CheckpointEvery = 7, testNoiseKey(7), 3
	train(old, false)
	editJSON(t, filepath.Join(old.Out, configFile), func(m map[string]json.RawMessage) {
		delete(m, "noise_key_source")
		m["reproducible_noise"] = json.RawMessage("true")
	})
	if err := os.Remove(filepath.Join(old.Out, privateDir, noiseKeyFile)); err != nil {
		t.Fatal(err)
	}
	oldCfg, err := ReadRunConfig(old.Out)
	if err != nil {
		t.Fatal(err)
	}
	ck, err := readCheckpoint(old.Out)
	if err != nil || ck == nil {
		t.Fatalf("checkpoint: %v", err)
	}
	if err := bind(old.Out, &oldCfg, ck); err != nil {
		t.Fatal(err)
	}
	if err := writeJSONAtomic(filepath.Join(old.Out, stateFile), ck); err != nil {
		t.Fatal(err)
	}
	oldCfg.Steps = 6
	sum := train(oldCfg, true)
	if fileHash(t, filepath.Join(old.Out, finalModel)) != fileHash(t, filepath.Join(full.Out, finalModel)) {
		t.Error("a pre-split run resumed to a different model")
	}
	if !strings.Contains(sum.PrivacyRandomness, "REPRODUCIBLE") || !strings.Contains(ReleaseSafety(oldCfg), "config.json") {
		t.Errorf("pre-split run: randomness %q, release safety %q", sum.PrivacyRandomness, ReleaseSafety(oldCfg))
	}
	// A resume given another key than the run's is refused.
	other := full
	other.Steps, other.NoiseKey = 8, testNoiseKey(8)
	if _, err := Train(context.Background(), other, Options{Resume: true}); err == nil || !strings.Contains(err.Error(), "not the run's key") {
		t.Errorf("resume with another key: %v", err)
	}
}

// TestReadNoiseKeyFile: a key file holds 64 hex digits, is private to its
// owner, regular and small, and its key does not look hand-made.
func TestReadNoiseKeyFile(t *testing.T) {
	dir := t.TempDir()
	good, _ := testNoiseKey(3).MarshalText()
	write := func(name, content string, perm os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), perm); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, perm); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		name, path, want string
	}{
		{"good", write("good", string(good)+"\n", 0o600), ""},
		{"good, CRLF", write("crlf", string(good)+"\r\n", 0o400), ""},
		{"world-readable", write("open", string(good), 0o644), "chmod 600"},
		{"short", write("short", "7", 0o600), "64 hexadecimal"},
		{"not hex", write("nothex", strings.Repeat("zz", 32), 0o600), "64 hexadecimal"},
		{"zero key", write("zero", strings.Repeat("00", 32), 0o600), "zero key"},
		{"repeated pattern", write("pattern", strings.Repeat("0123456789abcdef", 4), 0o600), "8-byte pattern"},
		{"few distinct bytes", write("few", strings.Repeat("0102030405060708090a0b", 3)[:64], 0o600), "distinct"},
		{"large", write("large", strings.Repeat("a", 5000), 0o600), "bytes"},
		{"directory", dir, "not a regular file"},
		{"missing", filepath.Join(dir, "missing"), "no such file"},
	} {
		k, err := ReadNoiseKeyFile(c.path)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want == "" && k != *testNoiseKey(3):
			t.Errorf("%s: read %x", c.name, k)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}
