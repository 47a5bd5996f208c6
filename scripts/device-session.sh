#!/usr/bin/env bash
# Runs the built gate on a live GPU node (as root, under a 64 KiB memlock limit, and unprivileged) and
# keeps what it printed under $OUT. Needs .device/ from ../shared/tools/device-pack.sh; optional
# .device/capture-node.py to also capture the node's tree for replay.
set -u
OUT=${OUT:-/tmp/gdrgate-device}
mkdir -p "$OUT"
bash .device/unpack.sh || exit 1
N=/tmp/gdr/node
G=/tmp/gdr/app/dist/cli.js
chmod -R a+rX /tmp/gdr
run() { echo "\$ gdrgate $*"; "$N" "$G" "$@"; echo "(exit $?)"; echo; }
{
  echo "== $(date -u +%FT%TZ) $(uname -r) $(id -un)"
  run check
  run topo
  echo "\$ nvidia-smi topo -m"; nvidia-smi topo -m; echo
  run baseline capture --class h200-live --match '*'
} > "$OUT/live.txt" 2>&1
"$N" "$G" check --json > "$OUT/live-check.json" 2>>"$OUT/live.txt"
"$N" "$G" baseline capture --class h200-live --match '*' > /tmp/gdr/baseline.json 2>/dev/null
printf '{"baseline":"/tmp/gdr/baseline.json","scontrol":"/bin/false","logFile":"/tmp/gdr/gate.log"}\n' > /tmp/gdr/config.json
{
  echo "== prolog as Slurm runs it: env -i, no PATH, dry run"
  env -i SLURMD_NODENAME=h200 SLURM_JOB_ID=1 SLURM_SCRIPT_CONTEXT=prolog_slurmd "$N" "$G" prolog --config /tmp/gdr/config.json --dry-run; echo "(exit $?)"
  tail -n 1 /tmp/gdr/gate.log
  echo "== the same under ulimit -l 64 (KiB)"
  ( ulimit -l 64; "$N" "$G" check --only memlock-limit; echo "(exit $?)"
    env -i SLURMD_NODENAME=h200 SLURM_JOB_ID=2 "$N" "$G" prolog --config /tmp/gdr/config.json --dry-run; echo "(exit $?)" )
  echo "== unprivileged (uid 65534)"
  setpriv --reuid=65534 --regid=65534 --clear-groups "$N" "$G" check; echo "(exit $?)"
  # Timing lives in scripts/device-speed.sh (the Slurm wrapper and its blob, slurmd's environment). These
  # runs of dist/cli.js are kept for continuity; node -e 0 runs under env -i here too, as slurmd would run it.
  echo "== timing: 20 x node -e 0, 20 x prolog --dry-run (ms each)"
  for k in 1 2; do
    for i in $(seq 20); do s=$(date +%s%N); env -i "$N" -e 0; e=$(date +%s%N); echo "node-e0 $(( (e-s)/1000 ))"; done
    for i in $(seq 20); do s=$(date +%s%N); env -i SLURMD_NODENAME=h200 "$N" "$G" prolog --config /tmp/gdr/config.json --dry-run >/dev/null; e=$(date +%s%N); echo "prolog $(( (e-s)/1000 ))"; done
  done
} > "$OUT/modes.txt" 2>&1
setpriv --reuid=65534 --regid=65534 --clear-groups "$N" "$G" check --json > "$OUT/nobody-check.json" 2>/dev/null
{
  echo "== snapshot, then replay it and compare with the live node"
  run snapshot --out /tmp/gdr/live.tar.gz
  "$N" "$G" check --root /tmp/gdr/live.tar.gz --json > /tmp/gdr/replay.json
  "$N" -e 'const f=(p)=>{const o=JSON.parse(require("fs").readFileSync(p,"utf8"));for(const k of ["time","durationMs","root"])delete o[k];return JSON.stringify(o)};console.log(f(process.argv[1])===f(process.argv[2])?"live check == replay of its snapshot":"DIFFERENT")' "$OUT/live-check.json" /tmp/gdr/replay.json
  run compare /tmp/gdr/live.tar.gz /
  echo "== the job's own view, standalone"
  run task --standalone
  ( ulimit -l 64; run task --standalone )
} > "$OUT/record.txt" 2>&1
cp /tmp/gdr/live.tar.gz "$OUT/live-snapshot.tar.gz" 2>/dev/null
# The 8-GPU/8-NIC HGX tree of the benchmark (test/gen), if packed as .device/hgx.tar.gz: the prolog's cost on a
# big node, timed against node -e 0 on this machine's CPUs.
if [ -f .device/hgx.tar.gz ]; then
  tar xzf .device/hgx.tar.gz -C /tmp/gdr
  "$N" "$G" baseline capture --root /tmp/gdr/hgx --class hgx --match '*' > /tmp/gdr/hgx-baseline.json 2>/dev/null
  printf '{"baseline":"/tmp/gdr/hgx-baseline.json","root":"/tmp/gdr/hgx","scontrol":"/bin/false","logFile":"/tmp/gdr/hgx.log"}\n' > /tmp/gdr/hgx-config.json
  {
    for k in 1 2 3; do
      for i in $(seq 10); do
        s=$(date +%s%N); env -i "$N" -e 0; e=$(date +%s%N); echo "node-e0 $(( (e-s)/1000 ))"
        s=$(date +%s%N); env -i SLURMD_NODENAME=h200 "$N" "$G" prolog --config /tmp/gdr/hgx-config.json >/dev/null; e=$(date +%s%N); echo "prolog-hgx $(( (e-s)/1000 ))"
      done
    done
    /usr/bin/time -f 'peak RSS %M KiB' env -i SLURMD_NODENAME=h200 "$N" "$G" prolog --config /tmp/gdr/hgx-config.json
  } > "$OUT/hgx-timing.txt" 2>&1
fi
ls -la "$OUT"
