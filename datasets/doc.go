// Package datasets loads real benchmark datasets from their official file
// formats (IDX, CIFAR-10 binary, LIBSVM), verifies every file against a
// checksum while reading it, and samples mini-batches (Poisson at a rate q,
// Poisson at per-example rates π_i, and shuffled fixed-size batches), each
// sampler a deterministic function of an explicit seed and the step.
//
// MNIST needs no download: it is read from the GoMNIST Go module. Other
// datasets are read from a data directory (--data-dir or PRIVTRAIN_DATA);
// docs/datasets.md lists the files, layout, sources and checksums.
package datasets
