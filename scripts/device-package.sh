#!/usr/bin/env bash
# The .deb on a real GPU node, as an admin installs it and as slurmd runs its hooks. Needs the package in
# .device/ (gdrgate_<v>-1_amd64.deb, from npm run package) and nothing else: the node has no Node; the floor
# `node -e 0` is the Node the package carries. Writes $OUT/package.txt (every command and what it printed) and
# $OUT/speed.txt (for each row ROUNDS rounds, default 30, alternating with bash -c exit and node -e 0: an empty
# startup snapshot, the program's blob saying its version, the Prolog through /usr/libexec/gdrgate/prolog.sh answered by the agent,
# without the agent (from the blob made at install), without the blob, and the TaskProlog as the job's user:
# a step's first task and a later one, also with seven GPU device nodes it may not open, as under ConstrainDevices), each in the environment slurmd gives a Prolog (env -i, a slurmd
# ancestor, a new job id each run), timed with bash's $EPOCHREALTIME (no process of its own).
set -u
. "${0%/*}/device-lib.sh"
as_slurmd "$0" "$@"
begin package.txt
say() { echo "\$ $*" >>"$P"; "$@" >>"$P" 2>&1; echo "(exit $?)" >>"$P"; }
say dpkg -i .device/gdrgate_*_amd64.deb
say /usr/sbin/gdrgate --version
say ls -la /var/lib/gdrgate /usr/lib/gdrgate
say /usr/sbin/gdrgate check --root /usr/share/gdrgate/examples/h200-vm.tar.gz
say /usr/sbin/gdrgate check
# A known-good baseline of this node, and a recording scontrol (the VM has no Slurm).
W=/tmp/gdr-w && rm -rf $W && mkdir -p -m 755 $W
live_gate "$W" "$P"
L=/usr/libexec/gdrgate
cp $L/prolog.sh $L/noagent.sh && echo 'AGENT=' >$L/noagent.conf
cp $L/prolog.sh $L/noblob.sh && printf 'AGENT=\nBLOB=\n' >$L/noblob.conf
cp $L/taskprolog.sh $L/tasknoagent.sh && echo 'AGENT=' >$L/tasknoagent.conf
chmod 644 $L/*.conf
job=1000
slurm() { job=$((job + 1)); env -i SLURMD_NODENAME=gpu SLURM_JOB_ID=$job SLURM_JOB_UID=65534 SLURM_JOB_GID=65534 "$@"; }
cd_made=()
cd_nodes() {
  if [ "$1" = on ]; then for n in 1 2 3 4 5 6 7; do [ -e /dev/nvidia$n ] || { mknod -m 600 /dev/nvidia$n c 195 $n && cd_made+=(/dev/nvidia$n); }; done
  else rm -f "${cd_made[@]}"; cd_made=(); fi
}
task() { env -i SLURMD_NODENAME=gpu SLURM_JOB_ID=$job SLURM_JOB_UID=65534 SLURM_JOB_GID=65534 SLURM_STEP_ID=${1:-0} /usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups $L/${2:-taskprolog}.sh; }
start_agent "$W"
{
  echo "\$ slurm $L/prolog.sh (agent)"; slurm $L/prolog.sh; echo "(exit $?)"; tail -n 1 /var/log/gdrgate/gdrgate.log
  echo "\$ slurm $L/noagent.sh"; slurm $L/noagent.sh; echo "(exit $?)"; tail -n 1 /var/log/gdrgate/gdrgate.log
  # The tasks' job: its Prolog answered by the agent, which hands the job its TaskProlog's FIFO.
  echo "\$ slurm $L/prolog.sh (agent; the job of the tasks below)"; slurm $L/prolog.sh; echo "(exit $?)"
  echo "\$ task (first task of the job's step 0, as uid 65534)"; task; echo "(exit $?)"
  echo "\$ task (a later task)"; task; echo "(exit $?)"
  echo "\$ grep TaskProlog $W/agent.err"; grep TaskProlog $W/agent.err
  # One first task traced, each line stamped (trace-task.txt: where its time goes).
  sed '2i PS4='"'"'+ $EPOCHREALTIME '"'"'; exec 5>>/tmp/gdr-trace; BASH_XTRACEFD=5; set -x' $L/taskprolog.sh >$L/tasktrace.sh && chmod 755 $L/tasktrace.sh && rm -f /tmp/gdr-trace
  task 0 taskprolog >/dev/null; task 7 tasktrace; echo "traced (exit $?)"; cp /tmp/gdr-trace "$OUT/trace-task.txt"
  echo "\$ task 1 tasknoagent (step 1's first task, AGENT= : gdrgate judges)"; task 1 tasknoagent; echo "(exit $?)"
  echo "\$ ls -la /run/gdrgate/job-$job; cat task.json"; ls -la /run/gdrgate/job-$job; cat /run/gdrgate/job-$job/task.json
  echo "\$ ls -la /run/gdrgate/tasks-$job"; ls -la /run/gdrgate/tasks-$job
  echo "\$ (as uid 65533, another user) exec 3<>/run/gdrgate/tasks-$job"; /usr/bin/setpriv --reuid=65533 --regid=65533 --clear-groups /bin/bash -c "exec 3<>/run/gdrgate/tasks-$job"; echo "(exit $?)"
  # Slurm's ConstrainDevices as a one-GPU VM can show it: seven more GPU device nodes the job's user may not open
  # (bash's access test cannot tell EACCES from the cgroup's EPERM: the TaskProlog writes "access ?" for them).
  cd_nodes on; echo "\$ slurm $L/prolog.sh; task (first task, /dev/nvidia1-7 denied to uid 65534)"; slurm $L/prolog.sh >/dev/null; task; echo "(exit $?)"
  tail -n 1 $W/agent.err | grep -o '"msg":"[^"]*"\|"why":"[^"]*"'; cd_nodes off
  echo "\$ slurm $L/noblob.sh"; slurm $L/noblob.sh; echo "(exit $?)"; tail -n 1 /var/log/gdrgate/gdrgate.log
  echo "\$ (ulimit -l 64; slurm $L/prolog.sh)"; (ulimit -l 64; slurm $L/prolog.sh); echo "(exit $?)"; tail -n 1 /var/log/gdrgate/gdrgate.log
  echo "scontrol calls: $(cat $W/scontrol.calls 2>/dev/null)"
  # A program that never reaches gdrgate's code (Node's own exit 1, which used to drain the node): the Prolog fails
  # open, and the system log says so (slurmd logs a Prolog's output only when it fails).
  cp $L/prolog.sh $L/broken.sh && printf 'AGENT=\nBLOB=\nCLI=/nonexistent/gdrgate.cjs\n' >$L/broken.conf && chmod 644 $L/broken.conf
  echo "\$ slurm $L/broken.sh (CLI=/nonexistent/gdrgate.cjs; last line of its stderr)"; slurm $L/broken.sh 2>&1 | tail -n 1; echo "(exit ${PIPESTATUS[0]})"
  echo "\$ journalctl -t gdrgate -n 2 --no-pager"; journalctl -t gdrgate -n 2 --no-pager 2>&1 || tail -n 2 /var/log/syslog 2>&1
  rm -f $L/broken.sh $L/broken.conf
} >>"$P" 2>&1
printf 'require("node:v8").startupSnapshot.setDeserializeMainFunction(() => {});\n' >$W/empty.cjs
/usr/lib/gdrgate/node --snapshot-blob $W/empty.blob --build-snapshot $W/empty.cjs
N=/usr/lib/gdrgate/node
# One phase a row: ROUNDS rounds of bash -c exit, node -e 0 and the row, alternating, so that each row is set
# against the floors measured beside it and not slowed by the other rows' large processes (a Node of ~50 MB
# between two agent answers evicts what the agent and bash had in the CPU's caches).
row() {
  local name=$1
  shift
  echo "phase $name"
  for k in $(seq "${ROUNDS:-30}"); do
    us env -i /bin/bash -c 'exit 0'; echo "bash-exit $T"
    us env -i $N -e 0; echo "node-e0 $T"
    "$@"
  done
}
one() { us "$@"; echo "$ROW $T"; }
tasks() { slurm $L/prolog.sh >/dev/null 2>&1; us task 0; echo "task-first $T"; us task 0; echo "task-later $T"; us task 1 tasknoagent; echo "task-first-noagent $T"; }
{
  echo "== $(date -u +%FT%TZ) $(uname -r) $(nproc) CPUs; $(grep -m1 'model name' /proc/cpuinfo)"
  ROW=empty-snapshot; row $ROW one env -i $N --snapshot-blob $W/empty.blob
  ROW=blob-version; row $ROW one env -i $N --snapshot-blob /var/lib/gdrgate/gate.blob version
  ROW=prolog-agent; row $ROW one slurm $L/prolog.sh
  ROW=prolog-blob; row $ROW one slurm $L/noagent.sh
  ROW=prolog-noblob; row $ROW one slurm $L/noblob.sh
  row task tasks
  cd_nodes on; row task-denied tasks; cd_nodes off
  echo "startup counts: $(grep -o '"startup":"[a-z]*"' /var/log/gdrgate/gdrgate.log | sort | uniq -c | tr -s ' \n' ' ')"
  # The agent's own part of each answered Prolog (from reading the request to writing the answer), in whole ms.
  echo "agent durationMs: $(grep '"startup":"agent"' /var/log/gdrgate/gdrgate.log | grep -o '"durationMs":[0-9]*' | cut -d: -f2 | sort -n | uniq -c | tr -s ' \n' ' ')"
  # The agent's part of each TaskProlog it answered (from taking the request to the last byte of the answer).
  echo "agent TaskProlog ms: $(grep 'TaskProlog answered' $W/agent.err | grep -o '"ms":[0-9.]*' | cut -d: -f2 | sort -n | awk '{a[NR] = $1} END {print "n=" NR, "p50=" a[int(NR / 2) + 1], "p90=" a[int(NR * 0.9) + 1]}')"
  echo "agent TaskProlog left to gdrgate: $(grep -c 'TaskProlog left to gdrgate' $W/agent.err)"
} >"$OUT/speed.txt" 2>&1
# Per phase: each row's median against the median of the floors of its own phase.
$N -e '
const t = require("fs").readFileSync(process.argv[1], "utf8");
const q = (v, p) => [...v].sort((a, b) => a - b)[Math.min(v.length - 1, Math.floor(v.length * p))];
for (const part of t.split(/^phase /m).slice(1)) {
  const by = {}; for (const m of part.matchAll(/^(\S+) (\d+)$/gm)) (by[m[1]] ??= []).push(Number(m[2]) / 1000);
  const node = q(by["node-e0"], 0.5), bash = q(by["bash-exit"], 0.5);
  for (const [k, v] of Object.entries(by)) if (k !== "node-e0" && k !== "bash-exit")
    console.log(`${(part.startsWith("task-denied") ? k + "/denied" : k).padEnd(15)} p50 ${q(v, 0.5).toFixed(1).padStart(6)} ms  p10 ${q(v, 0.1).toFixed(1).padStart(6)}  p90 ${q(v, 0.9).toFixed(1).padStart(6)}  ratio to node -e 0 ${(q(v, 0.5) / node).toFixed(2)}  (node -e 0 ${node.toFixed(1)} ms, bash -c exit ${bash.toFixed(1)} ms beside it)  n=${v.length}`);
}
' "$OUT/speed.txt" >"$OUT/summary.txt"
cat "$OUT/summary.txt" >>"$OUT/speed.txt"
kill "$(cat /run/gdrgate-agent/agent.pid)" 2>/dev/null
say dpkg --purge gdrgate
say ls -la /var/lib/gdrgate /usr/lib/gdrgate /run/gdrgate-agent
cat "$P" | tail -n 60
cat "$OUT/summary.txt"
