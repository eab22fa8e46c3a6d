package aggregate_test

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/privtrain/privtrain/aggregate"
)

// Four clipped gradients (R = 1), one of them an outlier at the clip norm
// (exactly 1 in float32, as private rules require ‖g_i‖ ≤ R with no slack).
func exampleBatch() aggregate.Grads {
	g := aggregate.Grads{
		G:        []float32{0.1, 0, 0, 0.2, 0.1, 0.1, -1, 0},
		M:        4,
		P:        2,
		ClipNorm: 1,
	}
	for i := 0; i < g.M; i++ {
		g.Norms = append(g.Norms, math.Hypot(float64(g.G[2*i]), float64(g.G[2*i+1])))
	}
	return g
}

func Example() {
	a, err := aggregate.New("tsum", aggregate.Config{F: 1}) // σ = 0: exact
	if err != nil {
		panic(err)
	}
	out := make([]float32, 2)
	rep, err := a.Aggregate(exampleBatch(), nil, out)
	if err != nil {
		panic(err)
	}
	fmt.Printf("TSUM_1 = [%.1f %.1f], trimmed %d\n", out[0], out[1], rep.Trimmed)
	// Output: TSUM_1 = [0.2 0.3], trimmed 1
}

func ExampleNew_ptr() {
	a, err := aggregate.New("ptr-tsum", aggregate.Config{
		Sigma: 1.1, ClipNorm: 1, Tau: 0.5, B: 1, Delta0: 1e-8, F: 1,
	})
	if err != nil {
		panic(err)
	}
	out := make([]float32, 2)
	rep, err := a.Aggregate(exampleBatch(), rand.New(rand.NewPCG(1, 2)), out)
	if err != nil {
		panic(err)
	}
	// LS^(0) = ‖g_(4)‖ = 1 > τ, so Δ = 0 and the test almost surely fails.
	// The rule's own diagnostics hold the test's record.
	d := rep.Diagnostics.(aggregate.PTRDiagnostics)
	fmt.Println("Δ =", d.Delta, "branch", d.Branch, "mechanism", rep.Mechanism.Spec().Kind)
	// The zero Config selected the secure (floating-point-safe) release.
	fmt.Println("secure:", aggregate.IsSecure(a))
	// Output:
	// Δ = 0 branch + mechanism ptr
	// secure: true
}

// The zero Config is secure: a noisy rule releases floating-point-safe
// noise, or is refused if it has no such release. FloatNoise opts out, and
// its guarantee does not hold against floating-point attacks.
func ExampleConfig_floatNoise() {
	secure, _ := aggregate.New("sum", aggregate.Config{Sigma: 1.1, ClipNorm: 1})
	float, _ := aggregate.New("sum", aggregate.Config{Sigma: 1.1, ClipNorm: 1, FloatNoise: true})
	fmt.Println("sum secure:", aggregate.IsSecure(secure), "with FloatNoise:", aggregate.IsSecure(float))
	cc := aggregate.Config{Sigma: 1.1, ClipNorm: 1, Radius: 0.5, Reference: "zero"}
	_, err := aggregate.New("centered-clip", cc)
	fmt.Println("centered-clip refused:", err != nil)
	cc.FloatNoise = true
	_, err = aggregate.New("centered-clip", cc)
	fmt.Println("centered-clip with FloatNoise:", err)
	// Output:
	// sum secure: true with FloatNoise: false
	// centered-clip refused: true
	// centered-clip with FloatNoise: <nil>
}
