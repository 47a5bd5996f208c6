# Sourced by the scripts/device-*.sh runs on a GPU node (not run alone).
# as_slurmd "$0" "$@": slurmd forks and execs a Prolog, so a Prolog's parent is named slurmd (the agent judges only
# for such a process). The calling script re-executes itself as a copy of bash named slurmd, so that every command
# it times is started as slurmd starts a Prolog, with no process between: the floors (bash -c exit, node -e 0) alike.
as_slurmd() {
  [ "$(cat /proc/$$/comm)" = slurmd ] && return 0
  mkdir -p -m 755 /tmp/gdr-slurmd && cp /bin/bash /tmp/gdr-slurmd/slurmd && exec /tmp/gdr-slurmd/slurmd "$@"
}
# live_gate W LOG: a known-good baseline of this node, a config, and a scontrol recording its calls in W/scontrol.calls
# (the node has no Slurm); what the capture says on stderr goes to LOG.
live_gate() {
  printf '#!/bin/sh\necho "$*" >> %s/scontrol.calls\n' "$1" >/usr/local/sbin/gdrgate-test-scontrol && chmod 755 /usr/local/sbin/gdrgate-test-scontrol
  /usr/sbin/gdrgate baseline capture --class live --match '*' --allow-empty >/etc/gdrgate/baseline.json 2>>"$2"
  printf '{"baseline":"/etc/gdrgate/baseline.json","scontrol":"/usr/local/sbin/gdrgate-test-scontrol","logFile":"/var/log/gdrgate/gdrgate.log","stateDir":"/run/gdrgate"}\n' >/etc/gdrgate/config.json
  mkdir -p -m 755 /run/gdrgate
}
# us CMD...: runs CMD in this shell's child, its output dropped; T is the wall time in microseconds ($EPOCHREALTIME).
us() { local s=$EPOCHREALTIME; "$@" >/dev/null 2>&1; local e=$EPOCHREALTIME; T=$((${e/./} - ${s/./})); }
# begin FILE: OUT (default /tmp/gdrgate-device) made, P=$OUT/FILE emptied and headed with the time, kernel and CPU.
begin() {
  OUT=${OUT:-/tmp/gdrgate-device}
  mkdir -p "$OUT"
  P=$OUT/$1
  { echo "== $(date -u +%FT%TZ) $(uname -r) $(nproc) CPUs; $(grep -m1 'model name' /proc/cpuinfo)"; grep -m1 -o 'avx512[a-z]*' /proc/cpuinfo | head -1; } >"$P"
}
# start_agent W [FLAG...]: the agent as the packaged unit starts it (Node's FLAGs first), on /etc/gdrgate/config.json
# and /run/gdrgate-agent, its stderr in W/agent.err; returns once it has written its pid file (at most 10 s).
start_agent() {
  local w=$1 i
  shift
  mkdir -p -m 700 /run/gdrgate-agent
  setsid /usr/lib/gdrgate/node --max-semi-space-size=16 --expose-gc "$@" /usr/lib/gdrgate/gdrgate.cjs agent --config /etc/gdrgate/config.json --dir /run/gdrgate-agent 2>>"$w/agent.err" &
  for i in $(seq 100); do [ -s /run/gdrgate-agent/agent.pid ] && break; read -r -t 0.1 _ <> <(:); done
}
