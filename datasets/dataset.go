package datasets

// Dataset is an in-memory dataset of N examples.
type Dataset struct {
	// Name identifies the dataset and split, e.g. "mnist/train".
	Name string
	// X holds the features, N × D row-major, float32. Images are scaled to
	// [0, 1] and stored channel-major (C, H, W) per example.
	X []float32
	// Shape is the per-example shape: (C, H, W) for images, (D) for vectors.
	Shape []int
	// Labels holds class indices in [0, Classes) (nil for regression-only data).
	Labels []int
	// Targets holds real-valued targets (e.g. ±1 for LIBSVM binary data).
	Targets []float32
	// Classes is the number of classes.
	Classes int
	// N is the number of examples.
	N int
}

// Dim returns D, the number of features per example.
func (d *Dataset) Dim() int {
	n := 1
	for _, s := range d.Shape {
		n *= s
	}
	return n
}
