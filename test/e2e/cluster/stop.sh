#!/usr/bin/env bash
# stop.sh DIR - stop the cluster that start.sh started in DIR: cancel its jobs, end every slurmd, slurmctld and
# munged by the PIDs recorded under DIR (checked against the process name, never by name alone), then delete the
# network namespaces listed in DIR/netns (and with them the bridge and veth pairs). Safe to run twice.
# Set CLUSTER_KEEP=0 to also delete DIR.
set -euo pipefail
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
DIR=$(realpath -m "${1:?usage: stop.sh DIR}")
log() { echo "[cluster] $*" >&2; }
T0=$(date +%s%N)
# pidof_file FILE NAME: the PID in FILE when it runs a process named NAME (guards against PID reuse)
pidof_file() { local pid; pid=$(cat "$1" 2>/dev/null) && [ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$2" ] && echo "$pid"; }
ctl=$(pidof_file "$DIR/ctl/run/slurmctld.pid" slurmctld || true)

# Let running jobs end through Slurm first, so their slurmstepd exit too.
if [ -n "$ctl" ] && [ -x "$DIR/bin/squeue" ]; then
  jobs=$(timeout 10 "$DIR/bin/squeue" -h -o %i 2>/dev/null | tr '\n' ' ' || true)
  if [ -n "${jobs// /}" ]; then
    log "cancelling jobs: $jobs"
    # shellcheck disable=SC2086
    timeout 10 "$DIR/bin/scancel" $jobs 2>/dev/null || true
    for _ in $(seq 1 40); do [ -z "$(timeout 5 "$DIR/bin/squeue" -h -o %i 2>/dev/null || true)" ] && break; sleep 0.25; done
  fi
fi

pids=""
for f in "$DIR"/nodes/*/run/slurmd.pid; do
  [ -e "$f" ] || continue
  p=$(pidof_file "$f" slurmd || true); [ -n "$p" ] && { kill "$p" || true; pids="$pids $p"; }
done
[ -n "$ctl" ] && { kill "$ctl" || true; pids="$pids $ctl"; }
m=$(pidof_file "$DIR/ctl/run/munged.pid" munged || true); [ -n "$m" ] && { kill "$m" || true; pids="$pids $m"; }
running() { local st; st=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) && [ -n "$st" ] && [ "$st" != Z ]; }
# 10 s for all of them together (not each in turn), then SIGKILL for any left.
for _ in $(seq 1 40); do
  left=""; for pid in $pids; do running "$pid" && left="$left $pid"; done
  [ -z "$left" ] && break; sleep 0.25
done
for pid in $pids; do running "$pid" && { log "pid $pid ignored SIGTERM for 10 s: SIGKILL"; kill -9 "$pid" || true; }; done
# slurmstepd left in a node's namespace (a job step outliving its slurmd): its PID is in the step's spool name only,
# so find processes whose network namespace is one of ours and end them (ours by construction).
if [ -s "$DIR/netns" ]; then
  while read -r ns; do
    [ -n "$ns" ] || continue
    for p in $(ip netns pids "$ns" 2>/dev/null || true); do kill -9 "$p" 2>/dev/null || true; done
    ip netns del "$ns" 2>/dev/null || true
  done < "$DIR/netns"
  rm -f "$DIR/netns"
fi
rm -f "$DIR"/ctl/run/*.pid "$DIR"/nodes/*/run/*.pid
log "stopped in $(( ($(date +%s%N) - T0) / 1000000 )) ms"
[ "${CLUSTER_KEEP:-1}" = 0 ] && rm -rf "$DIR"
exit 0
