#!/bin/sh
# Slurm Epilog for gdrgate (Epilog= in slurm.conf): removes the job's per-job state and, when the config has
# `probes`, runs the bandwidth probes its sampling policy selects (the node stays COMPLETING meanwhile: the
# probes have a budget, default 20 s).
# Slurm runs it as root with no PATH, cwd in slurmd's log directory, stdin /dev/null: every path is absolute.
# A non-zero Epilog makes Slurm drain the node with "Epilog error": only gdrgate's exit 1 (the node now
# carries gdrgate's own "gdrgate: bw-..." reason) passes through; a broken gdrgate never drains by itself.
# Settings: NODE (node binary), CLI (gdrgate's dist/cli.js), CONFIG, overridden by a root-owned file beside
# this script with the same name and .conf instead of .sh (e.g. /etc/slurm/gdrgate-epilog.conf).
NODE=/usr/bin/node
CLI=/usr/lib/node_modules/gdrgate/dist/cli.js
CONFIG=/etc/gdrgate/config.json
case "$0" in *.sh) [ -r "${0%.sh}.conf" ] && . "${0%.sh}.conf" ;; esac
"$NODE" "$CLI" epilog --config "$CONFIG"
rc=$?
[ "$rc" -eq 1 ] && exit 1
[ "$rc" -ne 0 ] && echo "gdrgate epilog: gdrgate exited $rc; not failing the Epilog" >&2
exit 0
