package aggregate

import (
	"fmt"
	"math"
	"strconv"
)

// Options is a rule's own options type: the settings the rule reads, and
// their validation. Each built-in rule declares one (SumOptions,
// PTROptions, KrumOptions, …) next to the rule, with a translation from the
// serialized form Config (RegisterRule), so a rule's options are visible
// from the rule and a run's Config still names every setting in one place.
type Options interface {
	// Validate rejects invalid settings with a descriptive error.
	Validate() error
}

// SecureOptions is implemented by the options of a rule that has a
// floating-point-safe release (secureRelease), its default: the rule's own
// answer to whether it has one (SecureNames lists these rules). New asks
// the built instance whether it used it (SecureReleaser) and refuses a
// rule that adds noise without it unless Config.FloatNoise is set, so a
// rule that ignores the default is refused too.
type SecureOptions interface {
	Options
	// SecureRequested reports whether these options select the secure
	// release of the rule's noise (true unless they opt out with
	// FloatNoise).
	SecureRequested() bool
}

// rule is one registry entry: its constructor from the serialized Config
// and, for rules registered with RegisterRule, its options (the zero value
// answers "has a secure release?" through SecureOptions).
type rule struct {
	ctor Constructor
	// options translates a Config to the rule's options (nil: the rule was
	// registered with Register and reads Config directly).
	options func(Config) Options
}

// RegisterRule makes a rule with its own options type O available to New
// under name: fromConfig translates the serialized Config to O (New then
// calls O.Validate and build), and Build constructs it from O directly. It
// panics as Register does.
func RegisterRule[O Options](name string, fromConfig func(Config) O, build func(O) (Aggregator, error)) {
	if fromConfig == nil || build == nil {
		panic("aggregate: RegisterRule of rule " + strconv.Quote(name) + " with a nil translation or constructor")
	}
	rules.Register(name, rule{
		ctor: func(c Config) (Aggregator, error) {
			o := fromConfig(c)
			if err := o.Validate(); err != nil {
				return nil, err
			}
			return build(o)
		},
		options: func(c Config) Options { return fromConfig(c) },
	})
}

// RuleOptions returns the named rule's own options translated from cfg
// (not validated), or ok = false if the rule reads Config directly
// (registered with Register) or is unknown.
func RuleOptions(name string, cfg Config) (o Options, ok bool) {
	r, found := rules.Lookup(name)
	if !found || r.options == nil {
		return nil, false
	}
	return r.options(cfg), true
}

// hasSecureRelease reports the rule's own answer to whether it has a
// floating-point-safe release: its options implement SecureOptions (rules
// registered with Register answer through their instance, SecureReleaser).
func (r rule) hasSecureRelease() (answer, known bool) {
	if r.options == nil {
		return false, false
	}
	_, ok := r.options(Config{}).(SecureOptions)
	return ok, true
}

// checkNoise validates σ ≥ 0 and R ≥ 0 finite, and R > 0 when σ > 0: the
// noise settings every rule with a clip norm shares.
func checkNoise(sigma, clip float64) error {
	if !(sigma >= 0) || math.IsInf(sigma, 0) {
		return fmt.Errorf("noise multiplier σ must be finite and ≥ 0, got %v", sigma)
	}
	if !(clip >= 0) || math.IsInf(clip, 0) {
		return fmt.Errorf("clip norm R must be finite and ≥ 0, got %v", clip)
	}
	if sigma > 0 && clip == 0 {
		return fmt.Errorf("noise multiplier σ = %v > 0 needs a clip norm R > 0", sigma)
	}
	return nil
}

// checkTrim validates the trim level F ≥ 0.
func checkTrim(f int) error {
	if f < 0 {
		return fmt.Errorf("F must be ≥ 0, got %d", f)
	}
	return nil
}

// nonPrivateOnly rejects σ > 0 for a rule whose sensitivity makes Gaussian
// noise useless; why is the rule's doc comment.
func nonPrivateOnly(sigma float64, why string) error {
	if sigma != 0 {
		return fmt.Errorf("only σ = 0 (non-private) is supported: %s", why)
	}
	return nil
}
