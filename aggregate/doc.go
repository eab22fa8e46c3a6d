// Package aggregate turns a batch of clipped per-example gradients into one
// released update (with any privacy noise) and reports what it did and which
// privacy mechanism the step was (Aggregator, Report). Rules are registered
// by name (Register, RegisterRule; New, Names), each with its own options
// type (Options; Config is their serialized union), in this package or
// another module (see examples/custom-aggregator).
package aggregate
