package aggregate

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestSecureNamesFromOptions: the rules with a secure release are the ones
// whose options implement SecureOptions, not a list in New.
func TestSecureNamesFromOptions(t *testing.T) {
	if got, want := SecureNames(), []string{"ptr-tsum", "sum", "tsum"}; !slices.Equal(got, want) {
		t.Fatalf("SecureNames() = %v, want %v", got, want)
	}
	for _, n := range Names() {
		o, ok := RuleOptions(n, Config{})
		if !ok {
			t.Fatalf("built-in rule %s has no options type", n)
		}
		_, secure := o.(SecureOptions)
		if secure != slices.Contains(SecureNames(), n) {
			t.Errorf("%s: options %T SecureOptions = %v, disagrees with SecureNames", n, o, secure)
		}
	}
}

// TestRuleOptionsTranslation: each rule's options carry exactly the Config
// fields it reads.
func TestRuleOptionsTranslation(t *testing.T) {
	cfg := Config{Sigma: 1.5, ClipNorm: 2, Tau: 1, B: 0.5, Delta0: 1e-6, F: 3, Select: 4, TrimFraction: 0.2, Radius: 0.3, Iters: 2, Reference: "zero", ExpectedBatch: 9, Smoothing: 1e-3, MaxIter: 7, Tol: 1e-4, FloatNoise: true}
	tests := []struct {
		name string
		want Options
	}{
		{"sum", SumOptions{Sigma: 1.5, ClipNorm: 2, FloatNoise: true}},
		{"tsum", TSumOptions{Sigma: 1.5, ClipNorm: 2, F: 3, FloatNoise: true}},
		{"ptr-tsum", PTROptions{Sigma: 1.5, ClipNorm: 2, F: 3, Tau: 1, B: 0.5, Delta0: 1e-6, FloatNoise: true}},
		{"coord-median", CoordMedianOptions{Sigma: 1.5, ClipNorm: 2}},
		{"coord-trimmed-mean", CoordTrimmedMeanOptions{Sigma: 1.5, ClipNorm: 2, TrimFraction: 0.2}},
		{"krum", KrumOptions{Sigma: 1.5, ClipNorm: 2, F: 3}},
		{"multi-krum", KrumOptions{Sigma: 1.5, ClipNorm: 2, F: 3, Multi: true, Select: 4}},
		{"geomed", GeoMedOptions{Sigma: 1.5, ClipNorm: 2, Smoothing: 1e-3, MaxIter: 7, Tol: 1e-4}},
		{"centered-clip", CenteredClipOptions{Sigma: 1.5, ClipNorm: 2, Radius: 0.3, Iters: 2, Reference: "zero", ExpectedBatch: 9}},
	}
	for _, tc := range tests {
		got, ok := RuleOptions(tc.name, cfg)
		if !ok || got != tc.want {
			t.Errorf("RuleOptions(%s) = %#v, %v; want %#v", tc.name, got, ok, tc.want)
		}
	}
	if _, ok := RuleOptions("no-such-rule", cfg); ok {
		t.Error("RuleOptions of an unknown rule reported ok")
	}
}

// echoOptions is a typed rule's options registered by a test, with a
// secure release of its own.
type echoOptions struct {
	Scale      float64
	FloatNoise bool
}

func (o echoOptions) Validate() error {
	if !(o.Scale > 0) {
		return errors.New("scale must be > 0")
	}
	return nil
}

func (o echoOptions) SecureRequested() bool { return !o.FloatNoise }

type echo struct{ o echoOptions }

func (e *echo) Name() string                                           { return "test-echo" }
func (e *echo) SecureRelease() bool                                    { return !e.o.FloatNoise }
func (e *echo) Aggregate(Grads, *rand.Rand, []float32) (Report, error) { return Report{}, nil }

// TestRegisterRuleTyped: a rule registered from outside the built-ins with
// its own options is validated by them and answers the secure question
// itself.
func TestRegisterRuleTyped(t *testing.T) {
	const name = "test-echo"
	RegisterRule(name, func(c Config) echoOptions {
		s, _ := c.Option("scale")
		return echoOptions{Scale: s, FloatNoise: c.FloatNoise}
	}, func(o echoOptions) (Aggregator, error) { return &echo{o}, nil })
	defer unregister(name)
	if !slices.Contains(SecureNames(), name) {
		t.Fatalf("SecureNames() = %v, missing %s", SecureNames(), name)
	}
	if _, err := New(name, Config{}); err == nil || !strings.Contains(err.Error(), "scale must be > 0") {
		t.Fatalf("New without scale: err = %v", err)
	}
	a, err := New(name, Config{Options: map[string]float64{"scale": 2}})
	if err != nil || !IsSecure(a) {
		t.Fatalf("New secure: %v, secure %v", err, a != nil && IsSecure(a))
	}
	// A noisy rule whose options have no secure release is refused; the
	// refusal lists the registered rules that have one.
	if _, err := New("centered-clip", Config{Sigma: 1, ClipNorm: 1, Radius: 1, Reference: "zero"}); err == nil || !strings.Contains(err.Error(), "no secure-noise mode") || !strings.Contains(err.Error(), name) {
		t.Fatalf("centered-clip secure: err = %v", err)
	}
}
