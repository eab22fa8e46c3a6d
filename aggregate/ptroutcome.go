package aggregate

import "fmt"

// PTROutcome is the outcome of a Propose-Test-Release test (PTRTSum): the
// test failed and SUM was released, it passed and TSUM_F was released, or
// no test ran (the zero value, for rules without a test).
//
// As JSON (and text) it is the published bit of the step logs: "+" for a
// failed test, "-" for a passed one; the zero value marshals to "" and is
// omitted by omitempty.
type PTROutcome uint8

const (
	// NoPTRTest: the rule ran no PTR test.
	NoPTRTest PTROutcome = iota
	// PTRFailed: Δ̂ ≤ B, SUM released with noise σR ("+").
	PTRFailed
	// PTRPassed: Δ̂ > B, TSUM_F released with noise στ ("-").
	PTRPassed
)

// String returns "+", "-" or "".
func (o PTROutcome) String() string {
	switch o {
	case PTRFailed:
		return "+"
	case PTRPassed:
		return "-"
	}
	return ""
}

// MarshalText returns "+", "-" or "" (an unknown value is an error).
func (o PTROutcome) MarshalText() ([]byte, error) {
	if o > PTRPassed {
		return nil, fmt.Errorf("aggregate: invalid PTR outcome %d", uint8(o))
	}
	return []byte(o.String()), nil
}

// UnmarshalText reads "+", "-" or "".
func (o *PTROutcome) UnmarshalText(b []byte) error {
	switch string(b) {
	case "+":
		*o = PTRFailed
	case "-":
		*o = PTRPassed
	case "":
		*o = NoPTRTest
	default:
		return fmt.Errorf("aggregate: PTR outcome must be \"+\" or \"-\", got %q", b)
	}
	return nil
}
