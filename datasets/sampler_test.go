package datasets

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

// binomialBound returns a half-width of 6 standard deviations for a
// Binomial(trials, p) count, so a correct sampler fails a single check with
// probability below 1e-8.
func binomialBound(trials int, p float64) float64 {
	return 6*math.Sqrt(float64(trials)*p*(1-p)) + 1
}

func checkSortedInRange(t *testing.T, b []int, n int) {
	t.Helper()
	for k, i := range b {
		if i < 0 || i >= n || (k > 0 && b[k-1] >= i) {
			t.Fatalf("batch %v not strictly increasing in [0, %d)", b, n)
		}
	}
}

func TestPoissonInclusionFrequencies(t *testing.T) {
	for _, tc := range []struct {
		n     int
		q     float64
		steps int
	}{
		{1000, 0.05, 4000},
		{200, 0.5, 2000},
		{5000, 0.004, 5000},
		{50, 1, 10},
	} {
		t.Run(fmt.Sprintf("n=%d,q=%g", tc.n, tc.q), func(t *testing.T) {
			s, err := NewPoissonSampler(tc.n, tc.q, 42)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := s.ExpectedBatchSize(), float64(tc.n)*tc.q; got != want {
				t.Errorf("ExpectedBatchSize = %v, want %v", got, want)
			}
			counts := make([]int, tc.n)
			var sum, sumSq float64
			for step := 0; step < tc.steps; step++ {
				b := s.Batch(step)
				checkSortedInRange(t, b, tc.n)
				for _, i := range b {
					counts[i]++
				}
				sum += float64(len(b))
				sumSq += float64(len(b)) * float64(len(b))
			}
			bound := binomialBound(tc.steps, tc.q)
			for i, c := range counts {
				if math.Abs(float64(c)-float64(tc.steps)*tc.q) > bound {
					t.Fatalf("example %d sampled %d times in %d steps, want %v ± %.1f", i, c, tc.steps, float64(tc.steps)*tc.q, bound)
				}
			}
			// Total inclusions are Binomial(n·steps, q).
			total := tc.n * tc.steps
			if math.Abs(sum-float64(total)*tc.q) > binomialBound(total, tc.q) {
				t.Errorf("total %v inclusions, want %v", sum, float64(total)*tc.q)
			}
			// Batch-size variance n·q·(1-q): independence across examples.
			mean := sum / float64(tc.steps)
			variance := sumSq/float64(tc.steps) - mean*mean
			want := float64(tc.n) * tc.q * (1 - tc.q)
			if tc.q < 1 && math.Abs(variance-want) > 0.15*want {
				t.Errorf("batch size variance %.2f, want %.2f (binomial)", variance, want)
			}
			if tc.q == 1 && variance != 0 {
				t.Errorf("q = 1: batch size variance %v", variance)
			}
		})
	}
}

// TestPoissonPairs checks pairwise independence: neighbouring examples (the
// geometric skips link them) are both sampled with probability q².
func TestPoissonPairs(t *testing.T) {
	const n, q, steps = 100, 0.3, 20000
	s, _ := NewPoissonSampler(n, q, 7)
	both := 0
	for step := 0; step < steps; step++ {
		b := s.Batch(step)
		if slices.Contains(b, 10) && slices.Contains(b, 11) {
			both++
		}
	}
	if math.Abs(float64(both)-steps*q*q) > binomialBound(steps, q*q) {
		t.Errorf("pair sampled together %d times, want %v", both, steps*q*q)
	}
}

func TestPoissonEmptyBatches(t *testing.T) {
	// n·q = 0.01: almost every batch is empty, and empty batches are allowed.
	s, _ := NewPoissonSampler(10, 0.001, 1)
	empty := 0
	for step := 0; step < 1000; step++ {
		b := s.Batch(step)
		if b == nil {
			t.Fatal("Batch returned nil, want an empty slice")
		}
		if len(b) == 0 {
			empty++
		}
	}
	if empty < 950 {
		t.Errorf("%d empty batches of 1000, want about 990", empty)
	}
}

func TestSamplerDeterminism(t *testing.T) {
	rates := make([]float64, 500)
	for i := range rates {
		rates[i] = float64(i%5) / 10
	}
	mk := map[string]func(seed uint64) Sampler{
		"poisson": func(seed uint64) Sampler { s, _ := NewPoissonSampler(500, 0.1, seed); return s },
		"personalized": func(seed uint64) Sampler {
			s, _ := NewPersonalizedPoissonSampler(rates, seed)
			return s
		},
		"shuffle": func(seed uint64) Sampler { s, _ := NewShuffleSampler(500, 64, seed); return s },
	}
	for name, f := range mk {
		t.Run(name, func(t *testing.T) {
			a, b, c := f(3), f(3), f(4)
			// a in order, b in a different order (as a resumed run would): same batches.
			want := make([][]int, 40)
			for step := range want {
				want[step] = a.Batch(step)
			}
			for step := len(want) - 1; step >= 0; step-- {
				if got := b.Batch(step); !slices.Equal(got, want[step]) {
					t.Fatalf("step %d: batch differs between runs with the same seed", step)
				}
			}
			same := 0
			for step := range want {
				if slices.Equal(c.Batch(step), want[step]) {
					same++
				}
			}
			if same > 0 {
				t.Errorf("seeds 3 and 4 gave %d identical batches of %d", same, len(want))
			}
			if got := a.Batch(-1); len(got) != 0 {
				t.Errorf("negative step gave %v", got)
			}
		})
	}
}

func TestPoissonSamplerErrors(t *testing.T) {
	for _, tc := range []struct {
		n int
		q float64
	}{{0, 0.1}, {10, 0}, {10, -0.1}, {10, 1.5}, {10, math.NaN()}} {
		if _, err := NewPoissonSampler(tc.n, tc.q, 0); err == nil {
			t.Errorf("NewPoissonSampler(%d, %v) accepted", tc.n, tc.q)
		}
	}
}

func TestPersonalizedInclusionFrequencies(t *testing.T) {
	const n, steps = 600, 4000
	rates := make([]float64, n)
	for i := range rates {
		switch i % 6 {
		case 0:
			rates[i] = 0
		case 1:
			rates[i] = 1
		case 2:
			rates[i] = 0.01
		case 3:
			rates[i] = 0.2
		default:
			rates[i] = float64(i) / (2 * n) // distinct rates
		}
	}
	s, err := NewPersonalizedPoissonSampler(rates, 9)
	if err != nil {
		t.Fatal(err)
	}
	var sumRates float64
	for _, r := range rates {
		sumRates += r
	}
	if math.Abs(s.ExpectedBatchSize()-sumRates) > 1e-9 {
		t.Errorf("ExpectedBatchSize %v, want %v", s.ExpectedBatchSize(), sumRates)
	}
	counts := make([]int, n)
	for step := 0; step < steps; step++ {
		b := s.Batch(step)
		checkSortedInRange(t, b, n)
		for _, i := range b {
			counts[i]++
		}
	}
	for i, c := range counts {
		p := rates[i]
		if math.Abs(float64(c)-steps*p) > binomialBound(steps, p) {
			t.Fatalf("example %d (rate %v) sampled %d times in %d steps, want %v", i, p, c, steps, steps*p)
		}
		if p == 0 && c != 0 || p == 1 && c != steps {
			t.Fatalf("example %d (rate %v) sampled %d times in %d steps", i, p, c, steps)
		}
	}

	// Changing the rates per round takes effect at the next Batch.
	zero := make([]float64, n)
	zero[5] = 1
	if err := s.SetRates(zero); err != nil {
		t.Fatal(err)
	}
	if b := s.Batch(0); !slices.Equal(b, []int{5}) {
		t.Errorf("after SetRates: batch %v, want [5]", b)
	}
	if err := s.SetRates(make([]float64, n)); err != nil {
		t.Fatal(err)
	}
	if b := s.Batch(3); len(b) != 0 || s.ExpectedBatchSize() != 0 {
		t.Errorf("all-zero rates: batch %v, expected size %v", b, s.ExpectedBatchSize())
	}
}

func TestPersonalizedErrors(t *testing.T) {
	for _, rates := range [][]float64{nil, {0.1, -0.1}, {1.01}, {math.NaN()}} {
		if _, err := NewPersonalizedPoissonSampler(rates, 0); err == nil {
			t.Errorf("rates %v accepted", rates)
		}
	}
	s, _ := NewPersonalizedPoissonSampler([]float64{0.5, 0.5}, 0)
	if err := s.SetRates([]float64{0.5}); err == nil {
		t.Error("SetRates accepted a different number of examples")
	}
	if r := s.Rates(); !slices.Equal(r, []float64{0.5, 0.5}) {
		t.Errorf("failed SetRates changed rates to %v", r)
	}
}

func TestShuffleSampler(t *testing.T) {
	for _, tc := range []struct {
		n, b     int
		dropLast bool
		steps    int   // steps per epoch
		sizes    []int // batch sizes in one epoch
		mean     float64
	}{
		{10, 5, false, 2, []int{5, 5}, 5},
		{10, 4, false, 3, []int{4, 4, 2}, 10.0 / 3},
		{10, 4, true, 2, []int{4, 4}, 4},
		{7, 7, false, 1, []int{7}, 7},
		{7, 1, false, 7, []int{1, 1, 1, 1, 1, 1, 1}, 1},
	} {
		t.Run(fmt.Sprintf("n=%d,b=%d,drop=%v", tc.n, tc.b, tc.dropLast), func(t *testing.T) {
			s, err := NewShuffleSampler(tc.n, tc.b, 11)
			if err != nil {
				t.Fatal(err)
			}
			s.DropLast = tc.dropLast
			if s.StepsPerEpoch() != tc.steps || math.Abs(s.ExpectedBatchSize()-tc.mean) > 1e-12 {
				t.Fatalf("StepsPerEpoch %d, ExpectedBatchSize %v; want %d, %v", s.StepsPerEpoch(), s.ExpectedBatchSize(), tc.steps, tc.mean)
			}
			var perms [][]int
			for e := 0; e < 3; e++ {
				var seen []int
				for k := 0; k < tc.steps; k++ {
					b := s.Batch(e*tc.steps + k)
					if len(b) != tc.sizes[k] {
						t.Fatalf("epoch %d batch %d has %d examples, want %d", e, k, len(b), tc.sizes[k])
					}
					seen = append(seen, b...)
				}
				perms = append(perms, slices.Clone(seen))
				slices.Sort(seen)
				for i := 1; i < len(seen); i++ {
					if seen[i] == seen[i-1] {
						t.Fatalf("epoch %d repeats example %d", e, seen[i])
					}
				}
				want := tc.n - tc.n%tc.b
				if !tc.dropLast {
					want = tc.n
				}
				if len(seen) != want {
					t.Fatalf("epoch %d visited %d examples, want %d", e, len(seen), want)
				}
			}
			if tc.n >= 10 && slices.Equal(perms[0], perms[1]) && slices.Equal(perms[1], perms[2]) {
				t.Error("three epochs used the same order")
			}
		})
	}
	for _, tc := range []struct{ n, b int }{{0, 1}, {5, 0}, {5, 6}} {
		if _, err := NewShuffleSampler(tc.n, tc.b, 0); err == nil {
			t.Errorf("NewShuffleSampler(%d, %d) accepted", tc.n, tc.b)
		}
	}
}

func BenchmarkPoissonMNIST(b *testing.B) {
	s, _ := NewPoissonSampler(60000, 0.004, 1)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.Batch(i)
	}
}

func BenchmarkPersonalizedMNIST(b *testing.B) {
	rates := make([]float64, 60000)
	for i := range rates {
		rates[i] = 0.004 * float64(1+i%3) / 3
	}
	s, _ := NewPersonalizedPoissonSampler(rates, 1)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.Batch(i)
	}
}
