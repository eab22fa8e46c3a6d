package aggregate

// Diagnostics is a rule's own record of one aggregation (Report.Diagnostics):
// each rule defines its type, so a new rule has a place for what it wants
// to log without fields in the shared Report. The whole value is
// operator-only (a run writes it to private/diagnostics.jsonl): it may hold
// values that are not privatized.
type Diagnostics interface {
	// Public returns the release-safe part of the record (a run writes it
	// to metrics.jsonl): values that are functions of the privatized
	// release and the public configuration only. It must marshal to a JSON
	// object; nil means nothing.
	Public() any
}

// PTRDiagnostics is ptr-tsum's record of a step. Branch and F are public
// (the test's privatized outcome bit, and a trim level that is a function
// of earlier bits and the configuration); Delta and DeltaHat are not.
type PTRDiagnostics struct {
	// Branch is the test's outcome.
	Branch PTROutcome `json:"branch,omitempty"`
	// Delta is Δ(S), the safety margin; DeltaHat its noisy version Δ̂.
	Delta    int     `json:"delta,omitempty"`
	DeltaHat float64 `json:"delta_hat,omitempty"`
	// F is the trim level the step used.
	F int `json:"f,omitempty"`
}

// ptrPublic is the release-safe part of PTRDiagnostics.
type ptrPublic struct {
	Branch PTROutcome `json:"branch,omitempty"`
	F      int        `json:"f,omitempty"`
}

// Public returns the outcome bit and F.
func (d PTRDiagnostics) Public() any { return ptrPublic{Branch: d.Branch, F: d.F} }

// TrimDiagnostics is tsum's record of a step: the trim level F (public, a
// configuration value).
type TrimDiagnostics struct {
	F int `json:"f,omitempty"`
}

// Public returns d: F is public.
func (d TrimDiagnostics) Public() any { return d }
