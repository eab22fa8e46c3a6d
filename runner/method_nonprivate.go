package runner

// nonprivateMethod is plain minibatch SGD: shuffled batches of the expected
// size, the mean of the batch's gradients, no clipping, no noise.
func nonprivateMethod() Method {
	return Method{
		Name:    "nonprivate",
		Summary: "minibatch SGD without clipping or noise",
		Flags:   SGDFlags(),
	}
}
