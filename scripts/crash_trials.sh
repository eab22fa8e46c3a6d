#!/usr/bin/env bash
# Crash/resume trials: start short runs, interrupt them at random moments
# with SIGKILL, SIGINT or SIGTERM (possibly several times), resume until they
# finish, and compare the final model's SHA-256 and the metrics log with an
# uninterrupted run of the same configuration.
#
# Every run (reference and trials) gets the same public seed (--seed 1) and
# the same secret noise key (--noise-key-file, a fresh random key per
# invocation, mode 0600): without them each run would draw its own secret
# noise and no two could be compared. Resumes pass the key too, which also
# checks that the run's private/noise.key is that key.
#
# usage: scripts/crash_trials.sh [--short] [TRIALS_PER_CASE] [WORKDIR]
#   --short: two small logistic-regression cases, one trial each (CI).
# Exit status: 0 only if every trial finished with a bit-identical model and
# metrics.jsonl; 1 otherwise (or if a reference run fails).
# Keep it short on shared machines: every run is tens of steps. Each line
# lists the signals sent and the checkpoint's next step after each stop.
set -u
short=0
if [ "${1:-}" = --short ]; then short=1; shift; fi
TRIALS=${1:-6}
tmp=0
if [ -z "${2:-}" ]; then tmp=1; fi
WORK=${2:-$(mktemp -d)}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN="$WORK/trainer"
(cd "$ROOT" && go build -o "$BIN" ./cmd/trainer) || exit 1
KEY="$WORK/noise.key"
(umask 077 && head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$KEY") || exit 1
common="--seed 1 --noise-key-file $KEY"

if [ $short = 1 ]; then
  TRIALS=${1:-1}
  cases=(
    "dpsgd-logreg|--method dpsgd --model logreg --target-epsilon 0 --steps 400 --checkpoint-every 25"
    "ptr-logreg|--method tsgd-ptr --model logreg --target-epsilon 0 --steps 300 --checkpoint-every 20"
  )
else
  cases=(
    "dpsgd-cnn|--method dpsgd --steps 40 --checkpoint-every 4"
    "ptr-cnn|--method tsgd-ptr --target-epsilon 0 --steps 30 --checkpoint-every 3"
    "dpsgd-budget-cnn|--method dpsgd --target-epsilon 0.75 --checkpoint-every 5"
    "pdp-sgd-cnn|--method pdp-sgd --steps 24 --rounds 3 --checkpoint-every 2"
  )
fi
sigs=(KILL INT TERM)
total=0; same=0; different=0; failed=0
for c in "${cases[@]}"; do
  name=${c%%|*}; args="${c#*|} $common"
  ref="$WORK/$name-ref"
  t0=$(date +%s.%N)
  "$BIN" train $args --out "$ref" >/dev/null 2>"$ref.err" || { echo "$name: reference run failed: $(tail -1 "$ref.err")"; exit 1; }
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
        "$BIN" train --resume --out "$out" --noise-key-file "$KEY" >/dev/null 2>"$out.err" & pid=$!
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
      if [ ! -f "$out/config.json" ]; then first=1; fi # stopped before the run existed
    done
    total=$((total+1))
    if [ -f "$out/summary.json" ] && [ -f "$out/model.bin" ]; then
      got=$(sha256sum "$out/model.bin" | cut -d' ' -f1)
      gotm=$(sha256sum "$out/metrics.jsonl" | cut -d' ' -f1)
      if [ "$got" = "$want" ] && [ "$gotm" = "$wantm" ]; then same=$((same+1)); r=identical
      elif [ "$got" = "$want" ]; then different=$((different+1)); r="DIFFERENT metrics.jsonl (same model)"
      else different=$((different+1)); r="DIFFERENT model"; fi
    else
      failed=$((failed+1)); r="DID NOT FINISH: $(tail -1 "$out.err")"
    fi
    echo "$name trial $t (signals:${kills:- none}; checkpoint step after each:${steps:- none}): $r"
  done
done
echo "trials: $total, bit-identical (model and metrics): $same, different: $different, unfinished: $failed"
if [ $same != $total ]; then echo "work directory kept: $WORK"; exit 1; fi
if [ $tmp = 1 ]; then rm -rf "$WORK"; fi
