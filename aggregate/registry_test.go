package aggregate

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/privtrain/privtrain/privacy"
)

// unregister removes a rule registered by a test, so that tests iterating
// over Names see only the built-ins.
func unregister(name string) {
	rules.Unregister(name)
}

// halfSum is a rule defined outside the built-ins: it releases Σ g_i / 2
// with noise of σ·R/2 (sensitivity R/2), reading its divisor from Options.
type halfSum struct{ cfg Config }

func (h *halfSum) Name() string { return "test-half-sum" }

func (h *halfSum) Aggregate(g Grads, rng *rand.Rand, out []float32) (Report, error) {
	div, _ := h.cfg.Option("divisor")
	clear(out)
	for i := 0; i < g.M; i++ {
		for j, v := range row(g, i) {
			out[j] += v / float32(div)
		}
	}
	return Report{Mechanism: privacy.Gaussian{Sigma: h.cfg.Sigma}}, nil
}

func TestRegisterExternalRule(t *testing.T) {
	const name = "test-half-sum"
	Register(name, func(cfg Config) (Aggregator, error) {
		if _, ok := cfg.Option("divisor"); !ok {
			return nil, errMissingDivisor
		}
		return &halfSum{cfg: cfg}, nil
	})
	defer unregister(name)

	if !slices.Contains(Names(), name) || !slices.IsSorted(Names()) {
		t.Fatalf("Names() = %v: want sorted and containing %q", Names(), name)
	}
	if _, err := New(name, Config{}); err == nil || !strings.Contains(err.Error(), "divisor") {
		t.Fatalf("New without the option: err = %v, want the constructor's error", err)
	}
	if _, err := New(name, Config{Sigma: -1, Options: map[string]float64{"divisor": 2}}); err == nil {
		t.Fatal("New accepted σ < 0: the common checks must run for registered rules too")
	}
	a, err := New(name, Config{Sigma: 1, ClipNorm: 1, Options: map[string]float64{"divisor": 2}, FloatNoise: true})
	if err != nil {
		t.Fatal(err)
	}
	g := batch([][]float32{{1, 2}, {3, -4}}, 5)
	out := make([]float32, 2)
	rep, err := a.Aggregate(g, nil, out)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out, []float32{2, -1}) || rep.Mechanism != (privacy.Gaussian{Sigma: 1}) {
		t.Fatalf("released %v with %v, want [2 -1] with Gaussian{1}", out, rep.Mechanism)
	}
}

var errMissingDivisor = errors.New("option divisor is required")

func TestRegisterPanics(t *testing.T) {
	ok := func(Config) (Aggregator, error) { return nil, nil }
	for _, tc := range []struct {
		name string
		ctor Constructor
		want string
	}{
		{"", ok, "empty"},
		{"test-nil", nil, "nil constructor"},
		{"sum", ok, "twice"},
	} {
		func() {
			defer func() {
				r := recover()
				if s, _ := r.(string); !strings.Contains(s, tc.want) {
					t.Errorf("Register(%q): panic %v, want one mentioning %q", tc.name, r, tc.want)
				}
			}()
			Register(tc.name, tc.ctor)
		}()
	}
	if slices.Contains(Names(), "test-nil") || slices.Contains(Names(), "") {
		t.Fatalf("a rejected registration was kept: %v", Names())
	}
}

func TestNewUnknownListsRegistered(t *testing.T) {
	_, err := New("nope", Config{})
	if err == nil {
		t.Fatal("New accepted an unknown rule")
	}
	want := "registered: " + strings.Join(Names(), ", ")
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q does not list the rules (%q)", err, want)
	}
}

func TestNewNilAggregator(t *testing.T) {
	const name = "test-nil-result"
	Register(name, func(Config) (Aggregator, error) { return nil, nil })
	defer unregister(name)
	if _, err := New(name, Config{}); err == nil {
		t.Fatal("New returned a nil aggregator without error")
	}
}
