#!/usr/bin/env bash
# The agent's system calls while it answers Prologs on a GPU node, each with its time in the kernel: installs
# .device/gdrgate_*_amd64.deb, starts the agent, answers 10 Prologs to warm it, then traces it (strace -f -T -tt) over
# ROUNDS (default 40) Prologs through /usr/libexec/gdrgate/prolog.sh started as slurmd starts one. Writes
# $OUT/agent-syscalls.txt: per system call of the agent's main thread, calls and kernel time per Prolog (strace's
# own cost inflates the times; the counts are exact), split at each answer's write into the reply pipe (before it:
# what the Prolog waits for; after it: the agent's own bookkeeping), and the slowest calls; $OUT/agent-strace.txt.gz.
set -u
. "${0%/*}/device-lib.sh"
as_slurmd "$0" "$@"
begin agent-syscalls.txt
command -v strace >>"$P" 2>&1 || { echo "no strace on this node" >>"$P"; cat "$P"; exit 0; }
dpkg -i .device/gdrgate_*_amd64.deb >/dev/null 2>&1
L=/usr/libexec/gdrgate
W=/tmp/gdr-sys && rm -rf $W && mkdir -p -m 755 $W
live_gate "$W" "$P"
start_agent "$W"
apid=$(cat /run/gdrgate-agent/agent.pid)
job=7000
slurm() { job=$((job + 1)); env -i SLURMD_NODENAME=gpu SLURM_JOB_ID=$job SLURM_JOB_UID=65534 SLURM_JOB_GID=65534 "$@"; }
for k in $(seq 10); do slurm $L/prolog.sh >/dev/null 2>&1; done
strace -f -T -tt -qq -p "$apid" -o $W/strace.txt &
spid=$!
read -r -t 1 _ <> <(:)
for k in $(seq "${ROUNDS:-40}"); do env -i /bin/bash -c 'exit 0'; slurm $L/prolog.sh >/dev/null 2>&1; done
read -r -t 1 _ <> <(:)
kill -INT $spid; wait $spid 2>/dev/null
kill "$apid" 2>/dev/null
/usr/lib/gdrgate/node -e '
const lines = require("fs").readFileSync(process.argv[1], "utf8").split("\n");
const n = Number(process.argv[2]);
// "PID HH:MM:SS.us name(args) = ret <secs>"; an answer is a write of "ok ..." into the reply pipe.
const before = new Map(), after = new Map(), slow = [];
let phase = after;
for (const l of lines) {
  // A call another thread interrupted shows as "name(args <unfinished ...>" and later "<... name resumed>rest": counted
  // once, when it ends, with what it read.
  const m = /^(\d+)\s+\S+\s+(\w+)\((.*)\)\s+=\s+(.*?)\s+<([\d.]+)>$/.exec(l) ?? /^(\d+)\s+\S+\s+<\.\.\. (\w+) resumed>(.*)\)\s+=\s+(.*?)\s+<([\d.]+)>$/.exec(l);
  // The agent's own thread only: a Prolog waits on it; V8's and libuv's helper threads mostly wait.
  if (!m || m[1] !== process.argv[3]) continue;
  const [, , name, args, , secs] = m;
  // Waiting for the next request is no work.
  if (name.startsWith("epoll")) continue;
  if (name === "read" && /"v2 prolog /.test(args)) phase = before;
  const e = phase.get(name) ?? { n: 0, s: 0 };
  e.n++; e.s += Number(secs); phase.set(name, e);
  slow.push([Number(secs), phase === before ? "before" : "after", l.slice(0, 200)]);
  if (name === "write" && /"ok /.test(args)) phase = after;
}
for (const [title, m] of [["before the answer (the Prolog waits)", before], ["after the answer", after]]) {
  const tot = [...m.values()].reduce((a, e) => a + e.s, 0);
  console.log(`${title}: ${(tot * 1000 / n).toFixed(3)} ms in the kernel per Prolog, ${([...m.values()].reduce((a, e) => a + e.n, 0) / n).toFixed(1)} calls`);
  for (const [k, e] of [...m].sort((a, b) => b[1].s - a[1].s).slice(0, 25)) console.log(`  ${k.padEnd(14)} ${(e.n / n).toFixed(1).padStart(6)} calls  ${(e.s * 1e6 / n).toFixed(0).padStart(6)} us`);
}
console.log("slowest calls:");
for (const s of slow.sort((a, b) => b[0] - a[0]).slice(0, 25)) console.log(`  ${(s[0] * 1e6).toFixed(0).padStart(6)} us ${s[1]}: ${s[2]}`);
' $W/strace.txt "${ROUNDS:-40}" "$apid" >>"$P"
echo "agent durationMs while traced: $(grep '"startup":"agent"' /var/log/gdrgate/gdrgate.log | tail -n "${ROUNDS:-40}" | grep -o '"durationMs":[0-9]*' | cut -d: -f2 | sort -n | uniq -c | tr -s ' \n' ' ')" >>"$P"
gzip -c $W/strace.txt >"$OUT/agent-strace.txt.gz"
dpkg --purge gdrgate >/dev/null 2>&1
cat "$P"
