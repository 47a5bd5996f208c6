#!/usr/bin/env bash
# NCCL's own view of the node against gdrgate's NCCL topology file, on a node with one GPU, Python and PyTorch
# (which ships NCCL). Reads only; changes no setting. Every step has its own timeout and a missing piece is said,
# never fatal. Usage (GDRGATE: a command that runs gdrgate, e.g. "node /tmp/gdr/app/dist/cli.js"):
#   OUT=/tmp/out GDRGATE="node dist/cli.js" bash scripts/device-nccl.sh
# Writes under $OUT:
#   nccl-dump.xml     NCCL_TOPO_DUMP_FILE of a one-process communicator (world size 1, one all_reduce)
#   nccl-dump.log     that run's output (NCCL_DEBUG=INFO, INIT and GRAPH)
#   gdrgate.xml       gdrgate topo --nccl-xml
#   nccl-load.log     the communicator again with NCCL_TOPO_FILE=gdrgate.xml (INFO, INIT and GRAPH)
#   nccl-load-dump.xml  NCCL's view in that second run (to see that it reached the same tree)
#   nccl-diff.txt     scripts/nccl-xml-diff.mjs gdrgate.xml nccl-dump.xml (when dist/ is built here)
#   nccl-summary.txt  what this script printed
# Afterwards: copy nccl-dump.xml beside the live captures (test/fixtures/device-h200-live/) with the summary.
set -u
OUT=${OUT:-/tmp/gdrgate-device}
mkdir -p "$OUT"
PY=${PYTHON:-$(command -v python3 || command -v python || true)}
GDRGATE=${GDRGATE:-}
HERE=$(cd "$(dirname "$0")/.." && pwd)
say() { echo "device-nccl: $*" | tee -a "$OUT/nccl-summary.txt"; }
: > "$OUT/nccl-summary.txt"
say "$(date -u +%FT%TZ) $(uname -r) OUT=$OUT"

# One process, one GPU, one all_reduce: enough for NCCL to build (and dump) its topology.
cat > "$OUT/nccl-comm.py" <<'PY'
import os, sys
try:
    import torch, torch.distributed as dist
except Exception as e:
    print(f"no torch: {e}"); sys.exit(3)
if not torch.cuda.is_available():
    print("torch sees no CUDA device"); sys.exit(3)
print("torch", torch.__version__, "nccl", ".".join(map(str, torch.cuda.nccl.version())))
os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
os.environ.setdefault("MASTER_PORT", str(29500 + os.getpid() % 1000))
torch.cuda.set_device(0)
try:
    dist.init_process_group("nccl", rank=0, world_size=1, device_id=torch.device("cuda", 0))
except TypeError:  # torch before 2.3 has no device_id
    dist.init_process_group("nccl", rank=0, world_size=1)
x = torch.ones(1 << 20, device="cuda")
dist.all_reduce(x)
torch.cuda.synchronize()
print("all_reduce ok:", float(x[0]))
dist.destroy_process_group()
PY

run_comm() { # $1: log file; the rest: environment assignments
  local log=$1; shift
  if [ -z "$PY" ]; then say "no python on PATH: communicator not run"; return 3; fi
  env "$@" NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,GRAPH,ENV timeout 180 "$PY" "$OUT/nccl-comm.py" > "$log" 2>&1
  local rc=$?
  say "communicator ($*): exit $rc$([ $rc = 124 ] && echo ' (timed out after 180 s)'), log $(basename "$log")"
  grep -E '^(torch|all_reduce ok|no torch|torch sees)' "$log" | sed 's/^/  /' | tee -a "$OUT/nccl-summary.txt"
  return $rc
}

# 1. NCCL's own view.
run_comm "$OUT/nccl-dump.log" NCCL_TOPO_DUMP_FILE="$OUT/nccl-dump.xml"
[ -s "$OUT/nccl-dump.xml" ] && say "NCCL dump: $(wc -l < "$OUT/nccl-dump.xml") lines" || say "no NCCL dump written (see nccl-dump.log)"

# 2. gdrgate's file.
if [ -z "$GDRGATE" ]; then
  say "GDRGATE unset: gdrgate topo --nccl-xml not run"
else
  # Word splitting on purpose: GDRGATE may be "node /path/cli.js".
  # shellcheck disable=SC2086
  ( cd / && timeout 60 $GDRGATE topo --nccl-xml ) > "$OUT/gdrgate.xml" 2> "$OUT/gdrgate.err"
  say "gdrgate topo --nccl-xml: exit $?, $(wc -l < "$OUT/gdrgate.xml") lines$([ -s "$OUT/gdrgate.err" ] && echo ", stderr in gdrgate.err")"
fi

# 3. NCCL reading gdrgate's file: it must load it without a warning and reach the same tree.
if [ -s "$OUT/gdrgate.xml" ]; then
  run_comm "$OUT/nccl-load.log" NCCL_TOPO_FILE="$OUT/gdrgate.xml" NCCL_TOPO_DUMP_FILE="$OUT/nccl-load-dump.xml"
  say "NCCL on gdrgate's file: $(grep -c 'WARN' "$OUT/nccl-load.log") WARN line(s); loading lines:"
  grep -E 'TOPO_FILE|Loading topology|WARN' "$OUT/nccl-load.log" | head -n 20 | sed 's/^/  /' | tee -a "$OUT/nccl-summary.txt"
else
  say "no gdrgate.xml: NCCL_TOPO_FILE run skipped"
fi

# 4. Element by element (needs dist/ built where this runs).
if [ -s "$OUT/gdrgate.xml" ] && [ -s "$OUT/nccl-dump.xml" ] && [ -f "$HERE/dist/topo/nccl-diff.js" ] && command -v node > /dev/null; then
  timeout 60 node "$HERE/scripts/nccl-xml-diff.mjs" "$OUT/gdrgate.xml" "$OUT/nccl-dump.xml" > "$OUT/nccl-diff.txt" 2>&1
  say "diff gdrgate.xml nccl-dump.xml: exit $? ($(tail -n 1 "$OUT/nccl-diff.txt"))"
  [ -s "$OUT/nccl-load-dump.xml" ] && { timeout 60 node "$HERE/scripts/nccl-xml-diff.mjs" "$OUT/nccl-load-dump.xml" "$OUT/nccl-dump.xml" > "$OUT/nccl-load-diff.txt" 2>&1; say "diff nccl-load-dump.xml nccl-dump.xml: exit $? ($(tail -n 1 "$OUT/nccl-load-diff.txt"))"; }
else
  say "diff not run (a file missing, or no dist/ or node here): compare later with scripts/nccl-xml-diff.mjs"
fi
exit 0
