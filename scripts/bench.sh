#!/usr/bin/env bash
# bench.sh — training-step throughput of privtrain's CNNs and the speed of
# every assembly kernel against its pure-Go fallback, in one run.
#
# 1. Kernels: the benchmarks of internal/vec and model/ name each kernel's
#    level last (go, avx2, avx512, asm). For every kernel the script prints
#    go/asm time ratios, and avx2/avx512 where both exist; it FAILS (exit 1)
#    when an assembly level is not faster than the Go fallback on this
#    machine.
# 2. Peak: BenchmarkFMAPeak runs independent single-precision FMA chains on
#    every core the benchmark uses; the larger of its AVX2 and AVX-512
#    results is the machine's measured f32 peak.
# 3. Steps: examples/second for the TF-Privacy CNN on MNIST-shaped input
#    (1×28×28, batch 256) and CIFAR-shaped input (3×32×32, batch 1024): (a) a
#    non-private step, (b) a DP-SGD step (per-example gradients, norms,
#    clipping, sum, noise, update), the time ratio (b)/(a), and each step's
#    GFLOP/s (MFLOP per example from model's BenchmarkModelStep, forward +
#    backward) and % of the measured peak. Whole optimizer steps from optim/
#    (BenchmarkStep/<method>/<case>) are used when present, else model/'s
#    BenchmarkModelStep.
# 4. It FAILS (exit 1) when the kernel table has no rows or a package printed
#    no benchmark results, instead of printing empty tables.
#
# Usage: scripts/bench.sh [extra go test flags]   (BENCHTIME=3s by default)
# PRIVTRAIN_ASM=off|avx2 limits the kernels of the step benchmarks.
# Other engineers share the cores: run it when `uptime` shows a quiet machine.
set -euo pipefail
cd "$(dirname "$0")/.."

# Each package's output goes to its own file in a private temporary
# directory (never one shared file appended to by several pipelines), and
# the tables are computed from those files only after every run has ended.
dir=$(mktemp -d "${TMPDIR:-/tmp}/privtrain-bench.XXXXXX")
trap 'rm -rf "$dir"' EXIT
echo "# $(date -u +%FT%TZ)  $(uptime)"
echo "# CPU: $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //'); flags: $(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | tr ' ' '\n' | grep -E '^(avx2|fma|avx512f|avx512bw|avx512vl)$' | tr '\n' ' ')"
echo "# PRIVTRAIN_ASM=${PRIVTRAIN_ASM:-<unset>}"
# The packages run one after the other (never concurrently, which would
# halve each one's cores); optim/ is optional.
bt="${BENCHTIME:-3s}"
# run NAME BENCHTIME PKG [flags]: benchmarks of PKG into $dir/NAME.txt, then
# printed; fails if go test fails or printed no benchmark line.
run() {
	local name=$1 t=$2 pkg=$3
	shift 3
	local f="$dir/$name.txt" rc=0
	go test -run '^$' -bench . -benchtime "$t" "$@" "$pkg" >"$f" || rc=$?
	cat "$f"
	if [ "$rc" -ne 0 ]; then
		echo "bench.sh: go test $pkg failed (exit $rc)" >&2
		return 1
	fi
	if ! grep -q '^Benchmark' "$f"; then
		echo "bench.sh: go test $pkg printed no benchmark results" >&2
		return 1
	fi
}
run vec 1s ./internal/vec/ "$@"
run model "$bt" ./model/ "$@"
if ! run optim "$bt" ./optim/ "$@"; then
	echo "bench.sh: warning: optim/ benchmarks failed; using model/ only" >&2
	rm -f "$dir/optim.txt"
fi
echo "# end: $(uptime)"

files=("$dir/vec.txt" "$dir/model.txt")
[ -f "$dir/optim.txt" ] && files+=("$dir/optim.txt")
awk '
# Benchmark lines: name iterations value unit value unit ...
/^Benchmark/ {
	name = $1; sub(/-[0-9]+$/, "", name)
	for (i = 3; i < NF; i++) {
		if ($(i+1) == "ns/op")    ns[name] = $i
		if ($(i+1) == "ex/s")     xs[name] = $i
		if ($(i+1) == "GFLOP/s")  gf[name] = $i
		if ($(i+1) == "MFLOP/ex") mf[name] = $i
	}
	order[++nb] = name
}
function pick(method, c,   n) {
	n = "BenchmarkStep/" method "/" c
	if (n in ns) return n
	n = "BenchmarkModelStep/" method "/" c
	if (n in ns) return n
	return ""
}
END {
	bad = 0; rows = 0
	printf "\n%-44s %12s %12s %12s %10s %10s\n", "kernel", "go ns/op", "avx2/asm", "avx512", "go/asm", "avx2/avx512"
	for (k = 1; k <= nb; k++) {
		n = order[k]
		if (n !~ /\/go$/ || n ~ /^BenchmarkFMAPeak/) continue
		base = n; sub(/\/go$/, "", base)
		a2 = base "/avx2"; if (!(a2 in ns)) a2 = base "/asm"
		a5 = base "/avx512"
		if (!(a2 in ns)) { printf "%-44s %12.0f %12s (no assembly level on this machine)\n", base, ns[n], "-"; continue }
		best = ns[a2]; if ((a5 in ns) && ns[a5] < best) best = ns[a5]
		r = ns[n] / best
		s5 = "-"; r25 = "-"
		if (a5 in ns) { s5 = sprintf("%.0f", ns[a5]); r25 = sprintf("%.2fx", ns[a2] / ns[a5]) }
		flag = ""
		if (ns[a2] >= ns[n] || ((a5 in ns) && ns[a5] >= ns[n])) { flag = "  FAIL: assembly not faster than Go"; bad = 1 }
		printf "%-44s %12.0f %12.0f %12s %9.2fx %10s%s\n", base, ns[n], ns[a2], s5, r, r25, flag
		rows++
	}
	if (rows == 0) { printf "FAIL: the kernel table has no rows (no .../go benchmark with an assembly level in %d benchmark lines)\n", nb; bad = 1 }
	peak = 0
	for (n in gf) if (n ~ /^BenchmarkFMAPeak\// && gf[n] > peak) { peak = gf[n]; pn = n }
	if (peak > 0) printf "\nmeasured f32 FMA peak: %.1f GFLOP/s (%s)\n", peak, pn
	printf "\n%-12s %14s %14s %12s %10s %10s %9s %9s  %s\n", "case", "nonprivate", "dp", "dp/nonpriv", "np GFLOP/s", "dp GFLOP/s", "np %peak", "dp %peak", "source"
	split("MNIST-256 CIFAR-1024", cases, " ")
	for (k = 1; k <= 2; k++) {
		c = cases[k]; a = pick("nonprivate", c); b = pick("dp", c)
		if (a == "" || b == "") { printf "%-12s missing benchmark results\n", c; bad = 1; continue }
		src = a; sub(/\/.*/, "", src)
		m = mf["BenchmarkModelStep/dp/" c]
		ga = xs[a] * m / 1000; gb = xs[b] * m / 1000
		pa = "-"; pb = "-"
		if (peak > 0 && m > 0) { pa = sprintf("%.1f%%", 100 * ga / peak); pb = sprintf("%.1f%%", 100 * gb / peak) }
		printf "%-12s %10.0f ex/s %10.0f ex/s %11.2fx %10.1f %10.1f %9s %9s  %s\n", c, xs[a], xs[b], ns[b] / ns[a], ga, gb, pa, pb, src
	}
	exit bad
}' "${files[@]}"
