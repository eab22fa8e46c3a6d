// Package experiments holds no code: its subpackages reproduce the papers
// privtrain implements — grid (the PTR and personalized-DP tables as grids
// of runs), privacyfigs (the PTR paper's privacy figures), rgmfig (the RGM
// paper's Figure 1 and rgm-gd), figstyle (their common plot style). Runs
// themselves are package runner's.
package experiments
