package audit

import (
	"math"
	"math/rand/v2"
	"testing"
)

// pmfs returns P[Bin(n, p) = j] for j = 0..n by the ratio recurrence, an
// evaluation independent of the incomplete beta function.
func pmfs(n int, p float64) []float64 {
	out := make([]float64, n+1)
	l := float64(n) * math.Log1p(-p)
	out[0] = math.Exp(l)
	for j := 1; j <= n; j++ {
		l += math.Log(float64(n-j+1)/float64(j)) + math.Log(p/(1-p))
		out[j] = math.Exp(l)
	}
	return out
}

func cdf(n, k int, p float64) float64 {
	s := 0.0
	for _, v := range pmfs(n, p)[:k+1] {
		s += v
	}
	return s
}

func TestClopperPearsonKnownValues(t *testing.T) {
	// Two-sided 95% intervals as printed by R's binom.test (exact method).
	for _, c := range []struct {
		k, n   int
		lo, hi float64
	}{
		{5, 10, 0.1870860, 0.8129140},
		{1, 10, 0.002528579, 0.445016117},
		{0, 10, 0, 0.3084971},
		{10, 10, 0.6915029, 1},
		{3, 20, 0.03207094, 0.37892683},
	} {
		lo, hi, err := ClopperPearson(c.k, c.n, 0.05)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(lo-c.lo) > 2e-7 || math.Abs(hi-c.hi) > 2e-7 {
			t.Errorf("CP(%d/%d) = [%.9f, %.9f], want [%.9f, %.9f]", c.k, c.n, lo, hi, c.lo, c.hi)
		}
	}
}

func TestClopperPearsonDefiningIdentity(t *testing.T) {
	// At the bounds the exact binomial tails equal α (summed from the pmf).
	for _, c := range []struct {
		k, n  int
		alpha float64
	}{{0, 500000, 0.025}, {50, 500000, 0.025}, {7, 1000, 0.01}, {400, 1000, 0.05}, {999, 1000, 0.05}} {
		hi, err := UpperCP(c.k, c.n, c.alpha)
		if err != nil {
			t.Fatal(err)
		}
		if got := cdf(c.n, c.k, hi); math.Abs(got-c.alpha) > 1e-6*c.alpha+1e-12 {
			t.Errorf("UpperCP(%d/%d): P[Bin ≤ k] = %.10g, want %g", c.k, c.n, got, c.alpha)
		}
		if c.k == 0 {
			continue
		}
		lo, err := LowerCP(c.k, c.n, c.alpha)
		if err != nil {
			t.Fatal(err)
		}
		if got := 1 - cdf(c.n, c.k-1, lo); math.Abs(got-c.alpha) > 1e-6*c.alpha+1e-12 {
			t.Errorf("LowerCP(%d/%d): P[Bin ≥ k] = %.10g, want %g", c.k, c.n, got, c.alpha)
		}
	}
}

func TestBadInput(t *testing.T) {
	if _, err := UpperCP(3, 2, 0.05); err == nil {
		t.Error("k > n accepted")
	}
	if _, err := LowerCP(1, 0, 0.05); err == nil {
		t.Error("n = 0 accepted")
	}
	if _, err := UpperCP(1, 2, 1); err == nil {
		t.Error("α = 1 accepted")
	}
	if _, err := EpsilonFromRates(-0.1, 0.5, 0); err == nil {
		t.Error("negative rate accepted")
	}
	if _, err := EpsilonFromRates(0.1, 0.5, 1); err == nil {
		t.Error("δ = 1 accepted")
	}
	if _, err := OneRunPValue(10, 5, 6, 1, 0); err == nil {
		t.Error("v > r accepted")
	}
	if _, err := OneRun([]float64{1, 2}, []bool{true}, []int{1}, 0, 0.05); err == nil {
		t.Error("mismatched inclusion bits accepted")
	}
	if _, err := OneRun([]float64{1, 2}, []bool{true, false}, []int{3}, 0, 0.05); err == nil {
		t.Error("more guesses than canaries accepted")
	}
}

func TestEpsilonFromRatesHand(t *testing.T) {
	for _, c := range []struct{ fpr, fnr, delta, want float64 }{
		{0.01, 0.5, 0, math.Log(50)},
		{0.5, 0.01, 0, math.Log(50)},
		{0.01, 0.5, 0.1, math.Log(40)},
		{0.5, 0.5, 0, 0},
		{0.7, 0.6, 0, 0},
		{0, 0.5, 0, math.Inf(1)},
	} {
		got, err := EpsilonFromRates(c.fpr, c.fnr, c.delta)
		if err != nil {
			t.Fatal(err)
		}
		if !(math.Abs(got-c.want) < 1e-12 || got == c.want) {
			t.Errorf("EpsilonFromRates(%v, %v, %v) = %v, want %v", c.fpr, c.fnr, c.delta, got, c.want)
		}
	}
}

// phi is the standard normal CDF.
func phi(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }

// gaussianDelta is the exact δ(ε) of the Gaussian mechanism with
// multiplier σ (Balle & Wang, ICML 2018, Theorem 8).
func gaussianDelta(eps, sigma float64) float64 {
	return phi(-eps*sigma+1/(2*sigma)) - math.Exp(eps)*phi(-eps*sigma-1/(2*sigma))
}

func gaussianEpsilon(delta, sigma float64) float64 {
	lo, hi := 0.0, 100.0
	for hi-lo > 1e-12 {
		mid := (lo + hi) / 2
		if gaussianDelta(mid, sigma) > delta {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// Threshold tests on the Gaussian mechanism are optimal (Neyman–Pearson),
// so the supremum of EpsilonFromRates over thresholds is the exact ε(δ); no
// threshold may exceed it.
func TestEpsilonFromRatesGaussianTradeoff(t *testing.T) {
	for _, c := range []struct{ sigma, delta float64 }{{1.1, 1e-3}, {0.55, 1e-3}, {2, 1e-5}} {
		exact := gaussianEpsilon(c.delta, c.sigma)
		best := 0.0
		for th := -5.0; th <= 15; th += 1e-4 {
			// Releases N(0, σ²) vs N(1, σ²); guess "1" above th·σ.
			fpr := phi(-th)
			fnr := phi(th - 1/c.sigma)
			e, err := EpsilonFromRates(fpr, fnr, c.delta)
			if err != nil {
				t.Fatal(err)
			}
			if e > exact+1e-9 {
				t.Fatalf("σ=%v: threshold %v gives ε %v above the exact %v", c.sigma, th, e, exact)
			}
			best = math.Max(best, e)
		}
		if math.Abs(best-exact) > 1e-3 {
			t.Errorf("σ=%v δ=%v: best threshold ε %v, exact %v", c.sigma, c.delta, best, exact)
		}
		if c.sigma == 1.1 && math.Abs(exact-2.79) > 0.01 {
			t.Errorf("exact ε of σ=1.1 at δ=1e-3 is %v, the issue quotes ≈ 2.79", exact)
		}
	}
}

func TestEmpiricalEpsilon(t *testing.T) {
	c := Counts{KA: 5000, NA: 50000, KB: 100, NB: 50000}
	got, err := EmpiricalEpsilon(c, 1e-3, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	pA, _ := LowerCP(5000, 50000, 0.025)
	pB, _ := UpperCP(100, 50000, 0.025)
	want := math.Log((pA - 1e-3) / pB)
	if math.Abs(got-want) > 1e-12 {
		t.Errorf("EmpiricalEpsilon = %v, want %v", got, want)
	}
	// The point estimate log((0.1−0.001)/0.002) exceeds the confident bound.
	if !(got < math.Log(0.099/0.002)) || got < 3.5 {
		t.Errorf("EmpiricalEpsilon = %v not just below the point estimate %v", got, math.Log(0.099/0.002))
	}
}

func TestOneRunPValueDeltaZeroIsBinomialTail(t *testing.T) {
	for _, c := range []struct {
		r, v int
		eps  float64
	}{{100, 70, 1}, {1000, 600, 0.5}, {50, 50, 2}} {
		p, err := OneRunPValue(2*c.r, c.r, c.v, c.eps, 0)
		if err != nil {
			t.Fatal(err)
		}
		q := math.Exp(c.eps) / (1 + math.Exp(c.eps))
		want := 1.0
		if c.v > 0 {
			want = 1 - cdf(c.r, c.v-1, q)
		}
		if math.Abs(p-want) > 1e-9 {
			t.Errorf("p-value(r=%d, v=%d, ε=%v) = %v, want %v", c.r, c.v, c.eps, p, want)
		}
	}
}

func TestOneRunPValueWithDelta(t *testing.T) {
	// Independent evaluation of the δ term from the recurrence pmf.
	m, r, v, eps, delta := 1000, 200, 150, 1.2, 1e-4
	q := math.Exp(eps) / (1 + math.Exp(eps))
	pm := pmfs(r, q)
	tail := 0.0
	for _, x := range pm[v:] {
		tail += x
	}
	worst := 0.0
	for i := 1; i <= v; i++ {
		s := 0.0
		for j := v - i; j < v; j++ {
			s += pm[j]
		}
		worst = math.Max(worst, s/float64(i))
	}
	want := tail + 2*float64(m)*delta*worst
	got, err := OneRunPValue(m, r, v, eps, delta)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got-want) > 1e-9*want {
		t.Errorf("p-value = %v, want %v", got, want)
	}
}

func TestOneRunEpsilonClosedForm(t *testing.T) {
	// All r guesses correct, δ = 0: q^r = β, ε = log(q/(1−q)).
	for _, r := range []int{10, 100, 1000} {
		beta := 0.05
		q := math.Pow(beta, 1/float64(r))
		want := math.Log(q / (1 - q))
		got, err := OneRunEpsilon(r, r, r, 0, beta)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-want) > 1e-5 {
			t.Errorf("r=%d: ε = %v, want %v", r, got, want)
		}
		p, _ := OneRunPValue(r, r, r, got, 0)
		if p > beta {
			t.Errorf("r=%d: returned ε has p-value %v > β", r, p)
		}
	}
	// δ > 0 only weakens the bound; chance-level guessing certifies nothing.
	e0, _ := OneRunEpsilon(1000, 100, 90, 0, 0.05)
	e1, _ := OneRunEpsilon(1000, 100, 90, 1e-5, 0.05)
	if !(e1 < e0 && e1 > 0) {
		t.Errorf("δ = 1e-5 gives %v, δ = 0 gives %v", e1, e0)
	}
	if e, _ := OneRunEpsilon(1000, 100, 50, 0, 0.05); e != 0 {
		t.Errorf("chance-level guesses certify ε = %v", e)
	}
}

// Randomized response with ε₀ is exactly the worst case of the theorem: the
// audit of its m outputs must stay below ε₀ (in all but ~β of the trials)
// and come reasonably close to it.
func TestOneRunRandomizedResponse(t *testing.T) {
	const eps0, m, trials, beta = 1.0, 2000, 40, 0.05
	rng := rand.New(rand.NewPCG(1, 2))
	q := math.Exp(eps0) / (1 + math.Exp(eps0))
	above, sum := 0, 0.0
	for trial := 0; trial < trials; trial++ {
		scores := make([]float64, m)
		in := make([]bool, m)
		for i := range scores {
			in[i] = rng.IntN(2) == 1
			truthful := rng.Float64() < q
			if in[i] == truthful {
				scores[i] = 1 + rng.Float64()*1e-3
			} else {
				scores[i] = rng.Float64() * 1e-3
			}
		}
		res, err := OneRun(scores, in, []int{m}, 0, beta)
		if err != nil {
			t.Fatal(err)
		}
		if res.Epsilon > eps0 {
			above++
		}
		sum += res.Epsilon
	}
	if above > 6 { // P[Bin(40, 0.05) > 6] < 0.01
		t.Errorf("audit exceeded the true ε₀ in %d of %d trials", above, trials)
	}
	if mean := sum / trials; mean < 0.8 {
		t.Errorf("mean audited ε %v far below the true %v", mean, eps0)
	}
}

func TestOneRunGuessing(t *testing.T) {
	// Scores separate included from excluded perfectly: every guess is
	// right for every k, and the largest k gives the best bound.
	scores := make([]float64, 200)
	in := make([]bool, 200)
	for i := range scores {
		in[i] = i%2 == 0
		scores[i] = float64(i % 2)
		if in[i] {
			scores[i] = 10 + float64(i)
		}
	}
	res, err := OneRun(scores, in, []int{10, 50, 200}, 0, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := OneRunEpsilon(200, 200, 200, 0, 0.05/3)
	if res.Guesses != 200 || res.Correct != 200 || math.Abs(res.Epsilon-want) > 1e-9 || res.Included != 100 {
		t.Errorf("got %+v, want 200/200 correct and ε %v", res, want)
	}
}
