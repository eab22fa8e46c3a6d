// Package privacyfigs regenerates the privacy-analysis figures of Wang et al.,
// "Renyi Differential Privacy of Propose-Test-Release and Applications to
// Private and Robust Machine Learning" (NeurIPS 2022): Figure 1 and its
// appendix variant Figure 4 (ε of one PTR run, RDP-converted vs direct
// analysis), Figure 2 (RDP of Poisson-subsampled PTR: white-box, black-box,
// lower bound) and Figures 3 and 5 (ε after T compositions), as PNG plots and
// CSV files of the plotted numbers. All numbers come from package privacy.
//
// The paper's figures are images without stated parameters beyond their
// captions; the parameters used here are listed in Settings and written in
// each CSV header, and any setting chosen to stay inside a theorem's
// conditions is documented there.
package privacyfigs
