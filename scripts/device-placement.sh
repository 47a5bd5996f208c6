#!/usr/bin/env bash
# Placement on the live H200, run once by the lead as root after `bash .device/unpack.sh` (no network, no lspci):
#   bash .device/unpack.sh && bash scripts/device-placement.sh
# Reads only; changes no setting. Writes 5 flat files under $OUT (copy them into test/fixtures/device-h200-live/
# under the same names; test/task/placement-live.test.ts compares them):
#   placement-information.txt  every /proc/driver/nvidia/gpus/*/information, each after a "== <path>" line
#   placement-nvsmi.csv        nvidia-smi --query-gpu=index,pci.bus_id --format=csv,noheader
#   placement-nvsmi-q.txt      the "Minor Number" and "Bus Id" lines of nvidia-smi -q (minor → BDF, NVIDIA's view)
#   placement-task.txt         gdrgate task --standalone under taskset -c, as root and as uid 65534, each with the
#                              kernel's own Cpus_allowed_list under the same taskset
#   placement-summary.txt      what this script printed
set -u
OUT=${OUT:-/tmp/gdrgate-device}
mkdir -p "$OUT"
N=/tmp/gdr/node
G=/tmp/gdr/app/dist/cli.js
chmod -R a+rX /tmp/gdr
T0=$(date +%s)
for f in /proc/driver/nvidia/gpus/*/information; do echo "== $f"; cat "$f"; done > "$OUT/placement-information.txt" 2>&1
timeout 60 nvidia-smi --query-gpu=index,pci.bus_id --format=csv,noheader > "$OUT/placement-nvsmi.csv" 2>&1
timeout 60 nvidia-smi -q 2>&1 | grep -E '^\s*(Minor Number|Bus Id)\s*:' > "$OUT/placement-nvsmi-q.txt"
# The GPU's local CPUs, and CPUs to pin to: the first local one, the last online one, and the first two.
LOCAL=$(cat /sys/bus/pci/devices/"$(ls /proc/driver/nvidia/gpus | head -n 1)"/local_cpulist 2>/dev/null)
LAST=$(( $(nproc --all) - 1 ))
FIRST=${LOCAL%%[-,]*}
MINOR=$(awk '/^Device Minor:/ {print $3; exit}' "$OUT/placement-information.txt")
{
  echo "== local_cpulist $LOCAL, SLURM_JOB_GPUS=$MINOR"
  for spec in "$FIRST" "$LAST" "0-1"; do
    for who in root nobody; do
      as=(); [ "$who" = nobody ] && as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
      echo "== taskset -c $spec ($who)"
      "${as[@]}" taskset -c "$spec" grep -E '^(Cpus|Mems)_allowed_list' /proc/self/status
      ( cd / && SLURM_JOB_GPUS=$MINOR timeout 30 "${as[@]}" taskset -c "$spec" "$N" "$G" task --standalone --root / ); echo "(exit $?)"
    done
  done
} > "$OUT/placement-task.txt" 2>&1
{
  echo "device-placement: $(date -u +%FT%TZ) $(uname -r), $(( $(date +%s) - T0 )) s"
  echo "minors (module):  $(grep -E '^(Bus Location|Device Minor):' "$OUT/placement-information.txt" | awk '{print $NF}' | paste -sd' ')"
  echo "nvidia-smi:       $(paste -sd' ' "$OUT/placement-nvsmi.csv")"
  echo "nvidia-smi -q:    $(awk -F': ' '{print $2}' "$OUT/placement-nvsmi-q.txt" | paste -sd' ')"
  echo "placement lines:"; grep -E '^== taskset|Cpus_allowed_list|job-placement' "$OUT/placement-task.txt" | sed 's/^/  /'
} > "$OUT/placement-summary.txt"
cat "$OUT/placement-summary.txt"
