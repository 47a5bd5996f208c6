#!/usr/bin/env bash
# What the PCIe-state checks must be held to on the live H200, read only: each NVIDIA GPU's `resource` and its parent
# bridge's, the GPU's config space (4 KiB, as root) as an `lspci -x`-style dump for `lspci -vvv -F` here, `nvidia-smi
# -q` (BAR1 Memory Usage: Total), the thermal class's cooling devices, and the built gate's `check --json` of the
# new checks. Run as root after
# `bash .device/unpack.sh` (/tmp/gdr/node runs /tmp/gdr/app/dist/cli.js). Changes no setting; writes six files under
# $OUT, flat; the lead copies them into test/fixtures/device-h200-live/ under the same names
# (test/checks/gpu-bar1.device.test.ts reads them there).
set -u
OUT=${OUT:-/tmp/gdrgate-device-pcie}
mkdir -p "$OUT"
N=/tmp/gdr/node
APP=/tmp/gdr/app
SUM="$OUT/pcie-summary.txt"
: > "$OUT/pcie-resource.txt"; : > "$OUT/pcie-config.txt"
echo "== $(date -u +%FT%TZ) $(uname -r) uid=$(id -u)" > "$SUM"
gpus=""
for d in /sys/bus/pci/devices/*; do
  [ "$(cat "$d/vendor" 2>/dev/null)" = 0x10de ] || continue
  case "$(cat "$d/class" 2>/dev/null)" in 0x0300*|0x0302*) ;; *) continue ;; esac
  bdf=${d##*/}; gpus="$gpus $bdf"
  real=$(readlink -f "$d"); parent=${real%/*}; parent=${parent##*/}
  { echo "== $bdf"; cat "$d/resource"
    case "$parent" in pci*) echo "== $bdf parent $parent (root bus: no bridge window)" ;;
      *) echo "== $bdf parent $parent"; cat "/sys/bus/pci/devices/$parent/resource" ;; esac; } >> "$OUT/pcie-resource.txt"
  # lspci -x layout (offset: 16 bytes), which `lspci -F` reads back: one header line per device.
  { echo "$bdf VGA compatible controller: NVIDIA Corporation Device $(cat "$d/device")"
    od -An -v -tx1 -w16 "$d/config" | awk '{ printf "%03x:%s\n", (NR - 1) * 16, substr($0, 1) }'; echo; } >> "$OUT/pcie-config.txt"
done
echo "GPUs:${gpus:- none}" >> "$SUM"
# The thermal class (pcie-throttle): each cooling device's type and states, as the gate reads them.
for c in /sys/class/thermal/cooling_device*; do [ -e "$c/type" ] && echo "${c##*/} $(cat "$c/type") $(cat "$c/cur_state" 2>/dev/null) $(cat "$c/max_state" 2>/dev/null)"; done > "$OUT/pcie-thermal.txt" 2>&1
if [ -x /usr/bin/nvidia-smi ]; then timeout 60 /usr/bin/nvidia-smi -q > "$OUT/pcie-nvsmi-q.txt" 2>&1; echo "nvidia-smi -q exit $?" >> "$SUM"
else echo "nvidia-smi: not at /usr/bin/nvidia-smi" >> "$SUM"; fi
timeout 60 "$N" "$APP/dist/cli.js" check --only gpu-bar1,pcie-relaxed-ordering,pcie-throttle --json > "$OUT/pcie-check.json" 2>> "$SUM"
echo "gdrgate check --only gpu-bar1,pcie-relaxed-ordering,pcie-throttle exit $?" >> "$SUM"
{ echo "-- nvidia-smi BAR1 Total:"; grep -A1 'BAR1 Memory Usage' "$OUT/pcie-nvsmi-q.txt" 2>/dev/null | grep Total
  echo "-- gdrgate gpu-bar1:"; grep -E '"(subject|actual|status)"' "$OUT/pcie-check.json" | tr -d ' ' | paste -sd' ' -; } >> "$SUM"
cat "$SUM"
