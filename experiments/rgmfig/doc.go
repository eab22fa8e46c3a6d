// Package rgmfig reproduces Figure 1 of Hendrikx, Mangold & Bellet, "The
// Relative Gaussian Mechanism and its Application to Private Gradient
// Descent" (AISTATS 2024) and the ijcnn1 panel of its Appendix D: private
// gradient descent for ridge regression on ijcnn1 over two nodes, comparing
// no noise, the Relative Gaussian Mechanism and per-example clipping at
// thresholds c, 10c and c/10, for the random, label and bias splits, with
// min/max bands over three runs. Output: CSV (every run), PNG, SVG, PDF and a JSON
// summary with every node's thresholds, sensitivity constants, PTR outcome
// and per-step mechanism.
package rgmfig
