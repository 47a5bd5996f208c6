#!/usr/bin/env bash
# Where the Prolog's time goes on a real GPU node: installs .device/gdrgate_*_amd64.deb, then writes V8 CPU profiles
# ($OUT/*.cpuprofile) of the agent answering ROUNDS Prologs through /usr/libexec/gdrgate/prolog.sh, of one Prolog
# from the blob and one from the plain program, and of a first TaskProlog; and times the wrapper's own steps
# (bash's start, mkfifo, the writer's fork) with $EPOCHREALTIME. Read the profiles with bench/profile-top.mjs DIR.
set -u
. "${0%/*}/device-lib.sh"
as_slurmd "$0" "$@"
begin profile.txt
dpkg -i .device/gdrgate_*_amd64.deb >>"$P" 2>&1
N=/usr/lib/gdrgate/node
G=/usr/lib/gdrgate/gdrgate.cjs
L=/usr/libexec/gdrgate
W=/tmp/gdr-p && rm -rf $W && mkdir -p -m 755 $W
live_gate "$W" "$P"
job=2000
slurm() { job=$((job + 1)); env -i SLURMD_NODENAME=gpu SLURM_JOB_ID=$job SLURM_JOB_UID=65534 SLURM_JOB_GID=65534 "$@"; }
start_agent "$W" --cpu-prof --cpu-prof-dir=$OUT/agent --cpu-prof-interval 50
for k in $(seq 5); do slurm $L/prolog.sh >/dev/null 2>&1; done
a0=$(grep -c '"startup":"agent"' /var/log/gdrgate/gdrgate.log)
for k in $(seq "${ROUNDS:-200}"); do us slurm $L/prolog.sh; echo "prolog-agent $T"; done >>"$OUT/times.txt"
echo "agent answered: $(($(grep -c '"startup":"agent"' /var/log/gdrgate/gdrgate.log) - a0))" >>"$P"
grep '"startup":"agent"' /var/log/gdrgate/gdrgate.log | tail -n 200 | grep -o '"durationMs":[0-9]*' | sort | uniq -c >>"$P"
kill -INT "$(cat /run/gdrgate-agent/agent.pid)"; sleep 2
# The wrapper's own steps, each alone.
printf '#!/bin/bash\nr=/tmp/gdr-p/f.$$\n/usr/bin/mkfifo -m 600 "$r" && exec 3<>"$r"\nprintf x >/dev/null &\nw=$!\nexec 3<&-\nkill -KILL $w 2>/dev/null\nwait $w 2>/dev/null\n/bin/rm -f "$r"\n' >$W/mech.sh
printf '#!/bin/bash\nprintf x >/dev/null &\nw=$!\nkill -KILL $w 2>/dev/null\nwait $w 2>/dev/null\n' >$W/fork.sh
printf '#!/bin/bash\nexec 3<> <(:)\nexec 3<&-\n' >$W/procsub.sh
chmod 755 $W/*.sh
for k in $(seq 100); do
  us env -i /bin/bash -c 'exit 0'; echo "bash-exit $T"
  us env -i $W/mech.sh; echo "mkfifo-fork $T"
  us env -i $W/fork.sh; echo "fork-only $T"
  us env -i $W/procsub.sh; echo "procsub $T"
  us env -i $N -e 0; echo "node-e0 $T"
done >>"$OUT/times.txt"
# One Prolog each way, profiled (after a warm run each).
slurm $N --snapshot-blob /var/lib/gdrgate/gate.blob prolog --config /etc/gdrgate/config.json >/dev/null 2>&1
for k in 1 2 3; do slurm $N --cpu-prof --cpu-prof-dir=$OUT/blob --cpu-prof-interval 50 --snapshot-blob /var/lib/gdrgate/gate.blob prolog --config /etc/gdrgate/config.json >>"$P" 2>&1; done
for k in 1 2 3; do slurm $N --cpu-prof --cpu-prof-dir=$OUT/plain --cpu-prof-interval 50 $G prolog --config /etc/gdrgate/config.json >>"$P" 2>&1; done
for k in 1 2 3; do env -i SLURMD_NODENAME=gpu SLURM_JOB_ID=$job SLURM_STEP_ID=$k $N --cpu-prof --cpu-prof-dir=$OUT/task --cpu-prof-interval 50 $G task --config /etc/gdrgate/config.json >>"$P" 2>&1; done
ls -la $OUT/* >>"$P"
$N -e '
const t = require("fs").readFileSync(process.argv[1], "utf8");
const by = {}; for (const m of t.matchAll(/^(\S+) (\d+)$/gm)) (by[m[1]] ??= []).push(Number(m[2]) / 1000);
const q = (v, p) => [...v].sort((a, b) => a - b)[Math.min(v.length - 1, Math.floor(v.length * p))];
for (const [k, v] of Object.entries(by)) console.log(`${k.padEnd(15)} p50 ${q(v, 0.5).toFixed(2).padStart(7)} ms  p10 ${q(v, 0.1).toFixed(2).padStart(7)}  p90 ${q(v, 0.9).toFixed(2).padStart(7)}  n=${v.length}`);
' "$OUT/times.txt" >>"$P"
dpkg --purge gdrgate >/dev/null 2>&1
cat "$P" | tail -n 40
