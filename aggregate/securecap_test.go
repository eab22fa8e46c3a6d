package aggregate

import (
	"strings"
	"testing"
)

// securedHalf is a registered rule that releases through the secure sum
// when asked (as a third-party rule may) and says so (SecureReleaser).
type securedHalf struct {
	halfSum
	inner Aggregator
}

func (s *securedHalf) SecureRelease() bool { return IsSecure(s.inner) }

// New asks the rule whether it honoured Config.Secure: built-ins with a
// secure release and a third-party rule implementing SecureReleaser pass;
// a rule without one (built-in or registered) is refused with a message
// naming float noise as the only way to run it.
func TestNewAsksRuleForSecureRelease(t *testing.T) {
	const plain, secured = "test-plain-float", "test-secured"
	Register(plain, func(cfg Config) (Aggregator, error) { return &halfSum{cfg}, nil })
	defer unregister(plain)
	Register(secured, func(cfg Config) (Aggregator, error) {
		inner, err := New("sum", Config{Sigma: cfg.Sigma, ClipNorm: cfg.ClipNorm, Secure: cfg.Secure})
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
		for _, ask := range []bool{false, true} {
			c := cfg
			c.Secure = ask
			a, err := New(tc.rule, c)
			switch {
			case ask && !tc.secure:
				if err == nil || !strings.Contains(err.Error(), "no secure-noise mode") || !strings.Contains(err.Error(), "float noise") {
					t.Errorf("%s secure: err %v, want a refusal naming float noise", tc.rule, err)
				}
			case err != nil:
				t.Errorf("%s secure=%v: %v", tc.rule, ask, err)
			case IsSecure(a) != ask:
				t.Errorf("%s secure=%v: IsSecure = %v", tc.rule, ask, IsSecure(a))
			}
		}
	}
}
