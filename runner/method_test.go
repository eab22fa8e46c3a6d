package runner

import (
	"slices"
	"testing"
)

// TestMethodRegistryMatchesFormerTables: the registry answers what the
// string tables it replaced answered (runner's Methods, Private, pdpMethods
// and rule map; the CLI's methodFlags), so the CLI and the configuration
// checks behave as before.
func TestMethodRegistryMatchesFormerTables(t *testing.T) {
	if got, want := Methods(), []string{"nonprivate", "dpsgd", "tsgd-gaussian", "tsgd-ptr", "nonprivate-robust", "pdp-sgd", "pdp-sampling", "pdp-adapdp", "pdp-dpsgd"}; !slices.Equal(got, want) {
		t.Fatalf("Methods() = %v, want %v", got, want)
	}
	if got, want := pdpMethods(), []string{"pdp-sgd", "pdp-sampling", "pdp-adapdp", "pdp-dpsgd"}; !slices.Equal(got, want) {
		t.Errorf("pdpMethods() = %v, want %v", got, want)
	}
	rules := map[string]string{"dpsgd": "sum", "tsgd-gaussian": "tsum", "tsgd-ptr": "ptr-tsum", "nonprivate-robust": "krum"}
	for _, n := range Methods() {
		c := TrainConfig{Method: n, Rule: "krum"}
		if got, want := c.Private(), n == "dpsgd" || n == "tsgd-gaussian" || n == "tsgd-ptr"; got != want {
			t.Errorf("%s: Private() = %v, want %v", n, got, want)
		}
		name := ""
		if r := c.method().Rule; r != nil {
			name, _ = r(&c, c.aggregateConfig(10))
		}
		if name != rules[n] {
			t.Errorf("%s: rule %q, want %q", n, name, rules[n])
		}
		if got, want := c.method().Policy != nil, n == "tsgd-ptr"; got != want {
			t.Errorf("%s: has a step policy %v, want %v", n, got, want)
		}
	}
	// The CLI's former methodFlags table, verbatim.
	ptr := []string{"tsgd-ptr"}
	trim := []string{"tsgd-gaussian", "tsgd-ptr", "nonprivate-robust"}
	sgd := []string{"nonprivate", "dpsgd", "tsgd-gaussian", "tsgd-ptr", "nonprivate-robust"}
	private := []string{"dpsgd", "tsgd-gaussian", "tsgd-ptr"}
	pdp := []string{"pdp-sgd", "pdp-sampling", "pdp-adapdp", "pdp-dpsgd"}
	want := map[string][]string{
		"rule": {"nonprivate-robust"}, "cc-radius": {"nonprivate-robust"},
		"tau": ptr, "b": ptr, "delta0": ptr, "dynamic-f": ptr, "dynamic-f-rate": ptr,
		"dynamic-f-increase-on-pass": ptr, "lr-fail": ptr, "lr-pass": ptr, "bound": ptr,
		"trim-fraction":  trim,
		"sigma":          append(slices.Clone(private), "pdp-adapdp"),
		"target-epsilon": private, "allow-unproven": private,
		"epochs": sgd, "eval-every": sgd, "corruption": sgd, "corruption-ratio": sgd,
		"clip":  append(append([]string{"nonprivate-robust"}, private...), pdp...),
		"delta": append(slices.Clone(private), pdp...), "conversion": append(slices.Clone(private), pdp...),
		"noise-guard": {"pdp-sgd"}, "adapdp-rounds": {"pdp-adapdp"}, "sampling-draw": {"pdp-sampling"},
		"float-noise": append(slices.Clone(private), pdp...), "noise-key-file": append(slices.Clone(private), pdp...),
	}
	for _, f := range []string{"threshold-loss", "w1", "w2", "rounds", "round-epochs", "budgets", "budget-groups", "budget-min", "budget-max", "budget-k", "pdp-accounting"} {
		want[f] = pdp
	}
	// The optimizer flags (i26o's optimizerFlags table, verbatim): the SGD family.
	for _, f := range []string{"optimizer", "momentum", "beta1", "beta2", "adam-eps", "weight-decay",
		"lr-schedule", "warmup-steps", "lr-step-size", "lr-gamma", "lr-decay-steps", "accumulate"} {
		want[f] = sgd
	}
	got := MethodFlags()
	for f := range want {
		g, w := slices.Clone(got[f]), slices.Clone(want[f])
		slices.Sort(g)
		slices.Sort(w)
		if !slices.Equal(g, w) {
			t.Errorf("flag --%s: used by %v, want %v", f, g, w)
		}
	}
	for f := range got {
		if _, ok := want[f]; !ok {
			t.Errorf("flag --%s: used by %v, not in the former table", f, got[f])
		}
	}
}
