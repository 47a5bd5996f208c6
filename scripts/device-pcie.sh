#!/usr/bin/env bash
# What the PCIe-state checks must be held to on the live H200, read only: each NVIDIA GPU's `resource` and its parent
# bridge's, the GPU's config space (4 KiB, as root) as an `lspci -x`-style dump for `lspci -vvv -F` here, `nvidia-smi
# -q` (BAR1 Memory Usage: Total), the thermal class's cooling devices, the AER files of each GPU and the bridges
# above it with `lspci -vvv`'s AER lines (pcie-aer), every PCI function's ASPM `link/*` attributes, the ASPM policy
# and /proc/cmdline (pcie-payload), and the built gate's `check --json` of the new checks. lspci is not installed
# there: set LSPCI (and LD_LIBRARY_PATH) to a carried one, or /tmp/gdr/lspci/{lspci,lib} is tried. Run as root after
# `bash .device/unpack.sh` (/tmp/gdr/node runs /tmp/gdr/app/dist/cli.js). Changes no setting; writes eight files under
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
# pcie-aer: every aer_* file of each GPU and of each bridge up to its root port (none on a VM's GPU: said so), Device
# Control and the AER lines as lspci prints them, and the boot id the counters count from.
LS=${LSPCI:-}
[ -z "$LS" ] && [ -x /tmp/gdr/lspci/lspci ] && LS=/tmp/gdr/lspci/lspci && export LD_LIBRARY_PATH=/tmp/gdr/lspci/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
[ -z "$LS" ] && LS=$(command -v lspci || true)
{ echo "boot_id $(cat /proc/sys/kernel/random/boot_id 2>/dev/null)"
  for bdf in $gpus; do
    real=$(readlink -f "/sys/bus/pci/devices/$bdf")
    for dev in $(echo "${real#/sys/devices/}" | tr '/' '\n' | grep -E '^[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$'); do
      d=/sys/bus/pci/devices/$dev
      echo "== $dev (path of $bdf)"
      found=0
      for f in "$d"/aer_dev_correctable "$d"/aer_dev_nonfatal "$d"/aer_dev_fatal "$d"/aer_rootport_total_err_cor "$d"/aer_rootport_total_err_nonfatal "$d"/aer_rootport_total_err_fatal; do
        [ -e "$f" ] || continue; found=1; echo "-- ${f##*/}"; cat "$f"
      done
      [ "$found" = 1 ] || echo "-- no aer_* files"
      if [ -n "$LS" ]; then echo "-- lspci -vvv -s $dev (DevCtl, AER)"; "$LS" -vvv -s "$dev" 2>&1 | grep -E 'DevCtl:|Advanced Error|UESta|UEMsk|UESvrt|CESta|CEMsk' | sed -n '1,12p'
      else echo "-- lspci: not available (set LSPCI); pcie-config.txt has the config space for lspci -F"; fi
    done
  done; } > "$OUT/pcie-aer.txt" 2>&1
# pcie-payload: each function's link/ ASPM attributes (none where the kernel manages no link above it), the policy,
# the command line (pci=pcie_bus_*, pcie_aspm=), as the gate reads them.
{ for d in /sys/bus/pci/devices/*; do
    if [ -d "$d/link" ]; then for a in "$d"/link/*; do [ -f "$a" ] && echo "${d##*/} link/${a##*/} $(cat "$a" 2>&1)"; done
    else echo "${d##*/} link/ absent"; fi
  done
  echo "policy $(cat /sys/module/pcie_aspm/parameters/policy 2>&1)"
  echo "cmdline $(cat /proc/cmdline)"; } > "$OUT/pcie-aspm.txt" 2>&1
if [ -x /usr/bin/nvidia-smi ]; then timeout 60 /usr/bin/nvidia-smi -q > "$OUT/pcie-nvsmi-q.txt" 2>&1; echo "nvidia-smi -q exit $?" >> "$SUM"
else echo "nvidia-smi: not at /usr/bin/nvidia-smi" >> "$SUM"; fi
timeout 60 "$N" "$APP/dist/cli.js" check --only gpu-bar1,pcie-relaxed-ordering,pcie-throttle,pcie-aer,pcie-payload --json > "$OUT/pcie-check.json" 2>> "$SUM"
echo "gdrgate check --only gpu-bar1,pcie-relaxed-ordering,pcie-throttle,pcie-aer,pcie-payload exit $?" >> "$SUM"
{ echo "-- nvidia-smi BAR1 Total:"; grep -A1 'BAR1 Memory Usage' "$OUT/pcie-nvsmi-q.txt" 2>/dev/null | grep Total
  echo "-- gdrgate gpu-bar1:"; grep -E '"(subject|actual|status)"' "$OUT/pcie-check.json" | tr -d ' ' | paste -sd' ' -
  echo "-- pcie-aer files:"; grep -cE '^-- aer_' "$OUT/pcie-aer.txt"; grep -E '^-- no aer_|UESta|CESta|DevCtl' "$OUT/pcie-aer.txt" | sort | uniq -c
  echo "-- ASPM policy, link/ attributes, pci= options:"; grep -E '^(policy|cmdline)|link/[a-z]' "$OUT/pcie-aspm.txt"
  echo "-- lspci DevCtl/LnkCtl: run \`lspci -vvv -F pcie-config.txt | grep -E 'MaxPayload|LnkCtl:'\` here"; } >> "$SUM"
cat "$SUM"
