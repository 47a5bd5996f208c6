#!/usr/bin/env bash
# The prolog's cost on the live GPU node, as Slurm runs it: slurm/prolog.sh with its .conf, answered by a running
# gdrgate agent (as examples/systemd/gdrgate-agent.service starts it), then without an agent (the gate from
# dist/gate.blob), the same gate without the blob (node dist/cli.js), node -e 0, Node from an empty snapshot and
# the gate's blob stopping before its first read, alternating, each in the
# environment slurmd gives a Prolog (env -i, SLURM_* only, a new job id each run). On the live / and, when
# .device/hgx.tar.gz is there, on the bench's 8-GPU tree. Also: what one read of a GPU's config space costs
# (4096, 256 and 64 bytes), since the gate reads it for every device on a GPU<->NIC path. Output under $OUT;
# ROUNDS (default 3) sets how many rounds of 10 runs each.
set -u
OUT=${OUT:-/tmp/gdrgate-device}
mkdir -p "$OUT"
bash .device/unpack.sh || exit 1
N=/tmp/gdr/node
APP=/tmp/gdr/app
chmod -R a+rX /tmp/gdr/node /tmp/gdr/app
# A fresh work directory each run: the agent refuses a directory others can enter (mode 700 wanted), so a
# leftover one made readable by a chmod above would keep the second run's agents from starting.
W=/tmp/gdr/w && rm -rf $W && mkdir -p $W
cp "$APP/slurm/prolog.sh" $W/gdrgate-prolog.sh && chmod 755 $W/gdrgate-prolog.sh
cp "$APP/slurm/prolog.sh" $W/gdrgate-agent.sh && chmod 755 $W/gdrgate-agent.sh
# Node from a user-land snapshot holding nothing: where any snapshot-started gate's floor lies.
echo "require('node:v8').startupSnapshot.setDeserializeMainFunction(() => {});" > $W/empty.cjs
"$N" --snapshot-blob $W/empty.blob --build-snapshot $W/empty.cjs
"$N" "$APP/dist/cli.js" baseline capture --class live --match '*' > $W/live-baseline.json 2>/dev/null
printf '{"baseline":"%s","scontrol":"/bin/false","logFile":"%s","stateDir":"%s"}\n' $W/live-baseline.json $W/live.log $W/state > $W/live.json
roots="live"
if [ -f .device/hgx.tar.gz ]; then
  tar xzf .device/hgx.tar.gz -C /tmp/gdr
  "$N" "$APP/dist/cli.js" baseline capture --root /tmp/gdr/hgx --class hgx --match '*' > $W/hgx-baseline.json 2>/dev/null
  printf '{"baseline":"%s","root":"/tmp/gdr/hgx","scontrol":"/bin/false","logFile":"%s","stateDir":"%s"}\n' $W/hgx-baseline.json $W/hgx.log $W/state > $W/hgx.json
  roots="live hgx"
fi
# One agent per root, as the service unit runs it; the agent wrapper's .conf names its directory.
for r in $roots; do
  "$N" --max-semi-space-size=16 --expose-gc "$APP/dist/cli.js" agent --config $W/$r.json --dir $W/agent-$r 2>> $W/agent-$r.err &
done
for i in $(seq 100); do ok=1; for r in $roots; do [ -s $W/agent-$r/agent.pid ] || ok=0; done; [ $ok = 1 ] && break; sleep 0.1; done
cpu() { awk '{print ($14 + $15) * 10}' /proc/$1/stat 2>/dev/null || echo 0; } # utime + stime, ms (10 ms ticks)
confs() { printf 'NODE=%s\nCLI=%s\nCONFIG=%s\nAGENT=\n' "$N" "$APP/dist/cli.js" $W/$1.json > $W/gdrgate-prolog.conf
  printf 'NODE=%s\nCLI=%s\nCONFIG=%s\nAGENT=%s\n' "$N" "$APP/dist/cli.js" $W/$1.json $W/agent-$1 > $W/gdrgate-agent.conf; }
job=1000
ms() { local s e; s=$(date +%s%N); "$@" >/dev/null 2>&1; e=$(date +%s%N); echo $(( (e-s)/1000 )); }
# slurmd starts a Prolog: a process of that name is its ancestor (the agent judges only such a Prolog); a bash that
# runs the command (not exec: it stays the parent) stands in for it.
printf '#!/bin/bash\n"$@"\n' > $W/slurmd && chmod 755 $W/slurmd
slurm() { job=$((job+1)); env -i SLURMD_NODENAME=gpu SLURM_JOB_ID=$job SLURM_JOB_UID=0 SLURM_JOB_GID=0 $W/slurmd "$@"; }
{
  echo "== $(date -u +%FT%TZ) $(uname -r) $(nproc) CPUs; $(grep -m1 'model name' /proc/cpuinfo)"
  echo "== this command's environment sets: $(env | grep -o '^NODE[A-Z_]*' | tr '\n' ' ')"
  for i in $(seq 10); do echo "inherited-node-e0 $(ms "$N" -e 0)"; done
  for r in $roots; do confs $r
    slurm $W/gdrgate-prolog.sh; echo "($r: wrapper exit $?)"; tail -n 1 $W/$r.log
    slurm $W/gdrgate-agent.sh; echo "($r, agent: wrapper exit $?)"; tail -n 1 $W/$r.log; done
  declare -A cpu0; for r in $roots; do cpu0[$r]=$(cpu "$(cat $W/agent-$r/agent.pid)"); done
  for k in $(seq "${ROUNDS:-3}"); do for i in $(seq 10); do
    echo "node-e0 $(ms env -i "$N" -e 0)"
    echo "empty-snapshot $(ms env -i "$N" --snapshot-blob $W/empty.blob)"
    echo "blob-start $(ms env -i "$N" --snapshot-blob "$APP/dist/gate.blob" start-up-only)"
    for r in $roots; do
      confs $r
      echo "$r-agent $(ms slurm $W/gdrgate-agent.sh)"
      echo "$r-slurm $(ms slurm $W/gdrgate-prolog.sh)"
      echo "$r-noblob $(ms slurm "$N" "$APP/dist/cli.js" prolog --config $W/$r.json)"
    done
  done; done
  for r in $roots; do apid=$(cat $W/agent-$r/agent.pid)
    echo "$r-agent: agent CPU $(( ($(cpu $apid) - ${cpu0[$r]}) / ${ROUNDS:-3} / 10 )) ms per answered prolog; $(grep VmHWM /proc/$apid/status | tr -s ' \t' ' ')"; done
  for r in $roots; do confs $r
    slurm /usr/bin/time -f "$r-slurm peak RSS %M KiB" $W/gdrgate-prolog.sh > /dev/null
    slurm /usr/bin/time -f "$r-agent peak RSS %M KiB (the Prolog's processes)" $W/gdrgate-agent.sh > /dev/null; done
  echo "startup: snapshot $(grep -c '"startup":"snapshot"' $W/*.log | tr '\n' ' ')  agent $(grep -c '"startup":"agent"' $W/*.log | tr '\n' ' ')"
  # The agent judges the Prolog's limits, not its own: a Prolog with memlock 64 KiB is handed back, judged and failed here.
  confs live; ( ulimit -l 64; slurm $W/gdrgate-agent.sh; echo "(live, agent, ulimit -l 64: wrapper exit $?)" ); tail -n 1 $W/live.log
  for r in $roots; do kill $(cat $W/agent-$r/agent.pid); done; sleep 0.5; cat $W/agent-*.err | tail -n 6
} > "$OUT/speed.txt" 2>&1
"$N" -e '
const t = require("fs").readFileSync(process.argv[1], "utf8");
const by = {}; for (const m of t.matchAll(/^(\S+) (\d+)$/gm)) (by[m[1]] ??= []).push(Number(m[2]) / 1000);
const med = (v) => [...v].sort((a, b) => a - b)[v.length >> 1];
const floor = med(by["node-e0"]);
for (const [k, v] of Object.entries(by)) console.log(`${k.padEnd(12)} p50 ${med(v).toFixed(1).padStart(6)} ms  ratio ${(med(v) / floor).toFixed(2)}  n=${v.length}`);
' "$OUT/speed.txt" > "$OUT/summary.txt"
cat "$OUT/summary.txt" >> "$OUT/speed.txt"
# Config space: the GPU's, read whole and in part (a read of sysfs config is one config access per dword).
# CONFIG_READS=0 leaves it out (about 45 s: 2,000 reads of 4 KiB at ~20 ms each in a VM).
[ "${CONFIG_READS:-1}" = 0 ] && exit 0
gpu=$(for d in /sys/bus/pci/devices/*; do [ "$(cat $d/vendor)" = 0x10de ] && case $(cat $d/class) in 0x03*) echo $d; break;; esac; done)
{
  echo "== config space reads of $gpu (1000 each, as root)"
  "$N" -e '
const fs = require("fs"); const p = process.argv[1] + "/config"; const b = Buffer.alloc(4096);
for (const n of [4096, 256, 64, 4096]) { const fd = fs.openSync(p, "r"); const t = performance.now();
  for (let i = 0; i < 1000; i++) fs.readSync(fd, b, 0, n, 0);
  console.log(`${n} bytes: ${((performance.now() - t)).toFixed(1)} us per read`); fs.closeSync(fd); }
for (const a of ["vendor", "current_link_width", "numa_node"]) { const t = performance.now();
  for (let i = 0; i < 1000; i++) fs.readFileSync(process.argv[1] + "/" + a);
  console.log(`${a}: ${((performance.now() - t)).toFixed(1)} us per open+read+close`); }
' "$gpu"
} >> "$OUT/speed.txt" 2>&1
cat "$OUT/speed.txt" | tail -n 20
