#!/usr/bin/env bash
# Sweep of bad inputs (issue 25): each case must be refused at once with
# exit 2 and one line on stderr, without writing a run directory. Prints
# one line per case and the count per class; exits 1 unless every case is
# a clean refusal.
#
# usage: scripts/bad_inputs.sh [WORKDIR]
# Classes: refused (exit 2, one stderr line), accepted (exit 0), error
# (other exit), multi-line (exit 2, several stderr lines), slow (> 20 s,
# killed), panic.
set -u
W=${1:-$(mktemp -d)}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN="$W/trainer"
(cd "$ROOT" && go build -o "$BIN" ./cmd/trainer) || exit 1
cd "$W" || exit 1
mkdir -p home && echo mine > home/notes.txt
mkdir -p symrun && ln -sfn "$W/home" symrun/private
: > empty.json; echo null > null.json; echo '{"steps": 2, "steps": 3}' > dup.json
echo '[{"mech":"gaussian","Sigma":1,"q":0.01,"steps":10}]' > hcase.json
rm -f fifo && mkfifo fifo
(umask 022 && echo 9f3c1e77a2b04d58c6e1f0a9b3d7254e81c6fa03d92e47b5a1086c3fe59d2b74 > openkey)
(umask 077 && printf '%064d' 0 > zerokey)
: > afile
T="train --model logreg --steps 2 --target-epsilon 0 --out $W/r"
G="experiment ptr-table --plan --out $W/g"
S="experiment ptr-table --methods dpsgd --seeds 1 --slurm --trainer /bin/sh"
GAUSS="--mech gaussian --sigma 1 --q 0.01 --delta 1e-5"
cases=(
  # 1: Slurm scripts
  "$S --out $W/s1 --slurm-partition \$'cpu\\n#SBATCH --array=0'"
  "$S --out \$'$W/my out/x\\ny'"
  "$S --out $W/s3 --slurm-option \$'--qos=a\\ntouch PWNED'"
  "$S --out $W/s4 --slurm-option qos=low"
  "$S --out $W/s5 --slurm-account \$'a\\rb'"
  "$S --out $W/s6 --slurm-partition hetjob"
  "$S --out $W/s7 --trainer /nonexistent"
  # 2: seeds and keys
  "$T --method dpsgd --noise-key-file openkey"
  "$T --method dpsgd --noise-key-file zerokey"
  "$T --method nonprivate --noise-key-file openkey"
  "$T --method dpsgd --noise-key-file fifo"
  # 3: bounded work
  "train --method dpsgd --steps 2 --target-epsilon 1e308 --out $W/r"
  "$G --seeds 1-100000000"
  "account epsilon $GAUSS --steps 1000000000000000000"
  "account sigma --target-epsilon 1e308 --delta 1e-5 --q 0.01 --steps 100"
  "account epsilon --history fifo --delta 1e-5"
  # 5: overflowing values
  "$T --method dpsgd --sigma 1e308"
  "$T --method dpsgd --sigma 1e300"
  "$T --method dpsgd --clip 1e308"
  "$T --method dpsgd --lr 1e308"
  "$T --method tsgd-ptr --lr-fail 1e308"
  # 6: silent acceptances
  "$T --checkpoint-every -1"
  "$T --eval-every -1"
  "$T --method pdp-sgd --round-epochs -1"
  "$T --method dpsgd --accountant pld --allow-unproven"
  "$T --method dpsgd --accountant pld --conversion mironov"
  "$T --preset ptr-mnist --preset ptr-mnist"
  "$T --config dup.json"
  "$T --config null.json"
  "account epsilon $GAUSS --steps 10 --sigma1 2"
  "account epsilon $GAUSS --steps 10 --tau 0.5"
  "account rdp --mech laplace --b 1 --sigma 1"
  "account epsilon --history hcase.json --delta 1e-5"
  "audit mechanism --rule sum --confidence 0"
  "audit mechanism --rule sum --dim 0"
  "audit mechanism --rule sum --workers -1"
  "audit run --canaries 0 --method dpsgd --steps 2"
  "$G --methods ''"
  "$G --dpsgd-sigma NaN"
  "$G --accountant pld --methods tsgd-ptr"
  "rgm-gd --figure --nodes 4 --out $W/rgm"
  "rgm-gd --figure --method clip --out $W/rgm"
  "help bogus"
  "--version extra"
  # 7: run directory
  "$T --method dpsgd --out $W/home"
  "$T --method dpsgd --out $W/symrun"
  "rgm-gd --out $W/afile --nodes 1000000"
  # 9: messages
  "$T --config empty.json"
)
declare -A count
for c in "${cases[@]}"; do
  rm -rf "$W/r"
  start=$(date +%s.%N)
  eval "timeout 20 \"$BIN\" $c" >out.txt 2>err.txt </dev/null; rc=$?
  secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}')
  lines=$(grep -c '' err.txt)
  if grep -q '^panic:\|^goroutine ' err.txt; then class=panic
  elif [ $rc = 124 ]; then class=slow
  elif [ $rc = 0 ]; then class=accepted
  elif [ $rc = 2 ] && [ "$lines" -le 1 ]; then class=refused
  elif [ $rc = 2 ]; then class=multi-line
  else class=error; fi
  if [ -e "$W/r" ] || [ -e "$W/PWNED" ] || [ -e "$W/home/config.json" ] || [ -n "$(ls -A "$W/home" | grep -v notes.txt)" ]; then class="$class+wrote"; fi
  count[$class]=$(( ${count[$class]:-0} + 1 ))
  printf '%-10s %5ss  trainer %s\n           %s\n' "$class" "$secs" "$c" "$(head -c 200 err.txt | head -1)"
done
echo "cases: ${#cases[@]}"
ok=1
for k in "${!count[@]}"; do echo "  $k: ${count[$k]}"; [ "$k" = refused ] || ok=0; done
[ $ok = 1 ]
