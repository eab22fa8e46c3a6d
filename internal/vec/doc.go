// Package vec holds the float32 vector kernels of the DP hot path (sums of
// squares, clip scaling, SumScaledRows, the secure release's grid sums) and
// the instruction-set level every assembly kernel of privtrain uses (Level).
package vec
