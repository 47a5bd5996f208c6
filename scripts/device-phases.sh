#!/usr/bin/env bash
# Where the no-agent Prolog's time goes on a GPU node, by phase (bench/perf-phases.mjs): installs the .deb in
# .device/ (as scripts/device-package.sh), then ROUNDS (default 20) runs under `perf record -g` of each of node -e 0
# (the Node the package carries), Node from an empty startup snapshot made here, the package's blob saying its
# version, and a passing Prolog from that blob on the live node (the config live_gate writes), in the environment
# slurmd gives a Prolog. Uses the node's perf, else .device/perf.tar.xz (scripts/pack-perf.sh). Writes
# $OUT/phases.txt and the recordings' text in $OUT/phases.tar.xz; purges the package after.
set -u
. "${0%/*}/device-lib.sh"
begin phases.txt
PERF=$(command -v perf || true)
if [ -z "$PERF" ] || ! "$PERF" --version >/dev/null 2>&1; then
  rm -rf /tmp/gdr-perf && mkdir -p /tmp/gdr-perf && tar -C /tmp/gdr-perf -xJf .device/perf.tar.xz
  L=$(ls /tmp/gdr-perf/perf/ld-linux-*.so.* | head -n 1)
  printf '#!/bin/sh\nexec %s --library-path /tmp/gdr-perf/perf /tmp/gdr-perf/perf/perf "$@"\n' "$L" >/tmp/gdr-perf/run && chmod 755 /tmp/gdr-perf/run
  PERF=/tmp/gdr-perf/run
fi
{
  echo "perf: $PERF ($("$PERF" --version 2>&1))"
  dpkg -i .device/gdrgate_*_amd64.deb >/dev/null 2>&1; echo "dpkg -i: exit $?"
  /usr/sbin/gdrgate --version
  W=/tmp/gdr-phases && rm -rf $W && mkdir -p -m 755 $W
  live_gate "$W" "$P"
  N=/usr/lib/gdrgate/node
  . bench/phases-lib.sh
  empty_blob
  job=5000
  record "$OUT/phases/node-e0" 65534 $N -e 0
  record "$OUT/phases/empty-snapshot" 65534 $N --snapshot-blob $W/empty.blob
  record "$OUT/phases/blob-version" 65534 $N --snapshot-blob /var/lib/gdrgate/gate.blob version
  record "$OUT/phases/prolog-blob" 65534 $N --snapshot-blob /var/lib/gdrgate/gate.blob prolog --config /etc/gdrgate/config.json
  echo "Prologs from the blob: $(grep -c '"startup":"snapshot"' /var/log/gdrgate/gdrgate.log), healthy: $(grep -c '"result":"healthy"' /var/log/gdrgate/gdrgate.log)"
  echo "their durationMs: $(grep -o '"durationMs":[0-9]*' /var/log/gdrgate/gdrgate.log | cut -d: -f2 | sort -n | tr '\n' ' ')"
  (cd "$OUT/phases" && $N "$OLDPWD/bench/perf-phases.mjs" node-e0 empty-snapshot blob-version prolog-blob)
  tar -C "$OUT" -cJf "$OUT/phases.tar.xz" phases && rm -rf "$OUT/phases"
  dpkg --purge gdrgate >/dev/null 2>&1; echo "dpkg --purge: exit $?"
} >>"$P" 2>&1
cat "$P"
