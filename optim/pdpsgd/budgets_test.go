package pdpsgd

import (
	"math"
	"strings"
	"testing"
)

func TestGroupCounts(t *testing.T) {
	const n = 60000
	for _, tc := range []struct {
		k      float64
		c1, c2 float64
	}{
		{0, 1, 0},
		{-0.2, 2.098, -1.715},
		{0.2, 1.554, -1.715},
		{0.5, 1, 0}, // any k: plain exponential, normalised
	} {
		s := GroupSpec{Groups: 20, Min: 0.5, Max: 1, K: tc.k}
		values, counts, err := s.GroupCounts(n)
		if err != nil {
			t.Fatalf("k = %v: %v", tc.k, err)
		}
		if len(values) != 20 || values[0] != 0.5 || math.Abs(values[19]-1) > 1e-15 {
			t.Fatalf("k = %v: values %v", tc.k, values)
		}
		var wsum float64
		w := make([]float64, 20)
		for g, v := range values {
			if want := 0.5 + float64(g)*0.5/19; math.Abs(v-want) > 1e-15 {
				t.Errorf("k = %v: group %d at %v, want %v", tc.k, g, v, want)
			}
			w[g] = tc.c1*math.Exp(tc.k*v) + tc.c2
			wsum += w[g]
		}
		total := 0
		for g, c := range counts {
			total += c
			exact := w[g] / wsum * n
			if math.Abs(float64(c)-exact) >= 1 {
				t.Errorf("k = %v: group %d has %d examples, want %.2f ± 1", tc.k, g, c, exact)
			}
			if g > 0 {
				switch {
				case tc.k == 0 && c != counts[0]:
					t.Errorf("k = 0: group %d has %d, group 0 %d: not uniform", g, c, counts[0])
				case tc.k < 0 && c > counts[g-1], tc.k > 0 && c < counts[g-1]:
					t.Errorf("k = %v: counts not monotone at group %d: %v", tc.k, g, counts)
				}
			}
		}
		if total != n {
			t.Errorf("k = %v: counts sum to %d, want %d", tc.k, total, n)
		}
	}
	// k = 0 with 60000 examples: exactly 3000 per group.
	_, counts, _ := GroupSpec{Groups: 20, Min: 0.5, Max: 1}.GroupCounts(n)
	for g, c := range counts {
		if c != 3000 {
			t.Errorf("k = 0: group %d has %d, want 3000", g, c)
		}
	}
	// The paper's k = −0.2 shares: group 0 ∝ 2.098·e^{−0.1} − 1.715 = 0.18334.
	_, counts, _ = GroupSpec{Groups: 20, Min: 0.5, Max: 1, K: -0.2}.GroupCounts(n)
	if counts[0] < 5*counts[19] {
		t.Errorf("k = −0.2: first group %d should dwarf the last %d", counts[0], counts[19])
	}
}

func TestGenerateBudgets(t *testing.T) {
	s := GroupSpec{Groups: 20, Min: 0.5, Max: 1, K: 0.2}
	a, err := s.Generate(1000, 1e-5, 7)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := s.Generate(1000, 1e-5, 7)
	c, _ := s.Generate(1000, 1e-5, 8)
	_, counts, _ := s.GroupCounts(1000)
	hist := map[float64]int{}
	same, differ := true, false
	for i := range a {
		hist[a[i].Epsilon]++
		same = same && a[i] == b[i]
		differ = differ || a[i] != c[i]
		if a[i].Delta != 1e-5 {
			t.Fatalf("δ = %v", a[i].Delta)
		}
	}
	if !same || !differ {
		t.Errorf("generation must depend on the seed only (same %v, differs with another seed %v)", same, differ)
	}
	values, _, _ := s.GroupCounts(1000)
	for g, v := range values {
		if hist[v] != counts[g] {
			t.Errorf("group ε = %v: %d examples, want %d", v, hist[v], counts[g])
		}
	}
}

func TestGroupSpecErrors(t *testing.T) {
	for _, s := range []GroupSpec{
		{Groups: 0, Min: 0.5, Max: 1},
		{Groups: 20, Min: 0, Max: 1},
		{Groups: 20, Min: 1, Max: 0.5},
		{Groups: 20, Min: 0.5, Max: 0.5},
		{Groups: 1, Min: 0.5, Max: 1},
		{Groups: 20, Min: 0.5, Max: math.Inf(1)},
		{Groups: 20, Min: 0.5, Max: 1, K: math.NaN()},
		{Groups: 20, Min: 0.5, Max: 3, K: -0.2}, // paper constants go negative
	} {
		if _, _, err := s.GroupCounts(100); err == nil {
			t.Errorf("%+v: no error", s)
		}
	}
}

func TestReadBudgets(t *testing.T) {
	good := "index,epsilon,delta\n2,1.0\n0,0.5,1e-6\n# comment\n1,0.75\n"
	b, err := ReadBudgets(strings.NewReader(good), 3, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	want := []Budget{{0.5, 1e-6}, {0.75, 1e-5}, {1, 1e-5}}
	for i := range want {
		if b[i] != want[i] {
			t.Errorf("example %d: %+v, want %+v", i, b[i], want[i])
		}
	}
	for name, in := range map[string]string{
		"missing":   "0,0.5\n1,0.5\n",
		"duplicate": "0,0.5\n1,0.5\n1,0.6\n2,1\n",
		"range":     "0,0.5\n1,0.5\n3,1\n",
		"zero ε":    "0,0\n1,0.5\n2,1\n",
		"bad ε":     "0,x\n1,0.5\n2,1\n",
		"bad δ":     "0,0.5,2\n1,0.5\n2,1\n",
		"fields":    "0,0.5,1e-5,9\n1,0.5\n2,1\n",
	} {
		if _, err := ReadBudgets(strings.NewReader(in), 3, 1e-5); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestRate(t *testing.T) {
	for _, tc := range []struct{ eps, tau, want float64 }{
		{0.5, 1, (math.Exp(0.5) - 1) / (math.Exp(1) - 1)},
		{0.75, 0.75, 1},
		{1, 0.6, 1},
		{0, 0.6, 0},
		{1e-12, 1, (1e-12 + 5e-25) / (math.E - 1)}, // e^ε − 1 = ε + ε²/2
	} {
		got := Rate(tc.eps, tc.tau)
		if math.Abs(got-tc.want) > 1e-15*math.Max(tc.want, 1e-300)+1e-28 {
			t.Errorf("π(%v, %v) = %v, want %v", tc.eps, tc.tau, got, tc.want)
		}
		// Theorem 4.2's identity: 1 − π + π·e^τ = e^ε below the threshold.
		if tc.eps < tc.tau {
			if lhs := 1 - got + got*math.Exp(tc.tau); math.Abs(lhs-math.Exp(tc.eps)) > 1e-14 {
				t.Errorf("1 − π + π e^τ = %v ≠ e^ε = %v", lhs, math.Exp(tc.eps))
			}
		}
	}
	for _, bad := range [][2]float64{{-0.1, 1}, {0.5, 0}, {math.NaN(), 1}, {0.5, math.Inf(1)}} {
		if !math.IsNaN(Rate(bad[0], bad[1])) {
			t.Errorf("π(%v, %v) should be NaN", bad[0], bad[1])
		}
	}
}
