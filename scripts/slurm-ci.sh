#!/usr/bin/env bash
# Runs a tiny experiment grid on a real single-node Slurm and checks the
# collected table. Installs Debian's slurmctld, slurmd, slurm-client and
# munge when missing, starts munged (if none answers), slurmctld and slurmd on
# this host with scripts/slurm/slurm.conf.in, writes the grid's job arrays
# with `trainer experiment ptr-table --slurm`, submits them and the dependent
# collect job with `sbatch --wait`, checks table.md and cells.csv, resubmits
# one array to check that finished cells are reused, and stops the daemons it
# started. Needs root. scripts/test.sh runs it when CI=true; by hand:
#   sudo scripts/slurm-ci.sh            (keeps its scratch directory on failure)
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$(pwd)"
log() { echo "slurm-ci: $*"; }
if [ "$(id -u)" != 0 ]; then
  echo "slurm-ci: must run as root (it starts slurmctld, slurmd and munged)" >&2
  exit 1
fi
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v sbatch >/dev/null || ! command -v munged >/dev/null; then
  log "installing slurmctld slurmd slurm-client munge (apt)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends slurmctld slurmd slurm-client munge >/dev/null
fi

work="$(mktemp -d /tmp/privtrain-slurm-ci.XXXXXX)"
state="$work/state"
mkdir -p "$state/ctld" "$state/d"
pids=()
cleanup() {
  rc=$?
  for p in "${pids[@]}"; do
    kill "$p" 2>/dev/null || true
  done
  for p in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.2; done
    kill -9 "$p" 2>/dev/null || true
  done
  if [ "$rc" = 0 ]; then
    rm -rf "$work"
  else
    log "FAILED (exit $rc); logs kept in $work"
    for f in "$work/munged.log" "$state/slurmctld.log" "$state/slurmd.log"; do
      [ -f "$f" ] && { echo "--- tail $f"; tail -n 30 "$f"; }
    done
  fi
  exit "$rc"
}
trap cleanup EXIT

# munge: reuse a running munged, else start one as the munge user.
if munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
  log "munged already running"
else
  if [ ! -s /etc/munge/munge.key ]; then
    log "creating /etc/munge/munge.key"
    dd if=/dev/urandom of=/etc/munge/munge.key bs=1 count=1024 status=none
  fi
  chown munge:munge /etc/munge/munge.key
  chmod 400 /etc/munge/munge.key
  mkdir -p /run/munge /var/lib/munge /var/log/munge
  chown munge:munge /run/munge /var/lib/munge /var/log/munge
  chmod 755 /run/munge
  # setpriv execs munged as the munge user (no intermediate process), so $!
  # is munged itself and the cleanup stops exactly it.
  setpriv --reuid=munge --regid=munge --init-groups /usr/sbin/munged --foreground >"$work/munged.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 50); do munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.2; done
  munge -n | unmunge >/dev/null
  log "started munged (pid ${pids[-1]})"
fi

# Slurm on this host: one node with this machine's CPUs (at least 2, the
# tasks' request) and 3/4 of its memory.
host="$(hostname -s 2>/dev/null || cut -d. -f1 /proc/sys/kernel/hostname)"
cpus="$(nproc)"; [ "$cpus" -lt 2 ] && cpus=2
mem=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 * 3 / 4 ))
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null || echo "$1"; }
export SLURM_CONF="$work/slurm.conf"
sed -e "s|@HOST@|$host|g" -e "s|@STATE@|$state|g" -e "s|@CPUS@|$cpus|g" -e "s|@MEM@|$mem|g" \
    -e "s|@CTLD_PORT@|$(free_port 6817)|g" -e "s|@D_PORT@|$(free_port 6818)|g" \
    scripts/slurm/slurm.conf.in > "$SLURM_CONF"
slurmctld -D -c -f "$SLURM_CONF" >"$state/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" -N "$host" >"$state/slurmd.out" 2>&1 &
pids+=($!)
log "started slurmctld and slurmd on $host ($cpus CPUs, $mem MB), config $SLURM_CONF"
for _ in $(seq 60); do
  st="$(sinfo -h -n "$host" -o %t 2>/dev/null || true)"
  [ "$st" = idle ] && break
  sleep 1
done
if [ "$st" != idle ]; then
  echo "slurm-ci: node $host is '${st:-unreachable}', not idle" >&2
  scontrol show node "$host" >&2 || true
  exit 1
fi
sinfo

log "building the trainer"
go build -o "$work/trainer" ./cmd/trainer
out="$work/grid"
# 8 cells: ε = 3, no corruption and 10% label flips, TSGD+PTR and DP-SGD,
# seeds 1 and 2, 40 steps each; two job arrays (one per method).
"$work/trainer" experiment ptr-table --epsilon 3 --corruptions none:0,label-flip:0.1 \
  --methods tsgd-ptr,dpsgd --seeds 1,2 --steps 40 --out "$out" --slurm --slurm-concurrency 2
"$work/trainer" experiment ptr-table --epsilon 3 --corruptions none:0,label-flip:0.1 \
  --methods tsgd-ptr,dpsgd --seeds 1,2 --steps 40 --out "$out" --plan
export PRIVTRAIN_PROGRESS_SECONDS=2
start=$(date +%s)
log "submitting (sbatch --wait on the collect job)"
bash "$out/slurm/submit.sh" --wait
log "collect job finished after $(( $(date +%s) - start )) s"
for f in "$out"/slurm/logs/*.log; do
  echo "--- $(basename "$f")"
  cat "$f"
done

# Checks: every cell finished, four rows of n = 2, the paper's numbers beside
# them, accuracies in (0, 100], ε spent ≤ 3.
test -s "$out/table.md"
cat "$out/table.md"
rows=$(grep -c '^| mnist | 3 | .* | 2/2 |' "$out/table.md")
[ "$rows" = 4 ] || { echo "slurm-ci: want 4 rows with n = 2/2, got $rows" >&2; exit 1; }
grep -q '^| mnist | 3 | label-flip | 0.1 | tsgd-ptr | .* | 2/2 | 93.29 |' "$out/table.md" ||
  { echo "slurm-ci: paper number missing" >&2; exit 1; }
if grep -q Missing "$out/table.md"; then echo "slurm-ci: cells missing" >&2; exit 1; fi
# The PTR pass column: a rate (0% included) for TSGD+PTR rows, – for DP-SGD.
ptr_rows=$(grep -c '^| mnist | 3 | .* | tsgd-ptr | .* | [0-9.]*% | [0-9]* |$' "$out/table.md")
[ "$ptr_rows" = 2 ] || { echo "slurm-ci: want the PTR pass rate in both tsgd-ptr rows, got $ptr_rows" >&2; exit 1; }
dpsgd_rows=$(grep -c '^| mnist | 3 | .* | dpsgd .* | – | [0-9]* |$' "$out/table.md")
[ "$dpsgd_rows" = 2 ] || { echo "slurm-ci: want – in the PTR pass column of both dpsgd rows, got $dpsgd_rows" >&2; exit 1; }
cells=$(tail -n +2 "$out/cells.csv" | wc -l)
[ "$cells" = 8 ] || { echo "slurm-ci: $cells finished cells, want 8" >&2; exit 1; }
awk -F, 'NR > 1 && !($9 > 0 && $9 <= 1 && $10 > 0 && $10 <= 3 && $11 == 40) { bad = 1; print "bad cell: " $0 } END { exit bad }' "$out/cells.csv"
ntasks=$(ls "$out"/slurm/logs/ptr-table-*-*_*.log | wc -l)
[ "$ntasks" = 8 ] || { echo "slurm-ci: $ntasks array-task logs, want 8" >&2; exit 1; }

# Requeue safety: resubmitting an array reruns nothing that has finished.
before=$(stat -c %Y "$out"/cells/*/summary.json | sort | md5sum)
sbatch --wait "$out/slurm/array-dpsgd.sbatch"
after=$(stat -c %Y "$out"/cells/*/summary.json | sort | md5sum)
[ "$before" = "$after" ] || { echo "slurm-ci: resubmission retrained finished cells" >&2; exit 1; }
log "resubmitted array reused all finished cells"
log "OK"
