package model

// New returns a model of the given architecture with parameters initialised
// from seed (see the package documentation for architectures, parameter
// order and initialisation). The same spec and seed give bit-identical
// parameters and results.
func New(spec Spec, seed uint64) (Model, error) {
	n, err := newNet(spec, seed)
	if err != nil {
		return nil, err
	}
	return n, nil
}
