#!/bin/sh
# Slurm Prolog (and HealthCheckProgram, as health.sh) for gdrgate.
# Slurm runs it as root with no PATH, cwd in slurmd's log directory, stdin /dev/null: every path is absolute.
# Settings: NODE (node binary) and CLI (gdrgate's dist/cli.js), overridden by a root-owned file beside this
# script with the same name and .conf instead of .sh (e.g. /etc/slurm/gdrgate-prolog.conf).
NODE=/usr/bin/node
CLI=/usr/lib/node_modules/gdrgate/dist/cli.js
CONFIG=/etc/gdrgate/config.json
case "$0" in *.sh) [ -r "${0%.sh}.conf" ] && . "${0%.sh}.conf" ;; esac
MODE=prolog
case "$0" in *health*) MODE=health ;; esac
exec "$NODE" "$CLI" "$MODE" --config "$CONFIG"
