#!/usr/bin/env bash
# Checks `trainer report` in a real browser: trains three short runs
# (TSGD+PTR, DP-SGD, PDP-SGD; logistic regression on MNIST, about 20 s),
# writes their report, loads it in headless Chromium and checks that it
# parses with every chart, logs nothing to the console, and renders: the
# screenshot is written to $REPORT_SHOT (default: report.png in the scratch
# directory, which is printed and kept).
#
# It installs nothing: it needs Go and Chromium (/usr/bin/chromium, or
# $CHROMIUM). CI (.ci/run) installs Chromium first when it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
log() { echo "report-check: $*"; }
fail() { echo "report-check: FAIL: $*" >&2; exit 1; }

chrome="${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}"
[ -n "$chrome" ] && [ -x "$chrome" ] || fail "chromium not found (Debian: apt-get install chromium; or set CHROMIUM)"
work="$(mktemp -d /tmp/privtrain-report-check.XXXXXX)"
shot="${REPORT_SHOT:-$work/report.png}"
log "scratch directory $work"

# Headless Chromium, offline and without a profile of its own.
browse() {
  local profile
  profile="$(mktemp -d "$work/profile.XXXXXX")"
  timeout 180 "$chrome" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$profile" --hide-scrollbars "$@"
}

go build -o "$work/trainer" ./cmd/trainer
T="$work/trainer"
common=(--model logreg --dataset mnist --target-epsilon 0)
log "training three short runs"
"$T" train --method tsgd-ptr "${common[@]}" --batch-size 6000 --steps 60 --lr 0.05 --clip 15 --tau 8 --out "$work/tsgd-ptr" >"$work/train.log" 2>&1
"$T" train --method dpsgd "${common[@]}" --batch-size 6000 --steps 60 --lr 0.5 --clip 1 --sigma 1.1 --out "$work/dpsgd" >>"$work/train.log" 2>&1
"$T" train --method pdp-sgd --model logreg --dataset mnist --rounds 2 --round-epochs 0.2 --batch-size 2000 --lr 0.5 --out "$work/pdp-sgd" >>"$work/train.log" 2>&1
"$T" report --out "$work/report.html" --csv "$work/csv" "$work/tsgd-ptr" "$work/dpsgd" "$work/pdp-sgd"

page="$work/report.html"
grep -Eq '<script|src=|href="https?:' "$page" && fail "the page loads scripts or external resources"

# The console detector must see a console message on a page that logs one
# (so that a change in Chromium's log format cannot make the check vacuous).
printf '<!DOCTYPE html><title>t</title><script>console.error("report-check probe")</script>\n' >"$work/probe.html"
browse --enable-logging=stderr --v=0 --dump-dom "file://$work/probe.html" >/dev/null 2>"$work/probe.log" || true
grep -q 'CONSOLE.*report-check probe' "$work/probe.log" || fail "cannot see console messages in Chromium's log ($work/probe.log)"

log "loading the report in $($chrome --version 2>/dev/null | head -1)"
browse --enable-logging=stderr --v=0 --dump-dom "file://$page" >"$work/dom.html" 2>"$work/console.log"
if grep -q 'CONSOLE' "$work/console.log"; then
  grep 'CONSOLE' "$work/console.log" >&2
  fail "console messages while loading the report"
fi
for id in accuracy epsilon ptr-pass-rate trim-level pdp-spend-3 runs release-safe; do
  grep -q "id=\"$id\"" "$work/dom.html" || fail "the rendered page has no element #$id"
done
# Lines of the runs in the parsed DOM: accuracy and ε of all three runs, the
# PTR pass rate (two lines) and F of the PTR run, the PDP spend (budget + 2 rounds).
lines="$(grep -o '<polyline' "$work/dom.html" | wc -l)"
[ "$lines" -ge 12 ] || fail "only $lines lines in the rendered charts, want ≥ 12"
grep -q 'id="operator-only"' "$work/dom.html" && fail "operator-only banner on a release-safe report"
for f in tsgd-ptr/test_accuracy.csv tsgd-ptr/ptr_pass_rate.csv tsgd-ptr/f.csv dpsgd/epsilon.csv pdp-sgd/pdp_group_spend.csv; do
  [ -s "$work/csv/$f" ] || fail "CSV $f missing"
done

browse --window-size=1000,3200 --screenshot="$shot" "file://$page" >/dev/null 2>&1
[ -s "$shot" ] || fail "no screenshot"
size="$(stat -c %s "$shot")"
[ "$size" -gt 50000 ] || fail "screenshot $shot is only $size bytes (a blank page?)"
log "ok: $lines chart lines, no console messages; screenshot $shot ($size bytes)"
