// Package audit audits the one-step privacy claim of any registered private
// aggregation rule empirically (Run): a lower confidence bound on ε from
// distinguishing tests on worst-case neighbouring batches, beside the
// accountant's claim; an empirical ε above the claim is evidence of a bug.
package audit
