#!/usr/bin/env bash
# Where the agent's Prolog spends its time on a GPU node: installs .device/gdrgate_*_amd64.deb, starts the agent,
# and runs ROUNDS (default 200) Prologs through a copy of /usr/libexec/gdrgate/prolog.sh stamped with
# $EPOCHREALTIME at its first line, just before it writes its request into the agent's FIFO, just after it has read
# the answer, and just before its exit (bash builtins: no process more), alternating with `bash -c exit`, each started
# as slurmd starts a Prolog (env -i, a process named slurmd its parent). Writes $OUT/agent-split.txt: the medians of
# the whole run (as the caller sees it), bash's start to the script's first line, the script up to the request, the
# request to the answer read (the agent's judgement, the FIFO round trip and bash reading the answer), and the rest.
set -u
. "${0%/*}/device-lib.sh"
as_slurmd "$0" "$@"
begin agent-split.txt
dpkg -i .device/gdrgate_*_amd64.deb >>"$P" 2>&1
L=/usr/libexec/gdrgate
W=/tmp/gdr-split && rm -rf $W && mkdir -p -m 755 $W
live_gate "$W" "$P"
start_agent "$W"
# The stamps go to descriptor 2 as "T start request answer end", the caller's start in front of them.
sed -e '0,/^GDRGATE_T0=\$EPOCHREALTIME$/s//GDRGATE_T0=$EPOCHREALTIME; T_A=$EPOCHREALTIME/' \
  -e "s/^\(      \)printf 'v2 prolog %s 87 %s\\\\n'/\1T_B=\$EPOCHREALTIME; printf 'v2 prolog %s 87 %s\\\\n'/" \
  -e 's/^\(      \)said=\$?$/\1said=$?; T_C=$EPOCHREALTIME/' \
  -e 's/\[ "\$verdict" = ok \] && { printf .%s\\n. "\$answer"; exit 0; }/[ "$verdict" = ok ] \&\& { printf "%s\\n" "$answer"; echo "T $T_A $T_B $T_C $EPOCHREALTIME" >\&2; exit 0; }/' \
  $L/prolog.sh >$L/split.sh && chmod 755 $L/split.sh
echo "stamps in the copy: $(grep -c 'T_[ABC]=\$EPOCHREALTIME\|echo "T ' $L/split.sh) of 4" >>"$P"
job=5000
for k in $(seq 10); do job=$((job + 1)); env -i SLURMD_NODENAME=gpu SLURM_JOB_ID=$job SLURM_JOB_UID=65534 SLURM_JOB_GID=65534 $L/split.sh >/dev/null 2>&1; done
for k in $(seq "${ROUNDS:-200}"); do
  s=$EPOCHREALTIME; env -i /bin/bash -c 'exit 0'; e=$EPOCHREALTIME; echo "B $s $e"
  job=$((job + 1)); s=$EPOCHREALTIME
  env -i SLURMD_NODENAME=gpu SLURM_JOB_ID=$job SLURM_JOB_UID=65534 SLURM_JOB_GID=65534 $L/split.sh 2>&1 >/dev/null | sed "s/^T /T $s /"
  e=$EPOCHREALTIME; echo "E $s $e"
done >$W/stamps.txt
kill "$(cat /run/gdrgate-agent/agent.pid)" 2>/dev/null
/usr/lib/gdrgate/node -e '
const lines = require("fs").readFileSync(process.argv[1], "utf8").split("\n").map((l) => l.split(" "));
const med = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
const ms = (v) => (med(v) * 1000).toFixed(2).padStart(6) + " ms";
const T = lines.filter((l) => l[0] === "T").map((l) => l.slice(1).map(Number));
const E = lines.filter((l) => l[0] === "E").map((l) => Number(l[2]) - Number(l[1]));
const B = lines.filter((l) => l[0] === "B").map((l) => Number(l[2]) - Number(l[1]));
console.log(`answered by the agent: ${T.length} of ${E.length}`);
console.log(`bash -c exit                            ${ms(B)}`);
console.log(`the Prolog, whole (as its caller sees it) ${ms(E)}`);
console.log(`  exec to the first line of the script    ${ms(T.map((t) => t[1] - t[0]))}`);
console.log(`  first line to the request written       ${ms(T.map((t) => t[2] - t[1]))}`);
console.log(`  request to the answer read              ${ms(T.map((t) => t[3] - t[2]))}`);
console.log(`  answer to the last line                 ${ms(T.map((t) => t[4] - t[3]))}`);
' $W/stamps.txt >>"$P"
echo "agent durationMs: $(grep '"startup":"agent"' /var/log/gdrgate/gdrgate.log | grep -o '"durationMs":[0-9]*' | cut -d: -f2 | sort -n | uniq -c | tr -s ' \n' ' ')" >>"$P"
dpkg --purge gdrgate >>"$P" 2>&1
rm -f $L/split.sh
cat "$P" | tail -n 12
