#!/usr/bin/env bash
# What the Epilog's holders rule (src/epilog/holders-rule.ts) meets on a real GPU node: every process holding a GPU's
# /dev/nvidiaN, /dev/nvidiactl, /dev/nvidia-uvm or an adapter's /dev/infiniband/uverbsN open, with its real uid, its
# cgroup and whether the rule counts it (a login user's, uid >= UID_MIN, not in a system.slice service but slurmd's).
# Then the same with a process of uid 65534 holding /dev/nvidia0, as a job's escaped process would. Writes
# $OUT/holders.txt. Needs nothing but bash and coreutils.
set -u
OUT=${OUT:-/tmp/gdrgate-device}
mkdir -p "$OUT"
P=$OUT/holders.txt
uid_min=$(sed -n 's/^[[:space:]]*UID_MIN[[:space:]]\+\([0-9]\+\)[[:space:]]*$/\1/p' /etc/login.defs 2>/dev/null | tail -1)
uid_min=${uid_min:-1000}
look() {
  echo "== $1 (UID_MIN $uid_min)"
  for d in /proc/[0-9]*; do
    held=$(ls -l "$d/fd" 2>/dev/null | grep -o -- '-> /dev/\(nvidia[^ ]*\|infiniband/uverbs[0-9]*\)' | sort -u | sed 's/-> //' | tr '\n' ' ')
    [ -n "$held" ] || continue
    uid=$(awk '/^Uid:/ {print $2}' "$d/status" 2>/dev/null)
    cg=$(grep -m1 '^0::' "$d/cgroup" 2>/dev/null | cut -c4-)
    counts=no
    if [ -n "$uid" ] && [ "$uid" -ge "$uid_min" ]; then
      case "$cg" in /system.slice/slurmd.service*) counts=yes ;; /system.slice/*.service*) counts=no ;; *) counts=yes ;; esac
    fi
    echo "pid ${d#/proc/} comm $(cat "$d/comm" 2>/dev/null) uid ${uid:-?} cgroup ${cg:-?} holds: ${held}counts: $counts"
  done
}
{
  echo "== $(date -u +%FT%TZ) $(uname -r); $(ls /dev/nvidia* /dev/infiniband 2>/dev/null | tr '\n' ' ')"
  systemctl list-units --type=service --no-pager 2>/dev/null | grep -i -E 'nvidia|dcgm|fabric' || echo "(no nvidia, dcgm or fabric manager unit listed)"
  look "as the node is"
  setpriv --reuid=65534 --regid=65534 --clear-groups /bin/bash -c 'exec 3</dev/nvidia0; exec sleep 30' &
  escaped=$!
  sleep 0.5
  look "with uid 65534 holding /dev/nvidia0 (pid $escaped)"
  kill "$escaped" 2>/dev/null
} >"$P" 2>&1
cat "$P"
