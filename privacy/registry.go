package privacy

import (
	"fmt"
	"sort"
)

// FromSpec rebuilds a mechanism from its Spec (as written by the mechanism's
// Spec method) and validates it. Known kinds: "gaussian", "laplace", "ptr",
// "subsampled-gaussian", "poisson-subsampled", "rgm", "discrete-gaussian",
// "discrete-laplace" and "ptr-discrete".
//
// A new mechanism kind is registered by adding one case below.
func FromSpec(s Spec) (Mechanism, error) {
	var (
		m   Mechanism
		err error
	)
	switch s.Kind {
	case "gaussian":
		m, err = gaussianFromSpec(s)
	case "laplace":
		m, err = laplaceFromSpec(s)
	case "ptr":
		m, err = ptrFromSpec(s)
	case "subsampled-gaussian":
		m, err = subsampledGaussianFromSpec(s)
	case "poisson-subsampled":
		m, err = poissonSubsampledFromSpec(s, FromSpec)
	case "rgm":
		m, err = RGMFromSpec(s)
	case "discrete-gaussian":
		m, err = discreteGaussianFromSpec(s)
	case "discrete-laplace":
		m, err = discreteLaplaceFromSpec(s)
	case "ptr-discrete":
		m, err = ptrDiscreteFromSpec(s)
	default:
		return nil, fmt.Errorf("mechanism spec: unknown kind %q", s.Kind)
	}
	if err != nil {
		return nil, err
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
