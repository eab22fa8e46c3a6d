// Package datasets loads real benchmark datasets from their official file
// formats (IDX, CIFAR-10 binary, LIBSVM), verifies checksums, and samples
// mini-batches (Poisson at a rate q, Poisson at per-example rates π_i, and
// shuffled fixed-size batches), each sampler driven by an explicit seed.
package datasets
