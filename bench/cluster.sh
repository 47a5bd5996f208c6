#!/usr/bin/env bash
# npm run bench:cluster - the gate on the 4-node cluster of test/e2e/cluster (as root; npm run build first).
# Every node runs `gdrgate agent` in its own namespaces (as examples/systemd/gdrgate-agent.service starts it) and
# slurm/prolog.sh as its Prolog, asking that agent. Then:
#   1. JOBS short jobs (one array, default 200) across the cluster: all complete, each Prolog answered by the agent;
#   2. the Prolog's added job-launch latency: the wall time of `srun -N4 true` with Prolog= set vs unset
#      (scontrol reconfigure between), alternating in blocks of BLOCK runs, ROUNDS rounds, in one run.
# Prints medians and the difference. Environment: JOBS=200 ROUNDS=5 BLOCK=6 KEEP=1 (keep the work directory).
set -euo pipefail
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
REPO=$(realpath "$(dirname "$(realpath "$0")")/..")
NODE_BIN=$(command -v node)
CLI=$REPO/dist/cli.js
JOBS=${JOBS:-200} ROUNDS=${ROUNDS:-5} BLOCK=${BLOCK:-6}
NODES=(node1 node2 node3 node4)
[ "$(id -u)" = 0 ] || { echo "bench:cluster: run as root (it makes network namespaces and starts Slurm)" >&2; exit 2; }
[ -r "$REPO/dist/gate.blob" ] || { echo "bench:cluster: build first (npm run build)" >&2; exit 2; }
WORK=$(mktemp -d /tmp/gdrgate-bench-cluster-XXXXXX)
chmod 0755 "$WORK"
DIR=$WORK/c
AGENTS=()
cleanup() {
  for p in "${AGENTS[@]}"; do kill "$p" 2>/dev/null || true; done
  /bin/bash "$REPO/test/e2e/cluster/stop.sh" "$DIR" 2>/dev/null || true
  [ "${KEEP:-0}" = 1 ] && echo "kept: $WORK" >&2 || rm -rf "$WORK"
}
trap cleanup EXIT
now() { date +%s%N; }
ms() { echo $(( ($2 - $1) / 1000000 )); }
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

# Trees, baseline, one config per node; the Prolog's .conf names DIR/node/..., which each node's mount namespace
# binds to its own DIR/nodes/<name>.
mkdir -p "$WORK/trees"
for n in "${NODES[@]}"; do cp -a "$REPO/examples/h200-vm" "$WORK/trees/$n"; done
"$NODE_BIN" "$CLI" baseline capture --root "$WORK/trees/node1" --class cluster --match 'node*' --platform virtualized > "$WORK/baseline.json"
for n in "${NODES[@]}"; do
  d=$DIR/nodes/$n
  mkdir -p "$d" && install -d -m 0700 "$d/agent"
  printf '{"baseline":"%s","root":"%s","scontrol":"/usr/bin/scontrol","logFile":"%s","stateDir":"%s"}\n' \
    "$WORK/baseline.json" "$WORK/trees/$n" "$d/gdrgate.log" "$d/gate-run" > "$d/gdrgate.json"
done
cp "$REPO/slurm/prolog.sh" "$WORK/gate-prolog.sh"; chmod 0755 "$WORK/gate-prolog.sh"
printf 'NODE=%s\nCLI=%s\nCONFIG=%s\nAGENT=%s\n' "$NODE_BIN" "$CLI" "$DIR/node/gdrgate.json" "$DIR/node/agent" > "$WORK/gate-prolog.conf"

t0=$(now)
GATE_PROLOG=$WORK/gate-prolog.sh CLUSTER_PORT=8110 bash "$REPO/test/e2e/cluster/start.sh" "$DIR" >/dev/null
echo "cluster up in $(ms "$t0" "$(now)") ms"
for n in "${NODES[@]}"; do
  # In the node's own namespaces (its slurmd's), with the paths the Prolog names there.
  nsenter -t "$(cat "$DIR/nodes/$n/run/slurmd.pid")" -n -m -u -- \
    "$NODE_BIN" --max-semi-space-size=16 --expose-gc "$CLI" agent --config "$DIR/node/gdrgate.json" --dir "$DIR/node/agent" >/dev/null 2>&1 &
  AGENTS+=($!)
done
for n in "${NODES[@]}"; do
  for _ in $(seq 1 250); do [ -e "$DIR/nodes/$n/agent/agent.pid" ] && break; sleep 0.02; done
  [ -e "$DIR/nodes/$n/agent/agent.pid" ] || { echo "agent on $n did not start" >&2; exit 1; }
done
S=$DIR/bin

# 1. JOBS short jobs.
t0=$(now)
id=$("$S/sbatch" --parsable -o /dev/null --array=1-"$JOBS" --wrap /bin/true)
for _ in $(seq 1 1200); do [ -z "$("$S/squeue" -h -j "$id" -o %i 2>/dev/null)" ] && break; sleep 0.25; done
done_ms=$(ms "$t0" "$(now)")
completed=$("$S/scontrol" show job "$id" -o | grep -c 'JobState=COMPLETED' || true)
answered=$(cat "$DIR"/nodes/*/gdrgate.log 2>/dev/null | grep '"msg":"gdrgate run"' | grep -c '"startup":"agent"' || true)
runs=$(cat "$DIR"/nodes/*/gdrgate.log 2>/dev/null | grep -c '"msg":"gdrgate run"' || true)
per=$(for n in "${NODES[@]}"; do printf '%s=%s ' "$n" "$(grep -c '"msg":"gdrgate run"' "$DIR/nodes/$n/gdrgate.log" 2>/dev/null || echo 0)"; done)
echo "$JOBS jobs: $completed completed in $done_ms ms; prologs $runs ($per), answered by the agent: $answered"

# 2. srun -N4 true, with and without Prolog=, alternating.
set_prolog() {
  if [ "$1" = on ]; then sed -i "s|^#Prolog=|Prolog=|" "$DIR/etc/slurm.conf"; else sed -i "s|^Prolog=|#Prolog=|" "$DIR/etc/slurm.conf"; fi
  "$S/scontrol" reconfigure
  idle
}
idle() { for _ in $(seq 1 120); do [ "$("$S/sinfo" -h -N -o %T | sort -u)" = idle ] && return 0; sleep 0.25; done; echo "nodes not idle" >&2; return 1; }
: > "$WORK/on.ms"; : > "$WORK/off.ms"
for r in $(seq 1 "$ROUNDS"); do
  for mode in on off; do
    set_prolog "$mode"
    for _ in $(seq 1 "$BLOCK"); do
      idle; t0=$(now); "$S/srun" -N4 /bin/true; ms "$t0" "$(now)" >> "$WORK/$mode.ms"
    done
  done
done
on=$(median < "$WORK/on.ms") off=$(median < "$WORK/off.ms")
echo "srun -N4 true, p50 of $((ROUNDS * BLOCK)) each: with the gate (agent) $on ms, Prolog= unset $off ms, added $(awk -v a="$on" -v b="$off" 'BEGIN {print a - b}') ms"
echo "  with:    $(tr '\n' ' ' < "$WORK/on.ms")"
echo "  without: $(tr '\n' ' ' < "$WORK/off.ms")"
echo "agent answers in this phase: $(( $(cat "$DIR"/nodes/*/gdrgate.log | grep '"msg":"gdrgate run"' | grep -c '"startup":"agent"') - answered ))"
