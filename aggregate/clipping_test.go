package aggregate

import "testing"

// TestBuiltinRulesStateTheirClipNorm: every built-in rule but rgm-sum
// reports the R of its configuration (Clipping), so a trainer can take it
// from the rule; rgm-sum needs no clipping and does not.
func TestBuiltinRulesStateTheirClipNorm(t *testing.T) {
	for _, name := range Names() {
		var a Aggregator
		var err error
		for _, sigma := range []float64{0, 1.1} { // non-private rules refuse σ > 0, ptr-tsum σ = 0
			cfg := Config{Sigma: sigma, ClipNorm: 0.7, Tau: 0.35, B: 1, Delta0: 1e-8, F: 1, TrimFraction: 0.1, Radius: 1, ExpectedBatch: 8, FloatNoise: true}
			if a, err = New(name, cfg); err == nil {
				break
			}
		}
		c, ok := a.(Clipping)
		switch {
		case name == "rgm-sum":
			if ok {
				t.Errorf("rgm-sum states a clipping norm %v; it needs none", c.ClipNorm())
			}
		case err != nil:
			t.Errorf("%s: %v", name, err)
		case !ok:
			t.Errorf("%s does not state its clipping norm (aggregate.Clipping)", name)
		case c.ClipNorm() != 0.7:
			t.Errorf("%s: ClipNorm() = %v, configured 0.7", name, c.ClipNorm())
		}
	}
}
