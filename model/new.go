package model

import (
	"fmt"

	"github.com/privtrain/privtrain/internal/vec"
)

// New returns a model of the given architecture with parameters initialised
// from seed (see the package documentation for architectures, parameter
// order and initialisation). The same spec and seed give bit-identical
// parameters and results.
//
// The kernels are chosen once at start-up (see KernelISA); an invalid
// PRIVTRAIN_ASM value makes New fail.
//
// Architectures are registered by name (Register, like database/sql
// drivers; Names lists them); a Spec names one in Arch, or carries its own
// Network (Arch is then a label that is not a registered name). The
// built-in architectures below are registered descriptions.
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
func New(spec Spec, seed uint64) (Model, error) {
	if err := vec.EnvErr(); err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	n, err := newNet(spec, seed)
	if err != nil {
		return nil, err
	}
	return n, nil
}

// KernelISA names the level of the assembly kernels the models use: "go",
// "avx2" or "avx512" (the CPU's best, capped by PRIVTRAIN_ASM).
func KernelISA() string { return kernelISA.String() }
