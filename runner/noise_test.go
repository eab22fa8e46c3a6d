package runner

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/privtrain/privtrain/aggregate"
)

// Every noisy method is secure unless FloatNoise: the defaults, a zero
// programmatic configuration and the pdp-* presets; non-private methods
// release no noise and refuse float_noise.
func TestNoiseModeDefaults(t *testing.T) {
	pdp := TrainDefaults()
	pdp.Method = "pdp-sgd"
	if err := ApplyPreset(&pdp, "pdp-mnist"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		cfg    TrainConfig
		secure bool
	}{
		{"default job", DefaultConfig(), true},
		{"train defaults", TrainDefaults(), true},
		{"zero config, dpsgd", TrainConfig{Method: "dpsgd"}, true},
		{"pdp preset", pdp, true},
		{"float opt-in", func() TrainConfig { c := TrainDefaults(); c.FloatNoise = true; return c }(), false},
		{"nonprivate", TrainConfig{Method: "nonprivate"}, false},
	} {
		if got := tc.cfg.SecureRelease(); got != tc.secure {
			t.Errorf("%s: SecureRelease = %v, want %v", tc.name, got, tc.secure)
		}
		c := tc.cfg
		c.ResolveNoise()
		if c.Noisy() && c.SecureNoise != tc.secure {
			t.Errorf("%s: resolved secure_noise %v", tc.name, c.SecureNoise)
		}
		if a := c.aggregateConfig(256); a.FloatNoise != (c.Noisy() && !tc.secure) || !c.Private() && a.Sigma != 0 {
			t.Errorf("%s: aggregate FloatNoise %v, σ %v", tc.name, a.FloatNoise, a.Sigma)
		}
	}
	c := TrainDefaults()
	c.Method, c.FloatNoise, c.TargetEpsilon = "nonprivate", true, 0
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "private methods only") {
		t.Errorf("float noise with nonprivate: %v", err)
	}
}

// The identity a checkpoint binds (and a grid cell's key) states the noise
// mode once: a float run's is exactly the one it had before float noise
// became an opt-in (no noise key), a secure run's has secure_noise true as
// the former --secure-noise runs had; the two never coincide.
func TestNoiseIdentity(t *testing.T) {
	base := quickRun("x")
	legacyFloat := base // the former default: no key at all
	legacyFloat.SecureNoise, legacyFloat.FloatNoise = false, false
	float := base
	float.FloatNoise = true
	got, err := configIdentity(&float)
	if err != nil {
		t.Fatal(err)
	}
	legacyFloat.Out, legacyFloat.CheckpointEvery = "", 0
	want, _ := json.Marshal(legacyFloat)
	if string(got) != string(want) {
		t.Errorf("float identity\n%s\nwant the former float run's\n%s", got, want)
	}
	sec, _ := configIdentity(&base)
	if !strings.Contains(string(sec), `"secure_noise":true`) || strings.Contains(string(sec), "float_noise") || string(sec) == string(got) {
		t.Errorf("secure identity %s", sec)
	}
}

// A run directory of the former format — a DP-SGD run started before secure
// noise was the default, whose config.json has no noise key — resumes with
// float noise, the noise it was started with, and continues bit for bit
// like an uninterrupted float run; one stored with secure_noise true
// resumes secure.
func TestLegacyRunResumesWithItsNoise(t *testing.T) {
	if testing.Short() {
		t.Skip("trains on MNIST")
	}
	dir := t.TempDir()
	run := func(out string, steps int, float bool) TrainConfig {
		c := quickRun(filepath.Join(dir, out))
		c.Steps, c.FloatNoise = steps, float
		c.NoiseKey = testNoiseKey(c.Seed) // the same key for the runs compared
		return c
	}
	old := run("old", 6, true)
	if _, err := Train(context.Background(), old, Options{}); err != nil {
		t.Fatal(err)
	}
	// Rewrite config.json as the former code wrote it: no float_noise (and
	// no secure_noise). The checkpoint's binding must still hold.
	path := filepath.Join(old.Out, configFile)
	editJSON(t, path, func(m map[string]json.RawMessage) {
		if string(m["float_noise"]) != "true" {
			t.Fatalf("float run stored float_noise %s", m["float_noise"])
		}
		delete(m, "float_noise")
	})
	if data, _ := os.ReadFile(path); strings.Contains(string(data), "float_noise") || strings.Contains(string(data), "secure_noise") {
		t.Fatalf("not the former format: %s", data)
	}
	stored, err := ReadRunConfig(old.Out)
	if err != nil {
		t.Fatal(err)
	}
	if !stored.FloatNoise || stored.SecureRelease() {
		t.Fatalf("former float run read as float=%v secure=%v", stored.FloatNoise, stored.SecureRelease())
	}
	stored.Steps = 9
	got, err := Train(context.Background(), stored, Options{Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	if !got.FloatNoise || got.SecureNoise || !strings.Contains(got.Noise, "Mironov") {
		t.Errorf("resumed former float run: float %v secure %v noise %q", got.FloatNoise, got.SecureNoise, got.Noise)
	}
	ref := run("ref", 9, true)
	want, err := Train(context.Background(), ref, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Epsilon != want.Epsilon || got.Accountant != want.Accountant {
		t.Errorf("resumed: ε %v (%s), uninterrupted float run ε %v (%s)", got.Epsilon, got.Accountant, want.Epsilon, want.Accountant)
	}
	sameRun(t, ref.Out, old.Out)
	// A secure run's config.json (secure_noise true, as --secure-noise
	// wrote it before) resumes secure.
	sec := run("secure", 3, false)
	if _, err := Train(context.Background(), sec, Options{}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(sec.Out, configFile))
	if !strings.Contains(string(data), `"secure_noise": true`) || strings.Contains(string(data), "float_noise") {
		t.Fatalf("secure config.json: %s", data)
	}
	s2, err := ReadRunConfig(sec.Out)
	if err != nil {
		t.Fatal(err)
	}
	s2.Steps = 5
	res, err := Train(context.Background(), s2, Options{Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	if !res.SecureNoise || res.FloatNoise || res.Steps != 5 {
		t.Errorf("resumed secure run: secure %v float %v steps %d", res.SecureNoise, res.FloatNoise, res.Steps)
	}
}

// Security costs no ε: the secure release is a post-processing of the
// continuous Gaussian mechanism, accounted by its PLD, so a secure DP-SGD
// run at target ε = 3 plans exactly the float run's number of steps (σ =
// 0.7, q = 256/60000, δ = 1e-5: 2,545 steps on the PLD accountant; the
// former secure release, a discrete Gaussian on RDP, planned 469).
func TestSecureDPSGDPlansFloatSteps(t *testing.T) {
	if testing.Short() {
		t.Skip("loads MNIST and plans 2,545 PLD steps twice")
	}
	plan := func(float bool) *sgdJob {
		c := quickRun("")
		c.Steps, c.TargetEpsilon, c.Sigma, c.FloatNoise = 0, 3, 0.7, float
		j, err := buildJob(c, nil)
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	sec, flt := plan(false), plan(true)
	if !aggregateSecure(sec) || aggregateSecure(flt) {
		t.Fatalf("secure job's rule secure=%v, float job's %v", aggregateSecure(sec), aggregateSecure(flt))
	}
	if sm, fm := sec.trainer.StepMechanism(), flt.trainer.StepMechanism(); sm != fm {
		t.Errorf("secure step %+v, float step %+v: not the same mechanism", sm.Spec(), fm.Spec())
	}
	if sec.acct.Kind() != "pld" || flt.acct.Kind() != "pld" {
		t.Errorf("accountants: secure %s, float %s, want pld", sec.acct.Kind(), flt.acct.Kind())
	}
	if sec.until != flt.until || sec.until != 2545 {
		t.Errorf("planned steps: secure %d, float %d, want both 2545", sec.until, flt.until)
	}
}

// aggregateSecure reports whether the job's rule releases secure noise.
func aggregateSecure(j *sgdJob) bool { return j.agg != nil && aggregate.IsSecure(j.agg) }
