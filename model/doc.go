// Package model holds privtrain's trainable models (Gorgonia CNNs, logistic
// and linear regression), their losses and their exact per-example gradients.
//
// It knows nothing about privacy or aggregation: a Model turns a Batch into a
// loss and gradients (summed over the batch, or one flat vector per example,
// all parameters in one fixed order) and applies updates.
//
// # Networks as data
//
// A Network is a sequential list of layers (Layers) with an initialisation
// (InitGlorot, InitTorch, InitZero) and a loss (LossSoftmaxCE,
// LossSquared); it is a Go value with a JSON and YAML form (ParseNetwork,
// ReadNetworkFile; unknown fields are errors). Each layer is a value of its
// kind's type: Conv, MaxPool, AvgPool, ReLU, Tanh, GroupNorm, Flatten and
// Dense are built in, and Kinds lists every registered kind. In JSON a
// layer is {"kind": name, its parameters…}, decoded through the kind
// registered under that name. New checks the network against the spec —
// kernel, stride and padding ranges, shapes that fit, group counts
// dividing the channels, a flatten before the first dense layer on images,
// pooling and group norm only after a convolution (before one, images are
// in (C, H, W) order), the output size equal to Classes — and says which
// layer is wrong. Convolutions and dense layers have a bias unless NoBias
// ("no_bias": true). Group norm (ε = 1e-5, γ = 1 and β = 0 initially
// whatever the init) normalises each example's group of channels over its
// positions and has per-channel γ and β, whose exact per-example gradients
// are Σ ∂ℓ/∂z·x̂ and Σ ∂ℓ/∂z. Flatten only changes the shape bookkeeping:
// activations are already one row per example, in (H, W, C) order after a
// convolution and in the input's (C, H, W) order before one.
//
// # Adding a layer kind
//
// A layer kind is a type implementing Layer, registered from an init
// function with RegisterLayer(name, zero value), as image.RegisterFormat
// registers image formats; a kind of another module works exactly as the
// built-in ones (see ExampleRegisterLayer, whose "scale" kind is defined in
// a test of another package). The type's exported fields, with JSON tags,
// are the layer's parameters in a network description. Its methods:
//
//   - Validate checks the parameters alone; errors name the field.
//   - Resolve(in Shape) checks the input shape (Flat, or an image in CHW
//     or HWC order) and returns the output shape and the parameter tensors
//     (Param: a name, a 1- or 2-dimensional shape, and an Init:
//     KernelInit, BiasInit, ConstInit or one's own, drawing from the
//     model's initialisation stream). The model lays the tensors out one
//     after the other in the parameter vector, in layer order.
//   - Build(*BuildContext) adds the forward op(s) for a chunk of N
//     examples to the Gorgonia graph, reading the input node and the
//     parameter nodes the context gives; a layer with parameters must add
//     the context's zero node E to its output (z = f(a; θ) + e) and return
//     its gradient rule, or nil for the generic one (below).
//   - The rule (ExampleGrads, one per kind, as Opacus's grad samplers)
//     writes example i's parameter gradient from ∂ℓ/∂z, which the model
//     obtains by differentiating the loss with respect to E once per chunk,
//     and from what the layer's op kept from the run (its input, unfolded
//     patches, normalised values). It may also sum a chunk itself
//     (BatchGrads); otherwise the model sums its rows. What the rule reads
//     must be kept by the layer's own op: Gorgonia may reuse the memory of
//     a value that no later op reads.
//
// A layer written only from Gorgonia's own operators (G.Mul,
// G.BroadcastAdd, …) needs no rule: its Build returns a nil ExampleGrads
// (and may ignore E), and the model computes its exact per-example
// gradients generically (fallback.go, like Opacus' functorch path): each
// chunk graph owns a batch-of-one graph of the network, differentiated by
// Gorgonia with respect to those layers' parameters, and reruns it on every
// row. It is slower: the 784-64-10 MLP's per-example gradients of a batch
// of 256 took 157 ms with two generic dense layers against 84 ms with the
// built-in rule (BenchmarkFallbackDense, 2 loaded cores), the cost growing
// with the number of examples times one graph run, where a rule does one
// run per chunk. The layers that have a rule keep it.
//
// The package modeltest checks a kind's gradients in a network as the
// built-in kinds are checked: every row equals the gradient of a batch of
// one, the rows sum to the batch gradient across chunks, and the rows agree
// with finite differences.
//
// Architectures are registered by name (Register, like database/sql
// drivers; Names lists them); a Spec names one in Arch, or carries its own
// Network (Arch is then a label that is not a registered name). The
// built-in architectures below are registered descriptions.
//
// # Architectures
//
// New builds, for Spec.Arch:
//
//   - "tfp-cnn": the TF-Privacy tutorial CNN: conv 16@8×8 stride 2 pad 3,
//     ReLU, max-pool 2×2 stride 1; conv 32@4×4 stride 2, ReLU, max-pool 2×2
//     stride 1; flatten; dense 32, ReLU; dense Classes. Any (C, H, W) input
//     large enough, e.g. (1, 28, 28) (26,010 parameters with 10 classes) or
//     (3, 32, 32) (37,274). Keras initialisation: Glorot-uniform kernels
//     (limit √(6/(fan_in+fan_out)), fans counting the kernel's spatial size,
//     as Keras does) and zero biases.
//   - "pdp-cnn-mnist": the PDP-SGD CNN for MNIST / Fashion-MNIST (its Table 5):
//     the same layers as tfp-cnn (its "size (2,2)" pools have stride 1, as in
//     the Opacus MNIST example it follows), with PyTorch's default
//     initialisation: kernels and biases U(±1/√fan_in).
//   - "pdp-cnn-svhn": the PDP-SGD CNN for SVHN (its Table 4, LeNet-5): conv
//     6@5×5, ReLU, max-pool 2×2 stride 2; conv 16@5×5, ReLU, max-pool 2×2
//     stride 2; flatten; dense 120, ReLU; dense 84, ReLU; dense Classes
//     (62,006 parameters for (3, 32, 32) and 10 classes); PyTorch
//     initialisation.
//   - "logreg": multinomial logistic regression z = Wx + b on (D) inputs,
//     zero-initialised.
//   - "linreg": linear (ridge) regression z = θᵀx on (D) inputs, no bias,
//     Classes = 1, zero-initialised.
//
// Classifiers use the softmax cross-entropy loss ℓ_i = −log softmax(z_i)_{y_i}
// (Batch.Labels); linreg uses ℓ_i = ½(θᵀx_i − y_i)² + (μ/2)‖θ‖² with μ =
// Spec.L2 (Batch.Targets), so the penalty is part of every example's loss and
// gradient. Predict returns logits (M × Classes) or θᵀx (M).
//
// # Parameter order
//
// Layers come in order, each as its kernel then its bias, if it has one
// (group norm: γ then β; other kinds: their Params in order). A convolution
// kernel is laid out (out channel, kernel row, kernel column, in channel); a
// dense kernel (out, in). Images are (C, H, W) per example in Batch.X, but
// activations after the first convolution are (H, W, C), so flattening for
// the first dense layer is in (H, W, C) order, as in Keras.
//
// # Implementation
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
//
// # Files
//
// Save and Load use a versioned binary format: magic, version, the Spec as
// JSON, the float32 parameters and a SHA-256 checksum. Save writes atomically
// (temporary file, fsync, rename).
package model
