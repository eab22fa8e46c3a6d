#!/usr/bin/env bash
# Crash/resume trials: start short runs, interrupt them at random moments
# with SIGKILL, SIGINT or SIGTERM (possibly several times), resume until they
# finish, and compare the final model's SHA-256 (and the metrics log) with an
# uninterrupted run of the same configuration.
#
# usage: scripts/crash_trials.sh [TRIALS_PER_CASE] [WORKDIR]
# Keep it short on shared machines: every run is tens of steps. Each line
# lists the signals sent and the checkpoint's next step after each stop.
set -u
TRIALS=${1:-6}
WORK=${2:-$(mktemp -d)}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN="$WORK/trainer"
(cd "$ROOT" && go build -o "$BIN" ./cmd/trainer) || exit 1

cases=(
  "dpsgd-cnn|--method dpsgd --steps 40 --checkpoint-every 4"
  "ptr-cnn|--method tsgd-ptr --target-epsilon 0 --steps 30 --checkpoint-every 3"
  "dpsgd-budget-cnn|--method dpsgd --target-epsilon 0.75 --checkpoint-every 5"
  "pdp-sgd-cnn|--method pdp-sgd --steps 24 --rounds 3 --checkpoint-every 2"
)
sigs=(KILL INT TERM)
total=0; same=0; failed=0
for c in "${cases[@]}"; do
  name=${c%%|*}; args=${c#*|}
  ref="$WORK/$name-ref"
  t0=$(date +%s.%N)
  "$BIN" train $args --out "$ref" >/dev/null 2>&1 || { echo "$name: reference run failed"; exit 1; }
  dur=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{print b-a}')
  want=$(sha256sum "$ref/model.bin" | cut -d' ' -f1)
  wantm=$(sha256sum "$ref/metrics.jsonl" | cut -d' ' -f1)
  for t in $(seq 1 "$TRIALS"); do
    out="$WORK/$name-$t"
    kills=""
    steps=""
    first=1
    for attempt in 1 2 3 4 5 6 7 8; do
      if [ $first = 1 ]; then
        "$BIN" train $args --out "$out" >/dev/null 2>"$out.err" & pid=$!
      else
        "$BIN" train --resume --out "$out" >/dev/null 2>"$out.err" & pid=$!
      fi
      first=0
      if [ $attempt -le 3 ]; then
        # A random moment in the second quarter to the end of a run's
        # duration: mostly during training, sometimes during start-up.
        sleep "$(awk -v d="$dur" -v r=$RANDOM 'BEGIN{printf "%.2f", d*(0.25+0.75*r/32767)}')"
        sig=${sigs[$((RANDOM % 3))]}
        if kill -0 $pid 2>/dev/null; then kill -s $sig $pid 2>/dev/null && kills="$kills $sig"; fi
      fi
      wait $pid; rc=$?
      if [ $rc = 0 ] && [ -f "$out/summary.json" ]; then break; fi
      # Where the interruption left the checkpoint (next step), or "-" if
      # the process died before writing one.
      at=$(sed -n 's/^  "next_step": \([0-9]*\),$/\1/p' "$out/state.json" 2>/dev/null)
      steps="$steps ${at:--}"
      if [ ! -d "$out" ]; then first=1; fi # killed before the directory existed
      if [ ! -f "$out/config.json" ]; then first=1; fi
    done
    total=$((total+1))
    if [ -f "$out/model.bin" ]; then
      got=$(sha256sum "$out/model.bin" | cut -d' ' -f1)
      gotm=$(sha256sum "$out/metrics.jsonl" | cut -d' ' -f1)
      if [ "$got" = "$want" ] && [ "$gotm" = "$wantm" ]; then same=$((same+1)); r=identical
      elif [ "$got" = "$want" ]; then same=$((same+1)); r="identical model, metrics differ"
      else r=DIFFERENT; fi
    else
      failed=$((failed+1)); r="DID NOT FINISH: $(tail -1 "$out.err")"
    fi
    echo "$name trial $t (signals:${kills:- none}; checkpoint step after each:${steps:- none}): $r"
  done
done
echo "trials: $total, bit-identical final models: $same, unfinished: $failed"
