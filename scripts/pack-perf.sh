#!/usr/bin/env bash
# Packs this machine's perf with every library it loads (and the loader) into .device/perf.tar.xz, for a GPU node
# that has no perf (scripts/device-phases.sh unpacks it and runs it through the packed loader).
set -eu
cd "$(dirname "$0")/.."
P=$(command -v perf)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/perf" .device
cp -L "$P" "$T/perf/perf"
ldd "$P" | awk '/=> \// { print $3 } /^[ \t]*\/lib/ { print $1 }' | while read -r lib; do cp -L "$lib" "$T/perf/"; done
tar -C "$T" -cJf .device/perf.tar.xz perf
ls -la .device/perf.tar.xz
