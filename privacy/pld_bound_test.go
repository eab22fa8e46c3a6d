package privacy

import "testing"

// EpsilonBound after every step of a run: never below the exact certified ε
// so far nor below the certified ε at the count it reports, equal to a
// fresh composition at that count on the grid it names (the accountant's
// own when that is free: the budget's end that MaxSteps confirmed), capped
// by the limit, and composed only O(16·log n) times.
func TestPLDEpsilonBound(t *testing.T) {
	const h, delta = 2e-4, 1e-5
	m := SubsampledGaussian{Q: 0.01, Sigma: 1}
	prior := SubsampledGaussian{Q: 0.02, Sigma: 2}
	a, _ := NewPLDAccountant(h)
	// A prior history of another mechanism (a resumed or heterogeneous run).
	a.Compose(prior, 10)
	allow, err := a.MaxSteps(m, 1, delta, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	limit := 10 + allow
	fresh := func(interval float64, count int) Guarantee {
		f, _ := NewPLDAccountant(interval)
		f.upperOnly = interval != h
		f.Compose(prior, 10)
		f.Compose(m, count-10)
		g, err := f.EpsilonFor(delta)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	misses, checked := 0, 0
	var last Guarantee
	for step := 1; step <= allow; step++ {
		if err := a.Compose(m, 1); err != nil {
			t.Fatal(err)
		}
		g, err := a.EpsilonBound(delta, limit)
		if err != nil {
			t.Fatal(err)
		}
		if g.Epsilon != last.Epsilon || g.Steps != last.Steps {
			misses++
			last = g
		} else {
			continue
		}
		total := a.Steps()
		if g.Steps < total || g.Steps > limit {
			t.Fatalf("step %d: bound at %d steps (history %d, limit %d)", step, g.Steps, total, limit)
		}
		if misses%18 != 1 && g.Steps != limit {
			continue
		}
		checked++
		exact, _ := a.EpsilonFor(delta)
		atCount := fresh(h, g.Steps)
		same := fresh(g.Interval, g.Steps)
		if g.Epsilon < exact.Epsilon || g.Epsilon < atCount.Epsilon || g.Epsilon != same.Epsilon {
			t.Fatalf("step %d: bound %v (at %d, interval %v); exact so far %v, certified at %d %v, fresh on its grid %v",
				step, g.Epsilon, g.Steps, g.Interval, exact.Epsilon, g.Steps, atCount.Epsilon, same.Epsilon)
		}
		if g.Steps == limit && (g.Interval != h || g.Epsilon > 1) {
			t.Fatalf("at the budget's end (%d steps): bound %v on interval %v, want the accountant's own ≤ 1", limit, g.Epsilon, g.Interval)
		}
	}
	if misses > 16+16*int(1+log2i(allow/16))+2 || checked < 3 {
		t.Errorf("%d compositions (%d checked) for %d steps", misses, checked, allow)
	}
	t.Logf("%d steps fit; %d compositions, %d checked", allow, misses, checked)
	if got := boundGridCount(1000); got != 1024 {
		t.Errorf("grid count of 1000 = %d, want 1024 (multiples of 512/16 = 32)", got)
	}
	if got := boundGridCount(13); got != 13 {
		t.Errorf("grid count of 13 = %d", got)
	}
	if _, err := a.EpsilonBound(0, 0); err == nil {
		t.Error("δ = 0 accepted")
	}
}

func log2i(n int) int {
	k := 0
	for n > 1 {
		n >>= 1
		k++
	}
	return k
}
