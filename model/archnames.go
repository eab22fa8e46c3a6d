package model

// Archs lists the architecture names Spec.Arch accepts (archLayers), so
// that a configuration can be checked before any data is loaded.
func Archs() []string {
	return []string{"tfp-cnn", "pdp-cnn-mnist", "pdp-cnn-svhn", "logreg", "linreg"}
}
