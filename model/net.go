package model

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/privtrain/privtrain/internal/vec"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// numWorkers is the number of graphs a model runs concurrently. It is fixed
// (not GOMAXPROCS) so that summation order, and hence every result, does not
// depend on the machine.
const numWorkers = 2

// chunkSizes returns the rows per run of the large and the small graph of
// a network: smaller for CNNs (networks with an (H, W, C) image, the
// output of a convolution), whose examples cost more.
//
// Every run of a graph has a fixed cost besides its arithmetic: Gorgonia's
// tape machine (RunAll) starts a goroutine and waits for it on a goroutine
// locked to its OS thread, so a run costs two thread hand-offs during
// which a core idles (docs/kernels-evidence.md, wave 4: about 0.3 ms per
// run on the 2-vCPU test machine). 128-row chunks for the MNIST CNN halve
// the runs but were not faster in a quiet A/B run, so the sizes stay.
func chunkSizes(layers []layer) [2]int {
	for _, l := range layers {
		if l.in.Layout == HWC || l.out.Layout == HWC {
			return [2]int{64, 16}
		}
	}
	return [2]int{256, 32}
}

// chunk is a run of cnt ≤ graph size rows from start, on one worker.
type chunk struct {
	start, cnt int
	small      bool
	worker     int
}

// net is a Model built from a layer list; see New.
type net struct {
	spec   Spec
	layers []layer
	loss   int
	p      int
	in     int // input features per example
	params []float32
	sizes  [2]int
	w      [numWorkers]*worker
	plan   []chunk
	l2     float32
}

// worker runs chunks on its own two graphs (large and small chunk size).
type worker struct {
	graphs  [2]*graph
	acc     []float32 // batch-gradient accumulator (len P)
	row     []float32 // one per-example gradient (PerExampleVisit)
	lossSum float64
	err     error
}

// graph is one compiled graph of chunk size n with its buffers.
type graph struct {
	n        int
	g        *G.ExprGraph
	vm       G.VM
	pvm      G.VM // forward-only machine for Predict
	x, y, m  []float32
	dz       []*G.Node    // ∂loss/∂z per parameterised layer
	plays    []paramLayer // parameterised layers
	lossOp   *lossOp
	outLayer *G.Node // the last layer's output
	// one reruns the chunk's rows for the layers without a per-example
	// gradient rule (fallback.go; nil when every layer has one).
	one *oneGraph
	// pg (batch-of-one graphs only) is ∂loss/∂θ of the fallback layers'
	// parameters, layer k's at pg[pgStart[k]:pgStart[k+1]].
	pg      []*G.Node
	pgStart []int
}

// paramLayer is a layer with parameters in one graph.
type paramLayer struct {
	off, nP int          // its parameters in the parameter vector
	dzi     int          // its ∂loss/∂z in graph.dz (−1: fallback, none)
	grads   ExampleGrads // its per-example gradient rule
	batch   BatchGrads   // grads, if it sums a chunk itself
	scratch []float32    // one example's gradient, to sum a chunk without batch
}

func newNet(s Spec, seed uint64) (*net, error) { return newNetChunks(s, seed, [2]int{}) }

// newNetChunks is newNet with the given chunk sizes (zero: chunkSizes).
func newNetChunks(s Spec, seed uint64, sizes [2]int) (*net, error) {
	layers, init, loss, err := archLayers(s)
	if err != nil {
		return nil, err
	}
	p, err := resolve(s, layers, loss)
	if err != nil {
		return nil, err
	}
	s.InputShape = append([]int(nil), s.InputShape...)
	s.Network = s.Network.clone()
	if sizes[0] == 0 {
		sizes = chunkSizes(layers)
	}
	n := &net{spec: s, layers: layers, loss: loss, p: p, in: layers[0].in.Size(), params: alignedF32(p), sizes: sizes, l2: float32(s.L2)}
	initParams(layers, init, n.params, seed)
	for i := range n.w {
		w := &worker{acc: make([]float32, p), row: alignedF32(p)}
		for j, size := range n.sizes {
			if w.graphs[j], err = n.newGraph(size); err != nil {
				return nil, fmt.Errorf("model: %s: building graph: %w", s.Arch, err)
			}
		}
		n.w[i] = w
	}
	return n, nil
}

func (n *net) newGraph(size int) (*graph, error) { return n.buildGraph(size, false) }

// buildGraph compiles the network for chunks of size rows. A layer with
// parameters whose Build gives no per-example gradient rule gets the
// generic one (fallback.go); with one set, the graph is the batch-of-one
// graph of that rule, which also differentiates the loss with respect to
// those layers' parameters (graph.one.pg is filled by the caller).
func (n *net) buildGraph(size int, one bool) (*graph, error) {
	w := &graph{n: size, g: G.NewGraph()}
	var fb [][]*G.Node // parameter nodes of the fallback layers
	g := w.g
	xt, xd := newMat(size, n.in)
	w.x = xd
	x := G.NewMatrix(g, G.Float32, G.WithShape(size, n.in), G.WithName("x"), G.WithValue(xt))
	w.y = alignedF32(size)
	w.m = alignedF32(size)
	y := G.NewVector(g, G.Float32, G.WithShape(size), G.WithName("y"), G.WithValue(tensor.New(tensor.WithShape(size), tensor.WithBacking(w.y))))
	mk := G.NewVector(g, G.Float32, G.WithShape(size), G.WithName("mask"), G.WithValue(tensor.New(tensor.WithShape(size), tensor.WithBacking(w.m))))

	var es G.Nodes
	a := x
	needDA := false // an earlier layer has parameters
	for i := range n.layers {
		l := &n.layers[i]
		name := fmt.Sprintf("L%d", i)
		c := &BuildContext{Graph: g, N: size, Name: name, In: l.in, Out: l.out, Input: a, NeedInputGrad: needDA}
		off := l.off
		for k, p := range l.params {
			t := tensor.New(tensor.WithShape(p.Shape...), tensor.WithBacking(n.params[off:off+l.sizes[k]]))
			c.Params = append(c.Params, G.NewTensor(g, G.Float32, len(p.Shape), G.WithShape(p.Shape...),
				G.WithName(fmt.Sprintf("%s/%d:%s", name, k, p.Name)), G.WithValue(t)))
			off += l.sizes[k]
		}
		if l.nP > 0 {
			et, _ := newMat(size, l.out.Size())
			c.E = G.NewMatrix(g, G.Float32, G.WithShape(size, l.out.Size()), G.WithName(name+"e"), G.WithValue(et))
		}
		out, grads, err := l.desc.Build(c)
		dzi := -1
		if err == nil && l.nP > 0 && grads == nil {
			// No rule: the generic per-example gradient (fallback.go).
			fb = append(fb, c.Params)
			if !one {
				if w.one == nil {
					w.one = &oneGraph{chunk: w, row: -1}
				}
				grads = &fallbackGrads{one: w.one, layer: len(fb) - 1}
			} else {
				grads = noRule{}
			}
		} else if l.nP > 0 {
			dzi = len(es)
			es = append(es, c.E)
		}
		switch {
		case err != nil:
		case out == nil:
			err = errors.New("no output node")
		case !out.Shape().Eq(tensor.Shape{size, l.out.Size()}):
			err = fmt.Errorf("output node of shape %v, want %v", out.Shape(), tensor.Shape{size, l.out.Size()})
		case l.nP == 0 && grads != nil:
			err = errors.New("a layer without parameters returned a per-example gradient rule")
		}
		if err != nil {
			return nil, fmt.Errorf("layer %d (%s): %w", i, l.desc.Kind(), err)
		}
		if l.nP > 0 {
			pl := paramLayer{off: l.off, nP: l.nP, dzi: dzi, grads: grads}
			if b, ok := grads.(BatchGrads); ok {
				pl.batch = b
			} else {
				pl.scratch = make([]float32, l.nP)
			}
			w.plays = append(w.plays, pl)
			needDA = true
		}
		a = out
	}
	logits := a
	w.outLayer = logits
	classes := n.layers[len(n.layers)-1].out.Size()
	w.lossOp = &lossOp{opBase: opBase{name: "loss", n: size}, kind: n.loss, classes: classes, losses: make([]float32, size)}
	cost, err := G.ApplyOp(w.lossOp, logits, y, mk)
	if err != nil {
		return nil, fmt.Errorf("loss: %w", err)
	}
	wrt := es
	if one {
		for _, ps := range fb {
			wrt = append(wrt, ps...)
		}
	}
	if len(wrt) > 0 {
		d, err := G.Grad(cost, wrt...)
		if err != nil {
			return nil, fmt.Errorf("differentiating: %w", err)
		}
		w.dz = d[:len(es)]
		if one {
			w.pg, w.pgStart = d[len(es):], []int{0}
			for _, ps := range fb {
				w.pgStart = append(w.pgStart, w.pgStart[len(w.pgStart)-1]+len(ps))
			}
		}
	}
	if w.one != nil && !one {
		if w.one.g, err = n.buildGraph(1, true); err != nil {
			return nil, fmt.Errorf("batch-of-one graph of the generic per-example gradients: %w", err)
		}
	}
	w.vm = G.NewTapeMachine(g)
	w.pvm = G.NewTapeMachine(g.SubgraphRoots(logits))
	return w, nil
}

// load copies rows [start, start+cnt) of b into the worker's inputs,
// zero-padding the rest of the chunk and masking it out.
func (n *net) load(w *graph, b *Batch, start, cnt int) {
	w.one.reset()
	copy(w.x, b.X[start*n.in:(start+cnt)*n.in])
	clear(w.x[cnt*n.in:])
	for i := 0; i < w.n; i++ {
		if i >= cnt {
			w.y[i], w.m[i] = 0, 0
			continue
		}
		w.m[i] = 1
		if n.loss == lossSquared {
			w.y[i] = b.Targets[start+i]
		} else {
			w.y[i] = float32(b.Labels[start+i])
		}
	}
}

func (w *graph) run() error {
	w.vm.Reset()
	return w.vm.RunAll()
}

// gradOut returns ∂loss/∂z of parameterised layer j after a run.
func (w *graph) gradOut(j int) ([]float32, error) {
	if w.plays[j].dzi < 0 {
		return nil, nil // generic rule: no ∂loss/∂z needed
	}
	v := w.dz[w.plays[j].dzi].Value()
	if v == nil {
		return nil, fmt.Errorf("model: no gradient value for layer %d", j)
	}
	return f32s(v)
}

// accumulate adds the chunk's summed weight gradients to acc.
func (w *graph) accumulate(acc []float32) error {
	for j, l := range w.plays {
		dz, err := w.gradOut(j)
		if err != nil {
			return err
		}
		dst := acc[l.off : l.off+l.nP]
		if l.batch != nil {
			l.batch.AddBatchGrad(dz, dst)
			continue
		}
		for i := 0; i < w.n; i++ {
			l.grads.ExampleGrad(i, dz, l.scratch)
			for k, v := range l.scratch {
				dst[k] += v
			}
		}
	}
	return w.one.takeErr()
}

// perExample writes the gradients of the first cnt rows of the chunk into
// grads, one row of length P each, example by example; with sq set it also
// writes each row's sum of squares (vec.SumSquares) into sq[i] while the
// row is in cache.
func (w *graph) perExample(cnt, p int, grads []float32, sq []float64) error {
	dzs, err := w.dzs()
	if err != nil {
		return err
	}
	for i := 0; i < cnt; i++ {
		w.exampleGrad(dzs, i, grads[i*p:(i+1)*p])
		if sq != nil {
			sq[i] = vec.SumSquares(grads[i*p : (i+1)*p])
		}
	}
	return w.one.takeErr()
}

// dzs returns ∂loss/∂z of every parameterised layer after a run.
func (w *graph) dzs() ([][]float32, error) {
	dzs := make([][]float32, len(w.plays))
	for j := range w.plays {
		dz, err := w.gradOut(j)
		if err != nil {
			return nil, err
		}
		dzs[j] = dz
	}
	return dzs, nil
}

// exampleGrad writes the gradient of the chunk's example i into row (len P).
func (w *graph) exampleGrad(dzs [][]float32, i int, row []float32) {
	for j, l := range w.plays {
		l.grads.ExampleGrad(i, dzs[j], row[l.off:l.off+l.nP])
	}
}

// addRows adds the rows of the rows × len(dst) matrix m to dst, in row
// order (vec.AddRows: the plain loop's result, several columns at a time).
func addRows(dst, m []float32, rows int) { vec.AddRows(dst, m, rows) }

// makePlan cuts an m-row batch into chunks: full large chunks, then the
// remainder in small chunks (or one large one if that wastes less), each
// assigned to the worker with the fewest padded rows so far. The plan, and
// hence every summation order, depends only on m.
func (n *net) makePlan(m int) []chunk {
	big, small := n.sizes[0], n.sizes[1]
	plan := n.plan[:0]
	var load [numWorkers]int
	add := func(start, cnt int, sm bool) {
		w := 0
		for i := range load {
			if load[i] < load[w] {
				w = i
			}
		}
		size := big
		if sm {
			size = small
		}
		load[w] += size
		plan = append(plan, chunk{start: start, cnt: cnt, small: sm, worker: w})
	}
	start := 0
	for ; m-start >= big; start += big {
		add(start, big, false)
	}
	if rem := m - start; rem > big-small {
		add(start, rem, false)
	} else {
		for ; start < m; start += small {
			add(start, min(small, m-start), true)
		}
	}
	n.plan = plan
	return plan
}

// forChunks runs f on the chunks of an m-row batch, each worker on its own
// chunks in plan order, the workers in parallel.
func (n *net) forChunks(m int, f func(w *worker, g *graph, start, cnt int) error) error {
	plan := n.makePlan(m)
	var wg sync.WaitGroup
	for wi, w := range n.w {
		w.err = nil
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, c := range plan {
				if c.worker != wi {
					continue
				}
				g := w.graphs[0]
				if c.small {
					g = w.graphs[1]
				}
				if err := f(w, g, c.start, c.cnt); err != nil {
					w.err = err
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, w := range n.w {
		if w.err != nil {
			return w.err
		}
	}
	return nil
}

func (n *net) checkBatch(b Batch) error {
	if b.M < 0 {
		return fmt.Errorf("model: %s: negative batch size %d", n.spec.Arch, b.M)
	}
	if len(b.X) != b.M*n.in {
		return fmt.Errorf("model: %s: batch of %d examples needs len(X) = %d×%d = %d, got %d", n.spec.Arch, b.M, b.M, n.in, b.M*n.in, len(b.X))
	}
	if n.loss == lossSquared {
		if len(b.Targets) != b.M {
			return fmt.Errorf("model: %s: batch of %d examples needs %d targets, got %d", n.spec.Arch, b.M, b.M, len(b.Targets))
		}
		for i, t := range b.Targets {
			if math.IsNaN(float64(t)) || math.IsInf(float64(t), 0) {
				return fmt.Errorf("model: %s: target %d is %v", n.spec.Arch, i, t)
			}
		}
		return nil
	}
	if len(b.Labels) != b.M {
		return fmt.Errorf("model: %s: batch of %d examples needs %d labels, got %d", n.spec.Arch, b.M, b.M, len(b.Labels))
	}
	for i, y := range b.Labels {
		if y < 0 || y >= n.spec.Classes {
			return fmt.Errorf("model: %s: label %d of example %d outside [0, %d)", n.spec.Arch, y, i, n.spec.Classes)
		}
	}
	return nil
}

func (n *net) Spec() Spec {
	s := n.spec
	s.InputShape = append([]int(nil), s.InputShape...)
	s.Network = s.Network.clone()
	return s
}

func (n *net) NumParams() int { return n.p }

func (n *net) Params() []float32 { return append([]float32(nil), n.params...) }

func (n *net) SetParams(p []float32) error {
	if len(p) != n.p {
		return fmt.Errorf("model: %s: SetParams: got %d parameters, want %d", n.spec.Arch, len(p), n.p)
	}
	copy(n.params, p)
	return nil
}

func (n *net) Step(u []float32) error {
	if len(u) != n.p {
		return fmt.Errorf("model: %s: Step: update has length %d, want %d", n.spec.Arch, len(u), n.p)
	}
	for i, v := range u {
		n.params[i] -= v
	}
	return nil
}

// ridge returns (μ/2)‖θ‖² for linreg (0 elsewhere).
func (n *net) ridge() float64 {
	if n.l2 == 0 {
		return 0
	}
	var s float64
	for _, v := range n.params {
		s += float64(v) * float64(v)
	}
	return float64(n.l2) / 2 * s
}

func (n *net) BatchGrad(b Batch, grad []float32) (float64, error) {
	if err := n.checkBatch(b); err != nil {
		return 0, err
	}
	if len(grad) != n.p {
		return 0, fmt.Errorf("model: %s: BatchGrad: grad has length %d, want %d", n.spec.Arch, len(grad), n.p)
	}
	for _, w := range n.w {
		clear(w.acc)
		w.lossSum = 0
	}
	err := n.forChunks(b.M, func(w *worker, g *graph, start, cnt int) error {
		n.load(g, &b, start, cnt)
		if err := g.run(); err != nil {
			return err
		}
		for _, l := range g.lossOp.losses[:cnt] {
			w.lossSum += float64(l)
		}
		return g.accumulate(w.acc)
	})
	if err != nil {
		return 0, fmt.Errorf("model: %s: BatchGrad: %w", n.spec.Arch, err)
	}
	copy(grad, n.w[0].acc)
	loss := n.w[0].lossSum
	for _, w := range n.w[1:] {
		for i, v := range w.acc {
			grad[i] += v
		}
		loss += w.lossSum
	}
	if n.l2 != 0 && b.M > 0 {
		s := n.l2 * float32(b.M)
		for i, v := range n.params {
			grad[i] += s * v
		}
		loss += float64(b.M) * n.ridge()
	}
	return loss, nil
}

func (n *net) PerExampleGrads(b Batch, grads []float32, losses []float32) error {
	return n.perExampleGrads(b, grads, losses, nil)
}

// PerExampleGradsNorms implements PerExampleNormer.
func (n *net) PerExampleGradsNorms(b Batch, grads, losses []float32, sq []float64) error {
	if len(sq) != b.M {
		return fmt.Errorf("model: %s: PerExampleGradsNorms: sq has length %d, want %d", n.spec.Arch, len(sq), b.M)
	}
	return n.perExampleGrads(b, grads, losses, sq)
}

func (n *net) perExampleGrads(b Batch, grads []float32, losses []float32, sq []float64) error {
	if err := n.checkBatch(b); err != nil {
		return err
	}
	if len(grads) != b.M*n.p {
		return fmt.Errorf("model: %s: PerExampleGrads: grads has length %d, want M·P = %d·%d = %d", n.spec.Arch, len(grads), b.M, n.p, b.M*n.p)
	}
	if len(losses) != b.M {
		return fmt.Errorf("model: %s: PerExampleGrads: losses has length %d, want %d", n.spec.Arch, len(losses), b.M)
	}
	// With a ridge term the rows change after the chunks; their norms are
	// then taken at the end.
	chunkSq := sq
	if n.l2 != 0 {
		chunkSq = nil
	}
	err := n.forChunks(b.M, func(_ *worker, g *graph, start, cnt int) error {
		n.load(g, &b, start, cnt)
		if err := g.run(); err != nil {
			return err
		}
		copy(losses[start:start+cnt], g.lossOp.losses[:cnt])
		var s []float64
		if chunkSq != nil {
			s = chunkSq[start : start+cnt]
		}
		return g.perExample(cnt, n.p, grads[start*n.p:(start+cnt)*n.p], s)
	})
	if err != nil {
		return fmt.Errorf("model: %s: PerExampleGrads: %w", n.spec.Arch, err)
	}
	if n.l2 != 0 {
		r := float32(n.ridge())
		for i := 0; i < b.M; i++ {
			row := grads[i*n.p : (i+1)*n.p]
			n.addRidge(row)
			losses[i] += r
			if sq != nil {
				sq[i] = vec.SumSquares(row)
			}
		}
	}
	return nil
}

// addRidge adds the ridge term's gradient μθ to a per-example row.
func (n *net) addRidge(row []float32) {
	for k, v := range n.params {
		row[k] += n.l2 * v
	}
}

// ExampleChunks implements ChunkVisitor: the chunks of makePlan.
func (n *net) ExampleChunks(m int, dst []int) []int {
	dst = dst[:0]
	for _, c := range n.makePlan(max(m, 0)) {
		dst = append(dst, c.start)
	}
	return append(dst, max(m, 0))
}

// PerExampleVisit implements ChunkVisitor. The chunks of makePlan are
// taken in plan order by whichever worker is free (each worker runs a
// chunk on its own graph of the chunk's size): a row's gradient does not
// depend on the graph or the worker that computes it, and a worker that
// finishes early (a smaller share of the rows, or a core taken by another
// process) takes the next chunk instead of waiting. Each row is computed
// into the worker's row buffer (P values, in L2 for the models here) and
// handed to visit at once, the ridge term added first (as PerExampleGrads
// adds it), so the M × P matrix is never written.
func (n *net) PerExampleVisit(b Batch, losses []float32, visit func(k, i int, row []float32, sq float64) error) error {
	if err := n.checkBatch(b); err != nil {
		return err
	}
	if len(losses) != b.M {
		return fmt.Errorf("model: %s: PerExampleVisit: losses has length %d, want %d", n.spec.Arch, len(losses), b.M)
	}
	plan := n.makePlan(b.M)
	var r float32
	if n.l2 != 0 {
		r = float32(n.ridge())
	}
	var next atomic.Int64
	work := func(w *worker) error {
		for {
			k := int(next.Add(1) - 1)
			if k >= len(plan) {
				return nil
			}
			c := plan[k]
			g := w.graphs[0]
			if c.small {
				g = w.graphs[1]
			}
			n.load(g, &b, c.start, c.cnt)
			if err := g.run(); err != nil {
				return err
			}
			dzs, err := g.dzs()
			if err != nil {
				return err
			}
			for i := 0; i < c.cnt; i++ {
				losses[c.start+i] = g.lossOp.losses[i]
				if n.l2 != 0 {
					losses[c.start+i] += r
				}
				g.exampleGrad(dzs, i, w.row)
				if err := g.one.takeErr(); err != nil {
					return err
				}
				if n.l2 != 0 {
					n.addRidge(w.row)
				}
				if err := visit(k, c.start+i, w.row, vec.SumSquares(w.row)); err != nil {
					return err
				}
			}
		}
	}
	var wg sync.WaitGroup
	for _, w := range n.w[1:] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.err = work(w)
		}()
	}
	n.w[0].err = work(n.w[0]) // the caller's goroutine is the first worker
	wg.Wait()
	for _, w := range n.w {
		if w.err != nil {
			return fmt.Errorf("model: %s: PerExampleVisit: %w", n.spec.Arch, w.err)
		}
	}
	return nil
}

func (n *net) Predict(x []float32, m int, out []float32) error {
	if m < 0 {
		return fmt.Errorf("model: %s: Predict: negative count %d", n.spec.Arch, m)
	}
	if len(x) != m*n.in {
		return fmt.Errorf("model: %s: Predict: %d inputs need len(x) = %d, got %d", n.spec.Arch, m, m*n.in, len(x))
	}
	c := n.spec.Classes
	if len(out) != m*c {
		return fmt.Errorf("model: %s: Predict: out has length %d, want %d", n.spec.Arch, len(out), m*c)
	}
	err := n.forChunks(m, func(_ *worker, g *graph, start, cnt int) error {
		copy(g.x, x[start*n.in:(start+cnt)*n.in])
		clear(g.x[cnt*n.in:])
		g.pvm.Reset()
		if err := g.pvm.RunAll(); err != nil {
			return err
		}
		z, err := valueF32(g.outLayer)
		if err != nil {
			return err
		}
		copy(out[start*c:(start+cnt)*c], z[:cnt*c])
		return nil
	})
	if err != nil {
		return fmt.Errorf("model: %s: Predict: %w", n.spec.Arch, err)
	}
	return nil
}
