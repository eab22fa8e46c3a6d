package model

// Batch is a mini-batch of M examples.
type Batch struct {
	// X holds the inputs, M × InputSize, row-major; images are stored
	// channel-major (C, H, W) per example.
	X []float32
	// Labels holds class indices in [0, Classes) for classifiers (nil otherwise).
	Labels []int
	// Targets holds real-valued targets for regression models (nil otherwise).
	Targets []float32
	// M is the number of examples (may be 0).
	M int
}

// Model is a differentiable model with a flat parameter vector of fixed order.
//
// Gradients are of the per-example loss ℓ(θ; x_i, y_i) (not averaged): the
// batch gradient is Σ_i ∇ℓ_i, and row i of the per-example gradients is ∇ℓ_i.
// A Model is not safe for concurrent use by several goroutines.
//
// Layers come in order, each as its kernel then its bias, if it has one
// (group norm: γ then β; other kinds: their Params in order). A convolution
// kernel is laid out (out channel, kernel row, kernel column, in channel); a
// dense kernel (out, in). Images are (C, H, W) per example in Batch.X, but
// activations after the first convolution are (H, W, C), so flattening for
// the first dense layer is in (H, W, C) order, as in Keras.
//
// Each model compiles four Gorgonia graphs (gorgonia.org/gorgonia, float32),
// a large and a small one (64 and 16 examples for CNNs, 256 and 32
// otherwise) for each of two workers, built once from the package's own Ops:
// convolution as im2col into a preallocated buffer plus one sgemm,
// branch-free max-pooling, average pooling, ReLU, tanh, group norm, dense
// layers and a masked loss, each with its symbolic derivative. Ops own
// their output buffers, so steps allocate only Gorgonia's small
// per-instruction bookkeeping; following Gorgonia's UsePreallocDoer
// contract, an op handed a preallocated value of its output's shape writes
// into it instead (the tape machine hands back the op's own buffer), and
// tensors are read through tensor.Dense's typed accessors, without unsafe.
// CNNs are the networks with an (H, W, C) image, that is with a
// convolution. A batch of any size (including
// 0) is cut into large chunks and a remainder of small ones, the last
// zero-padded and masked out of the loss; the chunks are dealt to the
// two workers, which run in parallel. PerExampleVisit (ChunkVisitor) gives
// each chunk to whichever worker is free instead, and hands every
// per-example gradient to the caller while it is in cache, without
// writing the M × P matrix. Per-example gradients and losses do not depend
// on the chunk sizes or on the worker; sums over a batch (BatchGrad) do.
//
// Per-example gradients come from the same single forward/backward pass as
// the batch gradient: every parameterised layer adds a zero-valued input e to
// its output z, Gorgonia differentiates the loss with respect to the e's, and
// each example's weight gradient is then the product of its ∂ℓ/∂z with its
// layer input (dense) or unfolded patches (convolution), one small sgemm per
// example and layer, or of its normalised input x̂ (group norm). BatchGrad forms the same products summed over the chunk
// as one sgemm. Both are exact, not approximations.
//
// Matrix products go through Go-assembly micro-kernels: an AVX-512 8×32
// tile where the CPU and OS support AVX-512 F, an AVX2/FMA 4×16 tile
// otherwise and on the edges, and gonum's pure-Go sgemm for what remains
// (the level comes from internal/vec: golang.org/x/sys/cpu, capped by the
// PRIVTRAIN_ASM variable; the purego build tag or another architecture
// compiles no assembly). Every call is bounds-checked before a kernel runs.
// The pure-Go gemm of gorgonia and gonum alone, and their conv/pool ops,
// are several times slower. PerExampleGradsNorms also returns each
// per-example gradient's sum of squares, computed while the row is in cache.
//
// Results are bit-for-bit reproducible on a given machine: the chunking and
// the assignment of chunks to the two graphs depend only on the batch size,
// partial sums are combined in a fixed order, and all buffers are 64-byte
// aligned so that the SIMD kernels sum in the same order on every run.
// Machines (and PRIVTRAIN_ASM levels) with different kernels round
// differently.
type Model interface {
	// Spec describes the architecture (enough to rebuild it with New).
	Spec() Spec
	// NumParams is P, the length of the flat parameter vector.
	NumParams() int
	// Params returns a copy of the flat parameter vector.
	Params() []float32
	// SetParams replaces the parameters with a copy of p (len P).
	SetParams(p []float32) error
	// BatchGrad writes Σ_i ∇ℓ_i into grad (len P) and returns Σ_i ℓ_i.
	BatchGrad(b Batch, grad []float32) (lossSum float64, err error)
	// PerExampleGrads writes ∇ℓ_i into row i of grads (len M·P) and ℓ_i into
	// losses (len M).
	PerExampleGrads(b Batch, grads []float32, losses []float32) error
	// Predict writes the model outputs for M inputs into out: M × Classes
	// logits for classifiers, M predictions for regression.
	Predict(x []float32, m int, out []float32) error
	// Step applies θ ← θ − update (len P).
	Step(update []float32) error
}

// Spec identifies an architecture and its shape.
type Spec struct {
	// Arch is the architecture name: a registered one (Names: "tfp-cnn",
	// "pdp-cnn-mnist", "pdp-cnn-svhn", "logreg", "linreg", and what
	// Register added), or, when Network is set, a label of the user's
	// choice that is not a registered name.
	Arch string `json:"arch"`
	// InputShape is (C, H, W) for images or (D) for vectors.
	InputShape []int `json:"input_shape"`
	// Classes is the number of classes (1 for regression).
	Classes int `json:"classes"`
	// L2 is the ridge penalty μ of the squared loss ("linreg": loss
	// ½(xᵀθ−y)² + (μ/2)‖θ‖² per example); 0 with softmax cross-entropy.
	L2 float64 `json:"l2,omitempty"`
	// Network, if set, is the network itself (networks as data), used
	// instead of a registered architecture. It is saved with the model.
	Network *Network `json:"network,omitempty"`
}

// PerExampleNormer is implemented by models that also compute the squared
// L2 norm of every per-example gradient while it is still in cache, saving
// the DP step a pass over the M × P gradients.
type PerExampleNormer interface {
	// PerExampleGradsNorms is PerExampleGrads that also writes into sq
	// (len M) the sum of squares of row i of grads, exactly as
	// vec.SumSquares computes it (internal/vec: exact squares, float64
	// accumulation in a fixed order).
	PerExampleGradsNorms(b Batch, grads, losses []float32, sq []float64) error
}

// ChunkVisitor is implemented by models that hand each per-example gradient
// to the caller while it is still in cache, instead of writing the M × P
// matrix of PerExampleGrads: the caller can clip it and add it into a sum
// at once (optim's DP step with aggregate.ChunkSummer). Every built-in
// model implements it.
type ChunkVisitor interface {
	// ExampleChunks appends to dst[:0] the first row of every chunk the
	// model cuts an m-row batch into, in increasing order, then m, and
	// returns it. The cut depends on m alone: not on the machine, the
	// number of goroutines or the data.
	ExampleChunks(m int, dst []int) []int
	// PerExampleVisit computes the losses of b (into losses, len M) and
	// its per-example gradients exactly as PerExampleGradsNorms computes
	// them, bit for bit, but instead of storing row i it calls
	// visit(k, i, row, sq): k is the chunk holding row i (ExampleChunks), row
	// the P-value gradient ∇ℓ_i (a buffer valid only during the call, which
	// visit may change) and sq its sum of squares as vec.SumSquares computes
	// it. The rows of one chunk are visited in increasing order on one
	// goroutine; different chunks may be visited concurrently and in any
	// order. An error from visit ends that goroutine's work (the other
	// goroutines finish theirs); one of the errors is returned, wrapped.
	PerExampleVisit(b Batch, losses []float32, visit func(k, i int, row []float32, sq float64) error) error
}
