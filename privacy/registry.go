package privacy

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// SpecDecoder rebuilds a mechanism of one kind from its Spec (as written by
// the mechanism's Spec method). A wrapper kind rebuilds its inner mechanism
// with FromSpec. FromSpec validates what the decoder returns.
type SpecDecoder func(Spec) (Mechanism, error)

// decoders maps each mechanism kind to its decoder. It is written only by
// Register (the built-ins register in init below, other packages in theirs).
var (
	decodersMu sync.RWMutex
	decoders   = map[string]SpecDecoder{}
)

// Register makes FromSpec, hence the accountant's JSON restore (and so the
// resumption of a run), understand mechanisms of the given kind, as
// database/sql's Register does for drivers: call it from the init function
// of the package that defines the mechanism, with the kind its Spec method
// writes. It panics if kind is empty, decode is nil or kind is already
// registered.
//
// The accountant trusts a mechanism's RDP method: a registered mechanism's
// doc comment must state the bound it implements, its source and its
// validity conditions, and RDP must check them (see Mechanism).
func Register(kind string, decode SpecDecoder) {
	if kind == "" {
		panic("privacy: Register with an empty mechanism kind")
	}
	if decode == nil {
		panic("privacy: Register of mechanism kind " + strconv.Quote(kind) + " with a nil decoder")
	}
	decodersMu.Lock()
	defer decodersMu.Unlock()
	if _, dup := decoders[kind]; dup {
		panic("privacy: Register called twice for mechanism kind " + strconv.Quote(kind))
	}
	decoders[kind] = decode
}

// Kinds lists the registered mechanism kinds in lexical order.
func Kinds() []string {
	decodersMu.RLock()
	defer decodersMu.RUnlock()
	kinds := make([]string, 0, len(decoders))
	for k := range decoders {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	return kinds
}

// The built-in mechanisms register themselves like any other.
func init() {
	Register("gaussian", gaussianFromSpec)
	Register("laplace", laplaceFromSpec)
	Register("ptr", ptrFromSpec)
	Register("subsampled-gaussian", subsampledGaussianFromSpec)
	Register("poisson-subsampled", func(s Spec) (Mechanism, error) { return poissonSubsampledFromSpec(s, FromSpec) })
	Register("rgm", func(s Spec) (Mechanism, error) { return RGMFromSpec(s) })
	Register("discrete-gaussian", discreteGaussianFromSpec)
	Register("discrete-laplace", discreteLaplaceFromSpec)
	Register("ptr-discrete", ptrDiscreteFromSpec)
}

// FromSpec rebuilds a mechanism from its Spec with the decoder registered
// for s.Kind (see Register and Kinds) and validates it. The rebuilt
// mechanism must describe itself with the same kind.
func FromSpec(s Spec) (Mechanism, error) {
	decodersMu.RLock()
	decode, ok := decoders[s.Kind]
	decodersMu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("mechanism spec: unknown kind %q; registered: %s", s.Kind, strings.Join(Kinds(), ", "))
	}
	m, err := decode(s)
	if err != nil {
		return nil, err
	}
	if m == nil {
		return nil, fmt.Errorf("mechanism spec %q: decoder returned no mechanism", s.Kind)
	}
	if k := m.Spec().Kind; k != s.Kind {
		return nil, fmt.Errorf("mechanism spec %q: decoder returned a mechanism of kind %q", s.Kind, k)
	}
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("mechanism spec %q: %w", s.Kind, err)
	}
	return m, nil
}

// specParams returns the values of exactly the named parameters of a leaf
// spec (no Inner, no Options), in the order given.
func specParams(s Spec, names ...string) ([]float64, error) {
	if s.Inner != nil {
		return nil, fmt.Errorf("mechanism spec %q: unexpected inner mechanism", s.Kind)
	}
	if len(s.Options) != 0 {
		return nil, fmt.Errorf("mechanism spec %q: unexpected options %v", s.Kind, s.Options)
	}
	out := make([]float64, len(names))
	for i, n := range names {
		v, ok := s.Params[n]
		if !ok {
			return nil, fmt.Errorf("mechanism spec %q: missing parameter %q", s.Kind, n)
		}
		out[i] = v
	}
	if len(s.Params) != len(names) {
		var extra []string
		for k := range s.Params {
			found := false
			for _, n := range names {
				found = found || k == n
			}
			if !found {
				extra = append(extra, k)
			}
		}
		sort.Strings(extra)
		return nil, fmt.Errorf("mechanism spec %q: unknown parameters %v", s.Kind, extra)
	}
	return out, nil
}

func gaussianFromSpec(s Spec) (Mechanism, error) {
	p, err := specParams(s, "sigma")
	if err != nil {
		return nil, err
	}
	return Gaussian{Sigma: p[0]}, nil
}

func laplaceFromSpec(s Spec) (Mechanism, error) {
	p, err := specParams(s, "b")
	if err != nil {
		return nil, err
	}
	return Laplace{B: p[0]}, nil
}

func ptrFromSpec(s Spec) (Mechanism, error) {
	p, err := specParams(s, "sigma1", "tau", "b", "delta0")
	if err != nil {
		return nil, err
	}
	return PTR{Sigma1: p[0], Tau: p[1], B: p[2], Delta0: p[3]}, nil
}

func subsampledGaussianFromSpec(s Spec) (Mechanism, error) {
	p, err := specParams(s, "q", "sigma")
	if err != nil {
		return nil, err
	}
	return SubsampledGaussian{Q: p[0], Sigma: p[1]}, nil
}
