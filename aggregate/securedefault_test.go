package aggregate

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/privtrain/privtrain/privacy"
	"github.com/privtrain/privtrain/randstream"
)

// onGrid reports whether every value of out is an integer multiple of
// 2^exp (exact: a float32 times a power of two is exact).
func onGrid(out []float32, exp int) bool {
	for _, v := range out {
		x := math.Ldexp(float64(v), -exp)
		if x != math.Trunc(x) {
			return false
		}
	}
	return true
}

// plannedNoise is a rule registered with its own options (no
// SecureOptions) whose noise is configured outside Config.Sigma: it plans
// a Gaussian mechanism whenever its "noise" option is > 0, so New must see
// it as noisy through Planned.
type plannedNoiseOptions struct{ noise float64 }

func (plannedNoiseOptions) Validate() error { return nil }

type plannedNoise struct{ o plannedNoiseOptions }

func (p *plannedNoise) Name() string { return "test-planned-noise" }
func (p *plannedNoise) Aggregate(g Grads, _ *rand.Rand, out []float32) (Report, error) {
	clear(out)
	return Report{Mechanism: p.Mechanism()}, nil
}
func (p *plannedNoise) Mechanism() privacy.Mechanism {
	if p.o.noise > 0 {
		return privacy.Gaussian{Sigma: p.o.noise}
	}
	return nil
}

// TestZeroConfigIsSecure: the zero value of Config.FloatNoise selects the
// floating-point-safe release of every noisy rule that has one (IsSecure,
// and every released value on the grid γ = 2^(⌊log₂ σR⌋ − 14) of
// secureRelease); FloatNoise selects the float release (off the grid); a
// noisy rule without a secure release is refused unless FloatNoise is set,
// naming the rule and the opt-out; σ = 0 (non-private) use is unchanged.
func TestZeroConfigIsSecure(t *testing.T) {
	const plain, planned = "test-plain-noisy", "test-planned-noise"
	Register(plain, func(cfg Config) (Aggregator, error) { return &halfSum{cfg}, nil })
	defer unregister(plain)
	RegisterRule(planned, func(c Config) plannedNoiseOptions {
		v, _ := c.Option("noise")
		return plannedNoiseOptions{v}
	}, func(o plannedNoiseOptions) (Aggregator, error) { return &plannedNoise{o}, nil })
	defer unregister(planned)
	rgm, err := privacy.CalibrateRGM(1, 2, 1e-3, 1, 16)
	if err != nil {
		t.Fatal(err)
	}

	const m, p = 12, 16
	g := batch(randRows(rand.New(rand.NewPCG(5, 6)), m, p, 1), 1)
	ptr := Config{Sigma: 1.1, ClipNorm: 1, Tau: 0.5, B: 1, Delta0: 1e-8, F: 2}
	for _, tc := range []struct {
		rule string
		cfg  Config
		// secure: the rule has a secure release; noisy: it adds noise.
		secure, noisy bool
	}{
		{"sum", Config{Sigma: 1.1, ClipNorm: 1}, true, true},
		{"sum", Config{Sigma: 0.3, ClipNorm: 1}, true, true},
		{"tsum", Config{Sigma: 0.7, ClipNorm: 1, F: 3}, true, true},
		{"ptr-tsum", ptr, true, true},
		{"centered-clip", Config{Sigma: 1, ClipNorm: 1, Radius: 0.5, Reference: "zero"}, false, true},
		{"rgm-sum", Config{RGM: rgm}, false, true},
		{plain, Config{Sigma: 1, ClipNorm: 1, Options: map[string]float64{"divisor": 2}}, false, true},
		{planned, Config{Options: map[string]float64{"noise": 2}}, false, true},
		// σ = 0: non-private, exact, with the zero Config.
		{"sum", Config{}, true, false},
		{"sum", Config{ClipNorm: 1}, true, false},
		{"tsum", Config{F: 2}, true, false},
		{"coord-median", Config{}, false, false},
		{"coord-trimmed-mean", Config{TrimFraction: 0.1}, false, false},
		{"krum", Config{F: 2}, false, false},
		{"multi-krum", Config{F: 2}, false, false},
		{"geomed", Config{}, false, false},
		{"centered-clip", Config{Radius: 0.5, Iters: 3}, false, false},
		{plain, Config{Options: map[string]float64{"divisor": 2}}, false, false},
		{planned, Config{}, false, false},
	} {
		for _, float := range []bool{false, true} {
			cfg := tc.cfg
			cfg.FloatNoise = float
			a, err := New(tc.rule, cfg)
			if tc.noisy && !tc.secure && !float {
				if err == nil {
					t.Errorf("%s %+v: a noisy rule without a secure release was built with the zero FloatNoise", tc.rule, tc.cfg)
					continue
				}
				for _, want := range []string{`"` + tc.rule + `"`, "no secure-noise mode", "Config.FloatNoise", "floating-point attacks"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("%s: refusal %q lacks %q", tc.rule, err, want)
					}
				}
				continue
			}
			if err != nil {
				t.Errorf("%s %+v FloatNoise=%v: %v", tc.rule, tc.cfg, float, err)
				continue
			}
			if want := tc.noisy && tc.secure && !float; IsSecure(a) != want {
				t.Errorf("%s %+v FloatNoise=%v: IsSecure = %v, want %v", tc.rule, tc.cfg, float, IsSecure(a), want)
			}
			if !tc.noisy {
				if pl, ok := a.(Planned); ok && pl.Mechanism() != nil {
					t.Errorf("%s %+v: plans %v without noise", tc.rule, tc.cfg, pl.Mechanism())
				}
			}
			if !tc.secure || !tc.noisy {
				continue
			}
			// The release of a rule with a secure release is on its grid
			// exactly when it is secure.
			exp := int(math.Floor(math.Log2(cfg.Sigma*cfg.ClipNorm))) - secureGridBits
			out := make([]float32, p)
			rng := randstream.FromSeed(3).Stream("zero-config", 0)
			if _, err := a.Aggregate(g, rng, out); err != nil {
				t.Fatal(err)
			}
			if onGrid(out, exp) == float {
				t.Errorf("%s %+v FloatNoise=%v: release on the grid 2^%d = %v, want %v", tc.rule, tc.cfg, float, exp, onGrid(out, exp), !float)
			}
		}
	}
}

// TestZeroConfigNonPrivateExact: with σ = 0 the zero Config releases the
// exact aggregate, bit for bit the same with FloatNoise: the exact sum
// (rows of small dyadic values, so every float32 partial sum is exact and
// the reference is independent of the summation order) and the trimmed sum.
func TestZeroConfigNonPrivateExact(t *testing.T) {
	rows := [][]float32{{0.5, -0.25, 0.125}, {0.25, 0.25, -0.5}, {-0.125, 0.5, 0.25}, {0.75, 0, 0}}
	g := batch(rows, 1)
	for _, tc := range []struct {
		rule string
		cfg  Config
		want []float32
	}{
		{"sum", Config{}, []float32{1.375, 0.5, -0.125}},
		// F = 1 drops the largest norm, ‖(0.75, 0, 0)‖ = 0.75 (the others
		// are ≈ 0.57, 0.61, 0.57).
		{"tsum", Config{F: 1}, []float32{0.625, 0.5, -0.125}},
	} {
		for _, float := range []bool{false, true} {
			cfg := tc.cfg
			cfg.FloatNoise = float
			a, err := New(tc.rule, cfg)
			if err != nil {
				t.Fatal(err)
			}
			out := make([]float32, 3)
			rep, err := a.Aggregate(g, nil, out)
			if err != nil {
				t.Fatalf("%s FloatNoise=%v: %v", tc.rule, float, err)
			}
			for j := range out {
				if out[j] != tc.want[j] {
					t.Errorf("%s FloatNoise=%v: out %v, want %v", tc.rule, float, out, tc.want)
					break
				}
			}
			if rep.Mechanism != nil || IsSecure(a) {
				t.Errorf("%s FloatNoise=%v: mechanism %v, IsSecure %v; want none (non-private)", tc.rule, float, rep.Mechanism, IsSecure(a))
			}
		}
	}
}

// TestRuleIgnoringSecureDefault: a registered rule whose options claim a
// secure release but whose noisy instance does not release it is refused
// by default (New asks the instance), with a message saying so.
func TestRuleIgnoringSecureDefault(t *testing.T) {
	const name = "test-ignores-secure"
	RegisterRule(name, func(c Config) echoOptions {
		return echoOptions{Scale: 1, FloatNoise: c.FloatNoise}
	}, func(o echoOptions) (Aggregator, error) { return &ignoring{}, nil })
	defer unregister(name)
	_, err := New(name, Config{Sigma: 1, ClipNorm: 1})
	if err == nil || !strings.Contains(err.Error(), "no secure-noise mode for these settings") || !strings.Contains(err.Error(), "Config.FloatNoise") {
		t.Fatalf("rule ignoring the secure default: err = %v", err)
	}
	if _, err := New(name, Config{Sigma: 1, ClipNorm: 1, FloatNoise: true}); err != nil {
		t.Fatalf("with FloatNoise: %v", err)
	}
}

// ignoring plans float Gaussian noise and never releases securely.
type ignoring struct{}

func (*ignoring) Name() string { return "test-ignores-secure" }
func (*ignoring) Aggregate(Grads, *rand.Rand, []float32) (Report, error) {
	return Report{}, errors.New("unused")
}
func (*ignoring) Mechanism() privacy.Mechanism { return privacy.Gaussian{Sigma: 1} }
