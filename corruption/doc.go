// Package corruption models corrupted training data and gradients: label flips
// (random or targeted), feature noise, and gradient noise or sign flips, applied
// to a seeded, recorded subset of the training examples.
package corruption
