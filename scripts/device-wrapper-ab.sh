#!/usr/bin/env bash
# Two Prolog wrappers against one agent, on a GPU node: installs .device/gdrgate_*_amd64.deb (unless INSTALLED=1),
# starts its agent, and runs ROUNDS (default 60) rounds of bash -c exit, node -e 0, the installed
# /usr/libexec/gdrgate/prolog.sh ("new") and an older wrapper ($OLD_WRAPPER, default .device/old/prolog.sh, its
# settings set from the installed one's) in turn (each first after node -e 0 every other round), each as slurmd runs a Prolog (env -i, a slurmd parent, a new job
# id); FLOORS=0 leaves the floors out after the first round. Writes $OUT/wrapper-ab.txt: p10/p50/p90 of each, and how many Prologs the agent answered.
set -u
. "${0%/*}/device-lib.sh"
as_slurmd "$0" "$@"
begin wrapper-ab.txt
[ "${INSTALLED:-0}" = 1 ] || dpkg -i .device/gdrgate_*_amd64.deb >>"$P" 2>&1
N=/usr/lib/gdrgate/node; G=/usr/lib/gdrgate/gdrgate.cjs; L=/usr/libexec/gdrgate
W=/tmp/gdr-wab && rm -rf $W && mkdir -p -m 755 $W
live_gate "$W" "$P"
# The old wrapper with the installed one's settings (the lines the package sets: NODE, CLI, BLOB).
O=${OLD_WRAPPER:-$PWD/.device/old/prolog.sh}
cp "$O" $L/oldwrap.sh
for k in NODE CLI BLOB; do
  v=$(grep -m1 "^$k=" $L/prolog.sh) && sed -i "s|^$k=.*|$v|" $L/oldwrap.sh
done
chmod 755 $L/oldwrap.sh
job=5000
slurm() { job=$((job + 1)); env -i SLURMD_NODENAME=gpu SLURM_JOB_ID=$job SLURM_JOB_UID=65534 SLURM_JOB_GID=65534 "$@"; }
mkdir -p -m 700 /run/gdrgate-agent
setsid $N --max-semi-space-size=16 --expose-gc $G agent --config /etc/gdrgate/config.json --dir /run/gdrgate-agent 2>>$W/agent.err &
for i in $(seq 100); do [ -s /run/gdrgate-agent/agent.pid ] && break; read -r -t 0.1 _ <> <(:); done
for k in $(seq 10); do slurm $L/prolog.sh >/dev/null 2>&1; slurm $L/oldwrap.sh >/dev/null 2>&1; done
a0=$(grep -c '"startup":"agent"' /var/log/gdrgate/gdrgate.log)
s0=$(grep -c '"startup"' /var/log/gdrgate/gdrgate.log)
for k in $(seq "${ROUNDS:-60}"); do
  # FLOORS=0: the two wrappers back to back, no floor between (only the wrappers' own difference is left).
  if [ "${FLOORS:-1}" = 1 ] || [ "$k" = 1 ]; then
    us env -i /bin/bash -c 'exit 0'; echo "bash-exit $T"
    us env -i $N -e 0; echo "node-e0 $T"
  fi
  # Each in turn first after node -e 0 (the first one after it pays for the vCPUs that went idle meanwhile).
  if ((k % 2)); then
    us slurm $L/prolog.sh; echo "new $T"
    us slurm $L/oldwrap.sh; echo "old $T"
  else
    us slurm $L/oldwrap.sh; echo "old $T"
    us slurm $L/prolog.sh; echo "new $T"
  fi
done >"$W/times.txt"
sleep 1
echo "Prologs: $(($(grep -c '"startup"' /var/log/gdrgate/gdrgate.log) - s0)), answered by the agent: $(($(grep -c '"startup":"agent"' /var/log/gdrgate/gdrgate.log) - a0))" >>"$P"
kill -INT "$(cat /run/gdrgate-agent/agent.pid)"
$N -e '
const t = require("fs").readFileSync(process.argv[1], "utf8");
const by = {}; for (const m of t.matchAll(/^(\S+) (\d+)$/gm)) (by[m[1]] ??= []).push(Number(m[2]) / 1000);
const q = (v, p) => [...v].sort((a, b) => a - b)[Math.min(v.length - 1, Math.floor(v.length * p))];
const node = q(by["node-e0"], 0.5);
for (const [k, v] of Object.entries(by)) console.log(`${k.padEnd(10)} p50 ${q(v, 0.5).toFixed(2).padStart(7)} ms  p10 ${q(v, 0.1).toFixed(2).padStart(7)}  p90 ${q(v, 0.9).toFixed(2).padStart(7)}  ratio to node -e 0 ${(q(v, 0.5) / node).toFixed(2)}  n=${v.length}`);
' "$W/times.txt" >>"$P"
cat "$P"
