package privacy

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
)

// relabeled is the RDP accountant under another name and without its own
// calibrator, as an accountant registered from outside would be.
type relabeled struct{ inner *RDPAccounting }

func (r *relabeled) Kind() string                         { return "test-rdp" }
func (r *relabeled) Compose(m Mechanism, count int) error { return r.inner.Compose(m, count) }
func (r *relabeled) Steps() int                           { return r.inner.Steps() }
func (r *relabeled) History() []Composition               { return r.inner.History() }
func (r *relabeled) EpsilonFor(d float64) (Guarantee, error) {
	g, err := r.inner.EpsilonFor(d)
	g.Accountant = "test-rdp"
	return g, err
}
func (r *relabeled) DeltaFor(e float64) (Guarantee, error) { return r.inner.DeltaFor(e) }
func (r *relabeled) MaxSteps(m Mechanism, target, delta float64, limit int) (int, error) {
	return r.inner.MaxSteps(m, target, delta, limit)
}
func (r *relabeled) CloneAccountant() Accountant {
	return &relabeled{r.inner.CloneAccountant().(*RDPAccounting)}
}
func (r *relabeled) MarshalJSON() ([]byte, error) {
	st, err := json.Marshal(r.inner)
	if err != nil {
		return nil, err
	}
	return json.Marshal(map[string]any{"accountant": "test-rdp", "state": json.RawMessage(st)})
}

func registerRelabeled(t *testing.T) {
	RegisterAccountant("test-rdp", AccountantDef{
		New: func(cfg AccountantConfig) (Accountant, error) {
			a, err := NewAccountant(KindRDP, cfg)
			if err != nil {
				return nil, err
			}
			return &relabeled{a.(*RDPAccounting)}, nil
		},
		Load: func(data []byte, cfg AccountantConfig) (Accountant, error) {
			var w struct {
				State json.RawMessage `json:"state"`
			}
			if err := json.Unmarshal(data, &w); err != nil {
				return nil, err
			}
			a, err := loadRDP(w.State, cfg)
			if err != nil {
				return nil, err
			}
			return &relabeled{a.(*RDPAccounting)}, nil
		},
		Accepts: func(m Mechanism) error {
			if _, ok := m.(PTRDiscrete); ok {
				return errReject
			}
			return nil
		},
	})
	t.Cleanup(func() { accountants.Unregister("test-rdp") })
}

var errReject = testErr("refuses ptr-discrete")

type testErr string

func (e testErr) Error() string { return string(e) }

// TestRegisterAccountant: a registered accountant is made, listed, checked,
// restored and calibrated on by name; the registry refuses bad entries.
func TestRegisterAccountant(t *testing.T) {
	registerRelabeled(t)
	if !slices.Equal(AccountantNames(), []string{KindPLD, KindRDP, "test-rdp"}) {
		t.Errorf("names %v", AccountantNames())
	}
	a, err := NewAccountant("test-rdp", AccountantConfig{})
	if err != nil {
		t.Fatal(err)
	}
	m := SubsampledGaussian{Q: 0.01, Sigma: 1.1}
	a.Compose(m, 200)
	data, _ := json.Marshal(a)
	b, err := LoadAccountant(data, AccountantConfig{})
	if err != nil || b.Kind() != "test-rdp" {
		t.Fatalf("load: %v, %v", b, err)
	}
	ga, _ := a.EpsilonFor(1e-5)
	gb, _ := b.EpsilonFor(1e-5)
	if ga.Epsilon != gb.Epsilon || ga.Detail != gb.Detail || ga.Steps != gb.Steps {
		t.Errorf("restored %+v, original %+v", gb, ga)
	}
	if err := CheckAccountant("test-rdp", PTRDiscrete{Sigma1: 1, Tau: 0.5, B: 1, Delta0: 1e-5, K: 8}); err == nil || !strings.Contains(err.Error(), "refuses ptr-discrete") {
		t.Errorf("CheckAccountant: %v", err)
	}
	if err := CheckAccountant(KindPLD, PTRDiscrete{Sigma1: 1, Tau: 0.5, B: 1, Delta0: 1e-5, K: 8}); err == nil || !strings.Contains(err.Error(), "no proven privacy loss distribution") {
		t.Errorf("CheckAccountant pld: %v", err)
	}
	if _, err := NewAccountant("nope", AccountantConfig{}); err == nil || !strings.Contains(err.Error(), "test-rdp") {
		t.Errorf("unknown name: %v", err)
	}
	if _, err := LoadAccountant([]byte(`{"accountant":"nope","state":{}}`), AccountantConfig{}); err == nil {
		t.Error("unknown accountant loaded")
	}
	for _, def := range []AccountantDef{{}, {New: func(AccountantConfig) (Accountant, error) { return nil, nil }}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("RegisterAccountant without New or Load did not panic")
				}
			}()
			RegisterAccountant("bad", def)
		}()
	}
	func() {
		defer func() {
			if p, _ := recover().(string); !strings.Contains(p, `Register called twice for accountant "rdp"`) {
				t.Errorf("duplicate: panic %q", p)
			}
		}()
		RegisterAccountant(KindRDP, AccountantDef{New: func(AccountantConfig) (Accountant, error) { return nil, nil }, Load: loadRDP})
	}()
	// Options another accountant would ignore are refused.
	if _, err := NewAccountant(KindPLD, AccountantConfig{Conversion: ConversionMironov}); err == nil {
		t.Error("pld with conversion mironov")
	}
	if _, err := NewAccountant(KindRDP, AccountantConfig{Interval: 1e-3}); err == nil {
		t.Error("rdp with an interval")
	}
}

// TestCalibrateSigmaGeneric: CalibrateSigma's bisection over the Accountant
// interface (an accountant without its own calibrator) agrees with the RDP
// accountant's direct calibration to the tolerance, with and without a
// prior and a floor.
func TestCalibrateSigmaGeneric(t *testing.T) {
	registerRelabeled(t)
	for _, c := range []struct {
		target float64
		prior  int
		floor  float64
	}{{2, 0, 0}, {3, 400, 0}, {3, 400, 5}, {3, 400, 0.5}} {
		mk := func(name string) Accountant {
			a, _ := NewAccountant(name, AccountantConfig{})
			if c.prior > 0 {
				a.Compose(SubsampledGaussian{Q: 0.005, Sigma: 1.2}, c.prior)
			}
			return a
		}
		req := CalibrationRequest{TargetEpsilon: c.target, Delta: 1e-5, Q: 0.01, Steps: 300, Floor: c.floor}
		req.Prior = mk(KindRDP)
		want, err := CalibrateSigma(req)
		if err != nil {
			t.Fatal(err)
		}
		req.Prior = mk("test-rdp")
		got, err := CalibrateSigma(req)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-want) > CalibrationTolerance || c.floor == 5 && got != 5 {
			t.Errorf("%+v: generic σ = %v, rdp %v", c, got, want)
		}
		if req.Prior.Steps() != c.prior {
			t.Errorf("%+v: the prior was modified", c)
		}
	}
	if got, want := DefaultAccountant(SubsampledGaussian{Q: 0.01, Sigma: 1}), KindPLD; got != want {
		t.Errorf("default for the subsampled Gaussian: %s", got)
	}
	if got := DefaultAccountant(PTRDiscrete{Sigma1: 1, Tau: 0.5, B: 1, Delta0: 1e-5, K: 8}); got != KindRDP {
		t.Errorf("default for ptr-discrete: %s", got)
	}
}
