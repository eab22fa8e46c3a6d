package model

// The generic per-example gradient (like Opacus' functorch fallback). A
// layer with parameters whose Build returns no ExampleGrads rule — a layer
// written only from Gorgonia's own operators, say G.Mul and G.BroadcastAdd
// — still gets exact per-example gradients: every chunk graph holding such
// a layer owns a batch-of-one graph of the whole network, compiled with
// Gorgonia's symbolic gradient of the loss with respect to those layers'
// parameters, and the rule reruns it on each row of the chunk (one forward
// and backward pass per example). ∂ℓ_i/∂θ of a batch of one is by
// definition example i's gradient, so the rule is exact; it is slower than a
// layer's own rule by about a factor of the chunk size for that layer's
// share of the work (see BenchmarkFallbackDense and the model package
// documentation). The layers that have a rule keep it: the batch-of-one run
// only serves the layers without one.

// oneGraph is the batch-of-one graph of a chunk graph with fallback layers.
type oneGraph struct {
	chunk *graph // the chunk graph whose rows it reruns
	g     *graph // the batch-of-one graph (g.pg: the parameter gradients)
	row   int    // the chunk row whose gradients g holds (−1: none)
	err   error  // the first failed run, until takeErr
}

// reset forgets the computed row (a new chunk was loaded).
func (o *oneGraph) reset() {
	if o != nil {
		o.row = -1
	}
}

// takeErr returns and clears the error of a failed run.
func (o *oneGraph) takeErr() error {
	if o == nil {
		return nil
	}
	err := o.err
	o.err = nil
	return err
}

// grad writes the gradient of fallback layer k's parameters for row i of
// the chunk's last run into dst, running the batch-of-one graph on that row
// unless it already holds it. A padded row (mask 0) has gradient 0.
func (o *oneGraph) grad(i, k int, dst []float32) {
	c := o.chunk
	if o.err != nil || c.m[i] == 0 {
		clear(dst)
		return
	}
	if o.row != i {
		in := len(c.x) / c.n
		copy(o.g.x, c.x[i*in:(i+1)*in])
		o.g.y[0], o.g.m[0] = c.y[i], c.m[i]
		if err := o.g.run(); err != nil {
			o.err, o.row = err, -1
			clear(dst)
			return
		}
		o.row = i
	}
	off := 0
	for _, nd := range o.g.pg[o.g.pgStart[k]:o.g.pgStart[k+1]] {
		v, err := valueF32(nd)
		if err != nil {
			o.err = err
			clear(dst)
			return
		}
		off += copy(dst[off:], v)
	}
}

// fallbackGrads is the generic rule of fallback layer k of a chunk graph.
type fallbackGrads struct {
	one   *oneGraph
	layer int
}

// ExampleGrad implements ExampleGrads by rerunning row i alone.
func (f *fallbackGrads) ExampleGrad(i int, _, dst []float32) { f.one.grad(i, f.layer, dst) }

// noRule stands for the fallback layers' rule inside a batch-of-one graph,
// whose parameter gradients are read directly (graph.pg).
type noRule struct{}

func (noRule) ExampleGrad(int, []float32, []float32) {}
