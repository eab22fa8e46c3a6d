// Package model holds privtrain's trainable models (Gorgonia CNNs, logistic
// and linear regression), their losses and their exact per-example gradients.
// Networks are data (Network, a list of Layer values of registered kinds);
// architectures are registered by name (Register, New). It knows nothing
// about privacy or aggregation.
package model
