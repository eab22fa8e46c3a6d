// Package privacyfigs regenerates the privacy-analysis figures 1–5 of Wang et
// al., "Renyi Differential Privacy of Propose-Test-Release and Applications to
// Private and Robust Machine Learning" (NeurIPS 2022) as plots and CSV files
// (Generate), from package privacy; Settings lists and explains the parameters.
// Beyond the paper, figurePTRPLD plots ε against steps for PTR on RDP and on
// its privacy loss distribution.
package privacyfigs
