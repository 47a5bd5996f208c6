#!/bin/sh
# Slurm Prolog (and HealthCheckProgram, as health.sh) for gdrgate.
# Slurm runs it as root with no PATH, cwd in slurmd's log directory, stdin /dev/null: every path is absolute.
# Settings: NODE (node binary), CLI (gdrgate's dist/cli.js) and BLOB (the gate's startup snapshot, default
# gate.blob beside CLI; empty: never use one), overridden by a root-owned file beside this script with the same
# name and .conf instead of .sh (e.g. /etc/slurm/gdrgate-prolog.conf).
NODE=/usr/bin/node
CLI=/usr/lib/node_modules/gdrgate/dist/cli.js
CONFIG=/etc/gdrgate/config.json
BLOB=default
case "$0" in *.sh) [ -r "${0%.sh}.conf" ] && . "${0%.sh}.conf" ;; esac
[ "$BLOB" = default ] && BLOB="${CLI%/*}/gate.blob"
MODE=prolog
case "$0" in *health*) MODE=health ;; esac
# The fast path: the gate from its startup snapshot, every module already loaded and compiled. Its exit codes are
# gdrgate's own (0-3); any other means this Node could not start from the blob (14: made by another Node build;
# a signal: a damaged file) and nothing was judged: run the plain CLI, which logs that the blob needs remaking.
if [ -n "$BLOB" ] && [ -r "$BLOB" ]; then
  "$NODE" --snapshot-blob "$BLOB" "$MODE" --config "$CONFIG"
  rc=$?
  [ "$rc" -le 3 ] && exit "$rc"
  GDRGATE_BLOB_FAILED=$rc
  export GDRGATE_BLOB_FAILED
fi
exec "$NODE" "$CLI" "$MODE" --config "$CONFIG"
