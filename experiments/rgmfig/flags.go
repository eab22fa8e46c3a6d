package rgmfig

import (
	"fmt"
	"math"
	"strings"

	"github.com/privtrain/privtrain/experiments/rgmfig/ridgegd"
)

// NoiseStatement is what `trainer rgm-gd` says of its noise
// (ridgegd.NoiseStatement): float noise, not floating-point safe.
const NoiseStatement = ridgegd.NoiseStatement

// MaxNodes bounds GDFlags.Nodes: ijcnn1's 141,691 rows leave each of 10,000
// nodes about 14, fewer than its 22 features.
const MaxNodes = 10000

// GDFlags is the flag form of one GD experiment (`trainer rgm-gd` without
// --figure): strings for the enumerations, checked by Validate and
// translated by Config. Errors name the flags (--nodes, …).
type GDFlags struct {
	Split, Method, ClipNoise, Constants string
	Nodes, Warmup, Iterations, Runs     int
	Bias, Epsilon, Alpha, MuReg         float64
	ClipFactor, PTREpsilon, PTRDelta    float64
	Seed                                uint64
}

// Private reports whether the experiment adds noise (Method ≠ none).
func (f GDFlags) Private() bool { return ridgegd.Method(f.Method) != ridgegd.MethodNone }

// Validate checks every setting (before any data is loaded).
func (f GDFlags) Validate() error {
	if err := f.checkNumbers(); err != nil {
		return err
	}
	for _, c := range [][]string{
		{"method", f.Method, string(ridgegd.MethodRGM), string(ridgegd.MethodClip), string(ridgegd.MethodNone)},
		{"split", f.Split, string(ridgegd.SplitRandom), string(ridgegd.SplitLabel), string(ridgegd.SplitLabelOffset), string(ridgegd.SplitBias)},
		{"clip-noise", f.ClipNoise, string(ridgegd.ClipNoiseEq82), string(ridgegd.ClipNoiseReplaceOne)},
		{"constants", f.Constants, string(ridgegd.ConstantsRigorous), string(ridgegd.ConstantsPaper)},
	} {
		if err := OneOf(c[0], c[1], c[2:]...); err != nil {
			return err
		}
	}
	return nil
}

// checkNumbers is Validate's check of the numeric settings.
func (f GDFlags) checkNumbers() error {
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	switch {
	case f.Runs < 1:
		return fmt.Errorf("--runs must be ≥ 1, got %d", f.Runs)
	case f.Iterations < 1:
		return fmt.Errorf("--iterations must be ≥ 1, got %d", f.Iterations)
	case f.Nodes < 1 || f.Nodes > MaxNodes:
		return fmt.Errorf("--nodes must be in [1, %d], got %d", MaxNodes, f.Nodes)
	case f.Warmup < 0:
		return fmt.Errorf("--warmup must be ≥ 0, got %d", f.Warmup)
	case !(f.Epsilon > 0) || !finite(f.Epsilon):
		return fmt.Errorf("--epsilon must be finite and > 0, got %v", f.Epsilon)
	case !(f.Alpha > 1) || !finite(f.Alpha):
		return fmt.Errorf("--alpha must be finite and > 1, got %v", f.Alpha)
	case !(f.MuReg >= 0) || !finite(f.MuReg):
		return fmt.Errorf("--mu-reg must be finite and ≥ 0, got %v", f.MuReg)
	case !finite(f.Bias):
		return fmt.Errorf("--bias must be finite, got %v", f.Bias)
	case !(f.ClipFactor > 0) || !finite(f.ClipFactor):
		return fmt.Errorf("--clip-factor must be finite and > 0, got %v", f.ClipFactor)
	case !(f.PTREpsilon > 0) || !finite(f.PTREpsilon):
		return fmt.Errorf("--ptr-epsilon must be finite and > 0, got %v", f.PTREpsilon)
	case !(f.PTRDelta > 0 && f.PTRDelta < 1):
		return fmt.Errorf("--ptr-delta must be in (0, 1), got %v", f.PTRDelta)
	}
	return nil
}

// Config translates the flags to the experiment's configuration.
func (f GDFlags) Config() GDConfig {
	return GDConfig{
		Split: f.Split, Nodes: f.Nodes, Warmup: f.Warmup, Bias: f.Bias, MuReg: f.MuReg, Seed: f.Seed, Runs: f.Runs,
		GD: ridgegd.Config{
			Method: ridgegd.Method(f.Method), Iterations: f.Iterations, Epsilon: f.Epsilon, Alpha: f.Alpha,
			ClipFactor: f.ClipFactor, ClipNoise: ridgegd.ClipNoise(f.ClipNoise), Constants: ridgegd.Constants(f.Constants),
			PTREpsilon: f.PTREpsilon, PTRDelta: f.PTRDelta,
		},
	}
}

// OneOf rejects a flag value v outside allowed, naming the flag.
func OneOf(name, v string, allowed ...string) error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return fmt.Errorf("--%s must be %s, got %q", name, strings.Join(allowed, ", "), v)
}
