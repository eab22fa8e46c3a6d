package optim

import (
	"math"
	"strings"
	"testing"
)

// closedForm is the k-th update (1-based) of an optimizer from its
// non-recursive formula on the gradients g[0..k−1] (θ fixed), independent
// of optimizerState's recursions.
func closedForm(c OptimizerConfig, g [][]float64, theta []float64, k int, lr float64) []float64 {
	out := make([]float64, len(theta))
	b1, b2, eps := c.adamParams()
	for j := range theta {
		gi := func(i int) float64 {
			v := g[i][j]
			if c.name() != OptAdamW {
				v += c.WeightDecay * theta[j]
			}
			return v
		}
		switch c.name() {
		case OptSGD:
			out[j] = lr * gi(k-1)
		case OptMomentum, OptNesterov:
			var buf float64 // Σ_{i≤k} μ^{k−i} g_i
			for i := 0; i < k; i++ {
				buf += math.Pow(c.Momentum, float64(k-1-i)) * gi(i)
			}
			if c.name() == OptNesterov {
				out[j] = lr * (gi(k-1) + c.Momentum*buf)
			} else {
				out[j] = lr * buf
			}
		case OptAdam, OptAdamW:
			var m, v float64
			for i := 0; i < k; i++ {
				m += (1 - b1) * math.Pow(b1, float64(k-1-i)) * gi(i)
				v += (1 - b2) * math.Pow(b2, float64(k-1-i)) * gi(i) * gi(i)
			}
			m /= 1 - math.Pow(b1, float64(k))
			v /= 1 - math.Pow(b2, float64(k))
			out[j] = lr * m / (math.Sqrt(v) + eps)
			if c.name() == OptAdamW {
				out[j] += lr * c.WeightDecay * theta[j]
			}
		}
	}
	return out
}

func TestOptimizerUpdates(t *testing.T) {
	g := [][]float64{{1, -0.5}, {0.2, 0.3}, {-0.4, 1}, {0.05, -2}}
	theta := []float64{0.5, -2}
	const lr = 0.1
	for _, c := range []OptimizerConfig{
		{Name: OptSGD, WeightDecay: 0.1},
		{Name: OptMomentum, Momentum: 0.9},
		{Name: OptMomentum, Momentum: 0.5, WeightDecay: 0.01},
		{Name: OptNesterov, Momentum: 0.9},
		{Name: OptAdam},
		{Name: OptAdam, Beta1: 0.8, Beta2: 0.99, Eps: 1e-3, WeightDecay: 0.1},
		{Name: OptAdamW, WeightDecay: 0.01},
	} {
		t.Run(c.Name, func(t *testing.T) {
			if err := c.Validate(); err != nil {
				t.Fatal(err)
			}
			s := newOptimizerState(c, 2)
			th := []float32{float32(theta[0]), float32(theta[1])}
			th64 := []float64{float64(th[0]), float64(th[1])}
			out := make([]float32, 2)
			for k := 1; k <= len(g); k++ {
				s.update(append([]float64(nil), g[k-1]...), th, lr, out)
				want := closedForm(c, g, th64, k, lr)
				for j := range want {
					if d := math.Abs(float64(out[j]) - want[j]); d > 1e-6*math.Max(1, math.Abs(want[j])) {
						t.Fatalf("step %d coordinate %d: update %v, closed form %v", k, j, out[j], want[j])
					}
				}
			}
			if s.t != len(g) {
				t.Fatalf("update count %d, want %d", s.t, len(g))
			}
		})
	}
}

// TestAdamFirstSteps checks Adam's first two updates (β₁ = 0.9, β₂ = 0.999,
// ε = 1e-8, lr = 0.1) against values worked by hand: step 1 is
// lr·g/(|g| + ε); step 2 is lr·m̂/(√v̂ + ε) with m̂ = (β₁g₁ + g₂)/(1 + β₁),
// v̂ = (β₂g₁² + g₂²)/(1 + β₂).
func TestAdamFirstSteps(t *testing.T) {
	s := newOptimizerState(OptimizerConfig{Name: OptAdam}, 2)
	out := make([]float32, 2)
	for _, step := range []struct {
		g    []float64
		want []float64
	}{
		{[]float64{1, -0.5}, []float64{0.1 / (1 + 1e-8), -0.05 / (0.5 + 1e-8)}},
		{[]float64{0.2, 0.3}, []float64{0.0803040967292234, -0.01914980305822491}},
	} {
		s.update(step.g, nil, 0.1, out)
		for j, w := range step.want {
			if float64(out[j]) != float64(float32(w)) {
				t.Fatalf("update %v, want %v", out, step.want)
			}
		}
	}
}

func TestLRFactor(t *testing.T) {
	for _, tc := range []struct {
		c    OptimizerConfig
		step int
		want float64
	}{
		{OptimizerConfig{}, 0, 1},
		{OptimizerConfig{}, 1000, 1},
		{OptimizerConfig{WarmupSteps: 4}, 0, 0.25},
		{OptimizerConfig{WarmupSteps: 4}, 3, 1},
		{OptimizerConfig{WarmupSteps: 4}, 9, 1},
		{OptimizerConfig{Schedule: ScheduleStep, StepSize: 3, Gamma: 0.1}, 2, 1},
		{OptimizerConfig{Schedule: ScheduleStep, StepSize: 3, Gamma: 0.1}, 3, 0.1},
		{OptimizerConfig{Schedule: ScheduleStep, StepSize: 3, Gamma: 0.5, WarmupSteps: 2}, 1, 1},
		{OptimizerConfig{Schedule: ScheduleStep, StepSize: 3, Gamma: 0.5, WarmupSteps: 2}, 8, 0.25},
		{OptimizerConfig{Schedule: ScheduleCosine, DecaySteps: 10}, 0, 1},
		{OptimizerConfig{Schedule: ScheduleCosine, DecaySteps: 10}, 5, 0.5},
		{OptimizerConfig{Schedule: ScheduleCosine, DecaySteps: 12}, 4, 0.75}, // ½(1 + cos π/3)
		{OptimizerConfig{Schedule: ScheduleCosine, DecaySteps: 10}, 10, 0},
		{OptimizerConfig{Schedule: ScheduleCosine, DecaySteps: 10}, 50, 0},
		{OptimizerConfig{Schedule: ScheduleCosine, DecaySteps: 14, WarmupSteps: 4}, 1, 0.5},
		{OptimizerConfig{Schedule: ScheduleCosine, DecaySteps: 14, WarmupSteps: 4}, 9, 0.5},
	} {
		if err := tc.c.Validate(); err != nil {
			t.Fatal(err)
		}
		if got := tc.c.LRFactor(tc.step); math.Abs(got-tc.want) > 1e-15 {
			t.Errorf("%+v step %d: factor %v, want %v", tc.c, tc.step, got, tc.want)
		}
	}
}

func TestOptimizerValidate(t *testing.T) {
	for _, tc := range []struct {
		c    OptimizerConfig
		want string
	}{
		{OptimizerConfig{Name: "rmsprop"}, "unknown optimizer"},
		{OptimizerConfig{Name: OptMomentum}, "needs a momentum"},
		{OptimizerConfig{Name: OptMomentum, Momentum: 1}, "momentum must be in [0, 1)"},
		{OptimizerConfig{Name: OptAdam, Momentum: 0.9}, "momentum is used by"},
		{OptimizerConfig{Name: OptSGD, Beta1: 0.9}, "used by adam and adamw"},
		{OptimizerConfig{Name: OptAdam, Beta2: 1}, "beta2 must be in [0, 1)"},
		{OptimizerConfig{Name: OptAdam, Eps: -1}, "Adam's ε"},
		{OptimizerConfig{WeightDecay: -0.1}, "weight decay"},
		{OptimizerConfig{WeightDecay: math.NaN()}, "weight decay"},
		{OptimizerConfig{WarmupSteps: -1}, "warm-up"},
		{OptimizerConfig{Schedule: "linear"}, "unknown learning-rate schedule"},
		{OptimizerConfig{Schedule: ScheduleStep, StepSize: 0, Gamma: 0.1}, "step size ≥ 1"},
		{OptimizerConfig{Schedule: ScheduleStep, StepSize: 2, Gamma: 1.5}, "γ in (0, 1]"},
		{OptimizerConfig{Schedule: ScheduleCosine, DecaySteps: 5, WarmupSteps: 5}, "beyond the 5 warm-up steps"},
		{OptimizerConfig{Gamma: 0.5}, "used by the step schedule"},
		{OptimizerConfig{DecaySteps: 9}, "used by the cosine schedule"},
	} {
		err := tc.c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one containing %q", tc.c, err, tc.want)
		}
	}
}

// TestOptimizerStateRoundTrip checks that the stored state continues the
// recursion bit for bit.
func TestOptimizerStateRoundTrip(t *testing.T) {
	for _, c := range []OptimizerConfig{{Name: OptNesterov, Momentum: 0.9}, {Name: OptAdamW, WeightDecay: 0.1}} {
		a := newOptimizerState(c, 3)
		th := []float32{1, -1, 0.5}
		out := make([]float32, 3)
		for k := 0; k < 3; k++ {
			a.update([]float64{0.1 * float64(k), -0.3, 1.7}, th, 0.01, out)
		}
		data, err := a.marshal()
		if err != nil {
			t.Fatal(err)
		}
		b := newOptimizerState(c, 3)
		if err := b.unmarshal(data); err != nil {
			t.Fatal(err)
		}
		outB := make([]float32, 3)
		for k := 0; k < 2; k++ {
			g := []float64{math.Sqrt(float64(k + 2)), -0.3, 1e-3}
			a.update(append([]float64(nil), g...), th, 0.01, out)
			b.update(g, th, 0.01, outB)
			for j := range out {
				if math.Float32bits(out[j]) != math.Float32bits(outB[j]) {
					t.Fatalf("%s: restored state's update %v, original %v", c.Name, outB, out)
				}
			}
		}
		other := newOptimizerState(OptimizerConfig{Name: OptAdam}, 3)
		if err := other.unmarshal(data); c.Name != OptAdam && err == nil {
			t.Fatalf("state of %s restored into adam", c.Name)
		}
		if err := newOptimizerState(c, 4).unmarshal(data); err == nil {
			t.Fatal("state of 3 parameters restored into 4")
		}
	}
}
