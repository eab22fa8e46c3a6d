package privacy

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

// unregister removes a kind registered by a test.
func unregister(kind string) {
	decodersMu.Lock()
	defer decodersMu.Unlock()
	delete(decoders, kind)
}

// scaledGaussian is a mechanism defined outside the built-ins: Gaussian
// noise of standard deviation Std for a query of L2 sensitivity Sens, so
// ε(α) = α·Sens²/(2·Std²) (Mironov 2017, Proposition 7).
type scaledGaussian struct{ Sens, Std float64 }

func (m scaledGaussian) Validate() error {
	if !(m.Sens > 0) || !(m.Std > 0) || math.IsInf(m.Sens+m.Std, 0) {
		return fmt.Errorf("scaled gaussian: need finite sens, std > 0, got %v, %v", m.Sens, m.Std)
	}
	return nil
}

func (m scaledGaussian) RDP(alpha float64) (RDPValue, error) {
	if err := checkOrder(alpha); err != nil {
		return RDPValue{}, err
	}
	return RDPValue{Epsilon: alpha * m.Sens * m.Sens / (2 * m.Std * m.Std), Bound: "test-scaled-gaussian", Valid: true}, nil
}

func (m scaledGaussian) Spec() Spec {
	return Spec{Kind: "test-scaled-gaussian", Params: map[string]float64{"sens": m.Sens, "std": m.Std}}
}

func decodeScaledGaussian(s Spec) (Mechanism, error) {
	p, err := specParams(s, "sens", "std")
	if err != nil {
		return nil, err
	}
	return scaledGaussian{Sens: p[0], Std: p[1]}, nil
}

// TestRegisteredMechanismResumes: an accountant whose history holds a
// mechanism kind registered from outside reloads from JSON only once the
// kind is registered, and then continues exactly like the original.
func TestRegisteredMechanismResumes(t *testing.T) {
	const kind = "test-scaled-gaussian"
	user := PoissonSubsampled{Base: scaledGaussian{Sens: 0.5, Std: 1.2}, Q: 0.02}
	acc, _ := NewRDPAccountant(nil)
	if err := acc.Compose(SubsampledGaussian{Q: 0.02, Sigma: 1}, 10); err != nil {
		t.Fatal(err)
	}
	if err := acc.Compose(user, 30); err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(acc)
	if err != nil {
		t.Fatal(err)
	}

	err = json.Unmarshal(data, new(RDPAccountant))
	if err == nil || !strings.Contains(err.Error(), `unknown kind "`+kind+`"`) || !strings.Contains(err.Error(), "registered: "+strings.Join(Kinds(), ", ")) {
		t.Fatalf("reload before Register: err = %v, want unknown kind listing the registered ones", err)
	}

	Register(kind, decodeScaledGaussian)
	defer unregister(kind)
	if !slices.Contains(Kinds(), kind) || !slices.IsSorted(Kinds()) {
		t.Fatalf("Kinds() = %v", Kinds())
	}
	back := new(RDPAccountant)
	if err := json.Unmarshal(data, back); err != nil {
		t.Fatalf("reload after Register: %v", err)
	}
	for _, a := range []*RDPAccountant{acc, back} {
		if err := a.Compose(user, 5); err != nil {
			t.Fatal(err)
		}
	}
	e1, err1 := acc.Epsilon(1e-5, ConversionBBG)
	e2, err2 := back.Epsilon(1e-5, ConversionBBG)
	if err1 != nil || err2 != nil || e1.Epsilon != e2.Epsilon || e1.Steps != 45 || e2.Steps != 45 {
		t.Fatalf("resumed ε = %+v (%v), original %+v (%v)", e2, err2, e1, err1)
	}
	// The user's base mechanism at q = 1 is its own closed form.
	full := PoissonSubsampled{Base: scaledGaussian{Sens: 0.5, Std: 1.2}, Q: 1}
	v, err := full.RDP(8)
	if want := 8 * 0.25 / (2 * 1.44); err != nil || math.Abs(v.Epsilon-want) > 1e-15*want {
		t.Fatalf("RDP(8) = %v (%v), want %v", v.Epsilon, err, want)
	}
}

func TestFromSpecChecksDecoder(t *testing.T) {
	const kind = "test-wrong-kind"
	Register(kind, func(Spec) (Mechanism, error) { return Gaussian{Sigma: 1}, nil })
	defer unregister(kind)
	if _, err := FromSpec(Spec{Kind: kind}); err == nil || !strings.Contains(err.Error(), `kind "gaussian"`) {
		t.Fatalf("decoder returning another kind: err = %v", err)
	}
	const nilKind = "test-nil"
	Register(nilKind, func(Spec) (Mechanism, error) { return nil, nil })
	defer unregister(nilKind)
	if _, err := FromSpec(Spec{Kind: nilKind}); err == nil {
		t.Fatal("decoder returning nil accepted")
	}
	const badKind = "test-scaled-gaussian"
	Register(badKind, decodeScaledGaussian)
	defer unregister(badKind)
	if _, err := FromSpec(scaledGaussian{Sens: -1, Std: 1}.Spec()); err == nil {
		t.Fatal("FromSpec did not validate the decoded mechanism")
	}
}

func TestRegisterMechanismPanics(t *testing.T) {
	for _, tc := range []struct {
		kind string
		dec  SpecDecoder
		want string
	}{
		{"", decodeScaledGaussian, "empty"},
		{"test-nil-decoder", nil, "nil decoder"},
		{"gaussian", decodeScaledGaussian, "twice"},
	} {
		func() {
			defer func() {
				if s, _ := recover().(string); !strings.Contains(s, tc.want) {
					t.Errorf("Register(%q): panic %q, want one mentioning %q", tc.kind, s, tc.want)
				}
			}()
			Register(tc.kind, tc.dec)
		}()
	}
	want := []string{"gaussian", "laplace", "poisson-subsampled", "ptr", "rgm", "subsampled-gaussian"}
	for _, k := range want {
		if !slices.Contains(Kinds(), k) {
			t.Errorf("Kinds() = %v lacks the built-in %q", Kinds(), k)
		}
	}
	if slices.Contains(Kinds(), "test-nil-decoder") || slices.Contains(Kinds(), "") {
		t.Errorf("a rejected registration was kept: %v", Kinds())
	}
}
