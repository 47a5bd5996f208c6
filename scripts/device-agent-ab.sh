#!/usr/bin/env bash
# The agent before and after a change, on a GPU node: installs .device/gdrgate_*_amd64.deb, then answers ROUNDS
# (default 200) Prologs through /usr/libexec/gdrgate/prolog.sh with the installed agent ("new") and with an older
# build's gdrgate.cjs ($OLD, default .device/old/gdrgate.cjs, taken from an older .deb with dpkg -x) run by the same
# Node ("old"), three blocks each, alternating; then once more with a V8 profile kept in $OUT/agent. Writes
# $OUT/agent-exp.txt: the agent's CPU per Prolog, its durationMs and the wrapper's wall time (p10/p50/p90). GAP
# (seconds, e.g. 0.03): a pause after each Prolog, as between jobs (without it each Prolog's request may wait for
# what the agent does after answering the one before). FLAGS_NEW / FLAGS_OLD: each agent's Node flags (default the
# package unit's, --max-semi-space-size=16 --expose-gc); OLD=$G with other FLAGS_OLD compares flags on one build.
set -u
. "${0%/*}/device-lib.sh"
as_slurmd "$0" "$@"
begin agent-exp.txt
dpkg -i .device/gdrgate_*_amd64.deb >>"$P" 2>&1
N=/usr/lib/gdrgate/node; G=/usr/lib/gdrgate/gdrgate.cjs; L=/usr/libexec/gdrgate
W=/tmp/gdr-p && rm -rf $W && mkdir -p -m 755 $W
live_gate "$W" "$P"
job=3000
slurm() { job=$((job + 1)); env -i SLURMD_NODENAME=gpu SLURM_JOB_ID=$job SLURM_JOB_UID=65534 SLURM_JOB_GID=65534 "$@"; }
mkdir -p -m 700 /run/gdrgate-agent
run_agent() { # NAME CJS ARGS...
  local name=$1 cjs=$2; shift 2
  setsid $N "$@" $cjs agent --config /etc/gdrgate/config.json --dir /run/gdrgate-agent 2>>$W/agent.err &
  for i in $(seq 100); do [ -s /run/gdrgate-agent/agent.pid ] && break; read -r -t 0.1 _ <> <(:); done
  for k in $(seq 10); do slurm $L/prolog.sh >/dev/null 2>&1; done
  local a0=$(wc -l </var/log/gdrgate/gdrgate.log)
  local pid=$(cat /run/gdrgate-agent/agent.pid)
  local c0=$(awk '{print $14+$15}' /proc/$pid/stat)
  for k in $(seq ${ROUNDS:-200}); do us slurm $L/prolog.sh; echo "$name $T"; [ -z "${GAP:-}" ] || read -r -t "$GAP" _ <> <(:); done >>"$OUT/times.txt"
  local c1=$(awk '{print $14+$15}' /proc/$pid/stat)
  echo "$name: cpu ticks per prolog x100: $(( (c1 - c0) * 100 / ${ROUNDS:-200} )); rss $(grep VmHWM /proc/$pid/status)" >>"$P"
  tail -n +$((a0 + 1)) /var/log/gdrgate/gdrgate.log | grep '"startup":"agent"' | grep -o '"durationMs":[0-9]*' | sort | uniq -c | sed "s/^/$name /" >>"$P"
  kill -INT $pid; sleep 1.5
}
O=${OLD:-$PWD/.device/old/gdrgate.cjs}
UNIT='--max-semi-space-size=16 --expose-gc'
echo "new: $G ${FLAGS_NEW:-$UNIT}; old: $O ${FLAGS_OLD:-$UNIT}" >>"$P"
for r in 1 2 3; do
  run_agent new $G ${FLAGS_NEW:-$UNIT}
  run_agent old $O ${FLAGS_OLD:-$UNIT}
done
run_agent prof $G --cpu-prof --cpu-prof-dir=$OUT/agent --cpu-prof-interval 50 ${FLAGS_NEW:-$UNIT}
$N -e '
const t = require("fs").readFileSync(process.argv[1], "utf8");
const by = {}; for (const m of t.matchAll(/^(\S+) (\d+)$/gm)) (by[m[1]] ??= []).push(Number(m[2]) / 1000);
const q = (v, p) => [...v].sort((a, b) => a - b)[Math.min(v.length - 1, Math.floor(v.length * p))];
for (const [k, v] of Object.entries(by)) console.log(`${k.padEnd(15)} p50 ${q(v, 0.5).toFixed(2).padStart(7)} ms  p10 ${q(v, 0.1).toFixed(2).padStart(7)}  p90 ${q(v, 0.9).toFixed(2).padStart(7)}  n=${v.length}`);
' "$OUT/times.txt" >>"$P"
ls -la $OUT/agent >>"$P"
dpkg --purge gdrgate >/dev/null 2>&1
cat "$P"
