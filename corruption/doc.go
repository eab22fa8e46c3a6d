// Package corruption models corrupted training data and gradients: label flips
// (random or targeted), feature noise, and gradient noise or sign flips, applied
// to a seeded, recorded subset of the training examples.
//
// New(kind, ratio, n, seed) fixes, once per run, exactly round(ratio·n)
// corrupted examples; Plan.Record lists them for the run directory. Data kinds
// are applied once to the raw training slices with Plan.ApplyData; gradient
// kinds are applied by the optimizer, at every step, to the per-example
// gradient rows of the corrupted examples in the batch (before clipping) with
// Plan.CorruptGradient. Each kind is a Kind value registered by name with
// Register (the built-ins too), so other packages add kinds; Kinds lists
// them. The package imports nothing from privtrain.
package corruption
