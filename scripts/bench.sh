#!/usr/bin/env bash
# bench.sh — training-step throughput of privtrain's CNNs, in one run.
#
# Runs the Go benchmarks of model/ and optim/ and prints examples/second for
# the TF-Privacy CNN on MNIST-shaped input (1×28×28, batch 256) and
# CIFAR-shaped input (3×32×32, batch 1024): (a) a non-private step, (b) a
# DP-SGD step (per-example gradients, clipping, noise, update) and the time
# ratio (b)/(a), and the MNIST DP step with secure noise (dp-secure) against
# the float one. Whole optimizer steps from optim/ (BenchmarkStep/<method>/
# <case>, method nonprivate or dp) are used when present, else model/'s
# BenchmarkModelStep, which does the same work in the benchmark itself.
#
# Usage: scripts/bench.sh [extra go test flags]   (BENCHTIME=3s by default)
# Other engineers share the cores: run it when `uptime` shows a quiet machine.
set -euo pipefail
cd "$(dirname "$0")/.."

out=$(mktemp)
trap 'rm -f "$out"' EXIT
echo "# $(date -u +%FT%TZ)  $(uptime)"
# The packages run one after the other (never concurrently, which would
# halve each one's cores); optim/ is optional.
go test -run '^$' -bench . -benchtime "${BENCHTIME:-3s}" "$@" ./model/ | tee "$out"
if ! go test -run '^$' -bench . -benchtime "${BENCHTIME:-3s}" "$@" ./optim/ | tee -a "$out"; then
	echo "bench.sh: warning: optim/ benchmarks failed; using model/ only" >&2
fi

awk '
# Benchmark lines: name iterations ns/op value "ns/op" ... value "ex/s".
/^Benchmark/ {
	name = $1; sub(/-[0-9]+$/, "", name)
	for (i = 3; i < NF; i++) {
		if ($(i+1) == "ns/op") ns[name] = $i
		if ($(i+1) == "ex/s")  xs[name] = $i
	}
}
function pick(method, c,   n) {
	n = "BenchmarkStep/" method "/" c
	if (n in ns) return n
	n = "BenchmarkModelStep/" method "/" c
	if (n in ns) return n
	return ""
}
END {
	printf "\n%-12s %14s %14s %12s  %s\n", "case", "nonprivate", "dp", "dp/nonpriv", "source"
	bad = 0
	split("MNIST-256 CIFAR-1024", cases, " ")
	for (k = 1; k <= 2; k++) {
		c = cases[k]; a = pick("nonprivate", c); b = pick("dp", c)
		if (a == "" || b == "") { printf "%-12s missing benchmark results\n", c; bad = 1; continue }
		src = a; sub(/\/.*/, "", src)
		printf "%-12s %10.0f ex/s %10.0f ex/s %11.2fx  %s\n", c, xs[a], xs[b], ns[b] / ns[a], src
	}
	# Secure noise (aggregate.Config.Secure) on the MNIST DP step, when measured.
	a = "BenchmarkStep/dp/MNIST-256"; b = "BenchmarkStep/dp-secure/MNIST-256"
	if ((a in ns) && (b in ns))
		printf "%-12s %10.0f ex/s %10.0f ex/s %11.2fx  (dp vs dp-secure)\n", "MNIST-secure", xs[a], xs[b], ns[b] / ns[a]
	exit bad
}' "$out"
