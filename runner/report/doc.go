// Package report turns run directories into one self-contained HTML page
// (inline SVG curves, no scripts, no network) and CSV files of the same
// curves: test accuracy and ε against steps, the PTR pass rate and trim
// level F of TSGD+PTR runs, the per-group spend of personalized-DP runs,
// each run's configuration and guarantee, several runs overlaid for
// comparison.
//
// By default it reads only the release-safe files of a run (runner's
// release.go): config.json, metrics.jsonl, summary.json and, for
// personalized-DP runs, ledger.csv. The operator-only files under private/
// (diagnostics.jsonl: loss, exact batch sizes, PTR's Δ and Δ̂;
// summary.json: final loss, examples, timings) are read only with
// Options.Operator, and the page then says so at its top.
package report
