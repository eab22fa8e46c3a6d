package aggregate

import (
	"strings"
	"testing"
)

// securedHalf is a registered rule that releases through the secure sum
// unless told FloatNoise (as a third-party rule may) and says so
// (SecureReleaser).
type securedHalf struct {
	halfSum
	inner Aggregator
}

func (s *securedHalf) SecureRelease() bool { return IsSecure(s.inner) }

// New asks a noisy rule whether it used its secure release, the default:
// built-ins with a secure release and a third-party rule implementing
// SecureReleaser pass; a rule without one (built-in or registered) is
// refused unless Config.FloatNoise is set, with a message naming the rule
// and the opt-out.
func TestNewAsksRuleForSecureRelease(t *testing.T) {
	const plain, secured = "test-plain-float", "test-secured"
	Register(plain, func(cfg Config) (Aggregator, error) { return &halfSum{cfg}, nil })
	defer unregister(plain)
	Register(secured, func(cfg Config) (Aggregator, error) {
		inner, err := New("sum", Config{Sigma: cfg.Sigma, ClipNorm: cfg.ClipNorm, FloatNoise: cfg.FloatNoise})
		if err != nil {
			return nil, err
		}
		return &securedHalf{halfSum{cfg}, inner}, nil
	})
	defer unregister(secured)
	cfg := Config{Sigma: 1.1, ClipNorm: 1, Tau: 0.5, B: 1, Delta0: 1e-8, Radius: 1, ExpectedBatch: 8}
	for _, tc := range []struct {
		rule   string
		secure bool // has a secure release
	}{
		{"sum", true}, {"tsum", true}, {"ptr-tsum", true}, {secured, true},
		{"centered-clip", false}, {plain, false},
	} {
		for _, float := range []bool{false, true} {
			c := cfg
			c.FloatNoise = float
			a, err := New(tc.rule, c)
			switch {
			case !float && !tc.secure:
				if err == nil || !strings.Contains(err.Error(), "no secure-noise mode") || !strings.Contains(err.Error(), "Config.FloatNoise") || !strings.Contains(err.Error(), `"`+tc.rule+`"`) {
					t.Errorf("%s zero FloatNoise: err %v, want a refusal naming the rule and Config.FloatNoise", tc.rule, err)
				}
			case err != nil:
				t.Errorf("%s FloatNoise=%v: %v", tc.rule, float, err)
			case IsSecure(a) == float:
				t.Errorf("%s FloatNoise=%v: IsSecure = %v", tc.rule, float, IsSecure(a))
			}
		}
	}
}
