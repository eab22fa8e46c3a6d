package aggregate

import (
	"encoding/json"
	"testing"
)

// The PTR outcome is published in metrics.jsonl as "+" / "-" (and omitted
// when no test ran): the typed value must keep that format exactly.
func TestPTROutcomeJSON(t *testing.T) {
	type rec struct {
		Step   int        `json:"step"`
		Branch PTROutcome `json:"branch,omitempty"`
	}
	for _, c := range []struct {
		o    PTROutcome
		want string
	}{
		{NoPTRTest, `{"step":1}`},
		{PTRFailed, `{"step":1,"branch":"+"}`},
		{PTRPassed, `{"step":1,"branch":"-"}`},
	} {
		b, err := json.Marshal(rec{Step: 1, Branch: c.o})
		if err != nil || string(b) != c.want {
			t.Fatalf("%d: %s, %v; want %s", c.o, b, err, c.want)
		}
		var back rec
		if err := json.Unmarshal(b, &back); err != nil || back.Branch != c.o {
			t.Fatalf("%s read back as %d, %v", b, back.Branch, err)
		}
	}
	var o PTROutcome
	if err := json.Unmarshal([]byte(`"x"`), &o); err == nil {
		t.Error(`"x" accepted as a PTR outcome`)
	}
	if _, err := json.Marshal(PTROutcome(3)); err == nil {
		t.Error("invalid outcome 3 marshalled")
	}
}
