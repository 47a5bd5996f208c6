#!/usr/bin/env bash
# The hard bound's cost on a GPU node: the no-agent Prolog from the blob through the installed prolog.sh with its
# default HARD_TIMEOUT (Node under /usr/bin/timeout) against HARD_TIMEOUT=0 (Node started by the wrapper itself),
# ROUNDS (default 100) pairs alternating, each as slurmd runs a Prolog (env -i, a slurmd ancestor, a new job id).
# HOOK=task: the TaskProlog instead, as the job's user (uid 65534), judged by gdrgate from the blob (AGENT=, STATE=:
# every task judges, as a view's first task does). Needs .device/gdrgate_<v>-1_amd64.deb. Writes $OUT/bound-ab.txt:
# each side's p10, p50 and p90 and the median of the pairs' ratios.
set -u
. "${0%/*}/device-lib.sh"
as_slurmd "$0" "$@"
begin bound-ab.txt
dpkg -i .device/gdrgate_*_amd64.deb >>"$P" 2>&1
W=/tmp/gdr-bound && rm -rf $W && mkdir -p -m 755 $W
live_gate "$W" "$P"
L=/usr/libexec/gdrgate
job=7000
if [ "${HOOK:-prolog}" = task ]; then
  cp $L/taskprolog.sh $L/bound.sh && printf 'AGENT=\nSTATE=\n' >$L/bound.conf
  cp $L/taskprolog.sh $L/nobound.sh && printf 'AGENT=\nSTATE=\nHARD_TIMEOUT=0\n' >$L/nobound.conf
  slurm() { job=$((job + 1)); env -i SLURMD_NODENAME=gpu SLURM_JOB_ID=$job SLURM_STEP_ID=0 /usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
else
  cp $L/prolog.sh $L/bound.sh && echo 'AGENT=' >$L/bound.conf
  cp $L/prolog.sh $L/nobound.sh && printf 'AGENT=\nHARD_TIMEOUT=0\n' >$L/nobound.conf
  slurm() { job=$((job + 1)); env -i SLURMD_NODENAME=gpu SLURM_JOB_ID=$job SLURM_JOB_UID=65534 SLURM_JOB_GID=65534 "$@"; }
fi
chmod 644 $L/bound.conf $L/nobound.conf
for k in 1 2 3 4 5; do slurm $L/bound.sh >/dev/null 2>&1; slurm $L/nobound.sh >/dev/null 2>&1; done
for k in $(seq "${ROUNDS:-100}"); do
  us slurm $L/bound.sh; a=$T
  us slurm $L/nobound.sh; echo "$a $T"
done >$W/pairs.txt
[ "${HOOK:-prolog}" = task ] || grep -c '"startup":"snapshot"' /var/log/gdrgate/gdrgate.log | sed "s/^/runs from the blob: /" >>"$P"
/usr/lib/gdrgate/node -e '
const rows = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").map((l) => l.split(" ").map(Number));
const q = (v, p) => [...v].sort((a, b) => a - b)[Math.floor((v.length - 1) * p)];
const ms = (v) => ["p10", "p50", "p90"].map((n, i) => `${n} ${(q(v, [0.1, 0.5, 0.9][i]) / 1000).toFixed(1)} ms`).join("  ");
console.log(`bound (HARD_TIMEOUT default)  ${ms(rows.map((r) => r[0]))}`);
console.log(`no bound (HARD_TIMEOUT=0)     ${ms(rows.map((r) => r[1]))}`);
console.log(`pairs ${rows.length}, median ratio bound/no bound ${q(rows.map((r) => r[0] / r[1]), 0.5).toFixed(3)}`);
' $W/pairs.txt >>"$P"
rm -f $L/bound.* $L/nobound.*
dpkg --purge gdrgate >/dev/null 2>&1
tail -n 4 "$P"
