package runner

import (
	"fmt"
	"slices"
	"strconv"
	"sync/atomic"

	"github.com/privtrain/privtrain/aggregate"
	"github.com/privtrain/privtrain/internal/registry"
	"github.com/privtrain/privtrain/optim"
)

// Family is the job loop a training method runs in.
type Family int

const (
	// FamilySGD runs one trainer for the whole run (sampler, rule, step
	// policy, accountant): nonprivate, dpsgd, tsgd-*, nonprivate-robust.
	FamilySGD Family = iota
	// FamilyPDP runs personalized-DP rounds charged to a per-example
	// ledger (pdp-*); built-in methods only.
	FamilyPDP
)

// Method is a training method: a plug-in that runner.Train, `trainer train
// --method`, its help and the configuration checks read from the method
// registry (RegisterMethod). Each built-in method is one file (method_*.go).
type Method struct {
	// Name is the value of TrainConfig.Method (--method).
	Name string
	// Summary is the method's one-line description for help texts.
	Summary string
	// Family is the job loop the method runs in.
	Family Family
	// Private methods add noise and are accounted by a privacy accountant:
	// Poisson sampling on a secret key, the rule's secure release (unless
	// FloatNoise), the default accountant, a target ε. A FamilySGD method
	// that is not private samples shuffled batches from the public seed.
	Private bool
	// Flags lists the method-dependent `trainer train` flags the method
	// uses; the CLI refuses them for methods that do not list them.
	Flags []string
	// Options declares the method's own numeric settings, stored in
	// TrainConfig.MethodOptions and given as --NAME on the command line.
	Options []MethodOption
	// Validate checks the method's own settings, after the checks every
	// method of its family gets (nil: none).
	Validate func(c *TrainConfig) error
	// Rule returns the aggregation rule of a FamilySGD method and its
	// configuration, given the run's serialized one (nil or "": none, the
	// plain mean of the step).
	Rule func(c *TrainConfig, ac aggregate.Config) (string, aggregate.Config)
	// Policy returns the method's step policy (nil: none), for the expected
	// batch size.
	Policy func(c *TrainConfig, expected float64) optim.StepPolicy
	// pdp is a FamilyPDP method's variant of the round loop.
	pdp *pdpVariant
	// seq orders Methods: registration order.
	seq int64
}

// MethodOption is one numeric setting a method declares.
type MethodOption struct {
	// Name is its key in TrainConfig.MethodOptions and its flag (--Name).
	Name, Usage string
	// Default is its value when not set.
	Default float64
}

// methods is the method registry; methodSeq numbers registrations.
var (
	methods   = registry.New[Method]("runner", "method")
	methodSeq atomic.Int64
)

// RegisterMethod makes m available as TrainConfig.Method = m.Name, from the
// init function of the package defining it (in this module or another). It
// panics if the name is empty or taken, or m is not a FamilySGD method (the
// personalized-DP round loop takes built-in variants only).
func RegisterMethod(m Method) {
	if m.Family == FamilyPDP && m.pdp == nil {
		panic("runner: RegisterMethod " + strconv.Quote(m.Name) + ": only built-in methods run personalized-DP rounds")
	}
	m.seq = methodSeq.Add(1)
	methods.Register(m.Name, m)
}

// LookupMethod returns the registered method name.
func LookupMethod(name string) (Method, bool) { return methods.Lookup(name) }

// Methods lists the registered training methods, built-ins first, in
// registration order.
func Methods() []string {
	var ms []Method
	for _, n := range methods.Names() {
		if m, ok := methods.Lookup(n); ok {
			ms = append(ms, m)
		}
	}
	slices.SortFunc(ms, func(a, b Method) int { return int(a.seq - b.seq) })
	names := make([]string, len(ms))
	for i, m := range ms {
		names[i] = m.Name
	}
	return names
}

// methodsWhere lists the registered methods satisfying keep, in Methods'
// order.
func methodsWhere(keep func(Method) bool) []string {
	var out []string
	for _, n := range Methods() {
		if m, ok := methods.Lookup(n); ok && keep(m) {
			out = append(out, n)
		}
	}
	return out
}

// MethodFlags maps each method-dependent `trainer train` flag to the
// methods that use it (Method.Flags and Method.Options), in Methods' order.
func MethodFlags() map[string][]string {
	users := map[string][]string{}
	for _, n := range Methods() {
		m, _ := methods.Lookup(n)
		for _, f := range m.Flags {
			users[f] = append(users[f], n)
		}
		for _, o := range m.Options {
			users[o.Name] = append(users[o.Name], n)
		}
	}
	return users
}

// MethodOptions lists the options every registered method declares, in
// Methods' order (a name declared twice is listed once, first wins).
func MethodOptions() []MethodOption {
	var out []MethodOption
	seen := map[string]bool{}
	for _, n := range Methods() {
		m, _ := methods.Lookup(n)
		for _, o := range m.Options {
			if !seen[o.Name] {
				seen[o.Name] = true
				out = append(out, o)
			}
		}
	}
	return out
}

// MethodOption returns the method's option name: its value in
// MethodOptions, else its declared default.
func (c *TrainConfig) MethodOption(name string) float64 {
	if v, ok := c.MethodOptions[name]; ok {
		return v
	}
	if m, ok := methods.Lookup(c.Method); ok {
		for _, o := range m.Options {
			if o.Name == name {
				return o.Default
			}
		}
	}
	return 0
}

// method returns c's registered method (the zero Method if unknown:
// Validate refuses those).
func (c *TrainConfig) method() Method {
	m, _ := methods.Lookup(c.Method)
	return m
}

// checkMethodOptions refuses options the method does not declare.
func (c *TrainConfig) checkMethodOptions(m Method) error {
	for k := range c.MethodOptions {
		if !slices.ContainsFunc(m.Options, func(o MethodOption) bool { return o.Name == k }) {
			return fmt.Errorf("invalid configuration: method %s has no option %q", m.Name, k)
		}
	}
	return nil
}

// The built-in methods, in the order Methods lists them.
func init() {
	for _, m := range []Method{nonprivateMethod(), dpsgdMethod(), tsgdGaussianMethod(), tsgdPTRMethod(), nonprivateRobustMethod(),
		pdpSGDMethod(), pdpSamplingMethod(), pdpAdaPDPMethod(), pdpDPSGDMethod()} {
		RegisterMethod(m)
	}
}

// SGDFlags are the method-dependent flags every FamilySGD method uses: the
// run length in epochs, evaluation and corruptions.
func SGDFlags() []string {
	return flags([]string{"epochs", "eval-every", "corruption", "corruption-ratio"}, OptimizerFlags())
}

// PrivateFlags are the flags of every private method: noise, clipping,
// δ and the accounting, the noise mode and key, a target ε.
func PrivateFlags() []string {
	return []string{"sigma", "clip", "delta", "conversion", "float-noise", "noise-key-file", "target-epsilon", "allow-unproven"}
}

// flags concatenates flag lists.
func flags(lists ...[]string) []string { return slices.Concat(lists...) }
