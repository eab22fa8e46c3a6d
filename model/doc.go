// Package model holds privtrain's trainable models (Gorgonia CNNs, logistic
// and linear regression), their losses and their exact per-example gradients.
//
// It knows nothing about privacy or aggregation: a Model turns a Batch into a
// loss and gradients (summed over the batch, or one flat vector per example,
// all parameters in one fixed order) and applies updates.
package model
