#!/bin/sh
# Slurm Epilog for gdrgate (Epilog= in slurm.conf): removes the job's per-job state and, when the config has
# `probes`, runs the bandwidth probes its sampling policy selects (the node stays COMPLETING meanwhile: the
# probes have a budget, default 20 s).
# Slurm runs it as root with no PATH, cwd in slurmd's log directory, stdin /dev/null: every path is absolute.
# A non-zero Epilog makes Slurm drain the node with "Epilog error": only gdrgate's exit 1 (the node now
# carries gdrgate's own "gdrgate: bw-..." reason) passes through; a broken gdrgate never drains by itself.
# Settings: NODE (node binary), CLI (gdrgate's dist/cli.js), CONFIG, overridden by a file beside
# this script with the same name and .conf instead of .sh (e.g. /etc/slurm/gdrgate-epilog.conf).
NODE=/usr/bin/node
CLI=/usr/lib/node_modules/gdrgate/dist/cli.js
CONFIG=/etc/gdrgate/config.json
# It runs as root (the TaskProlog: as the job's user): the .conf is sourced only if root owns it and its directory
# and no one else may write either; otherwise it is left unread, said on stderr, and the settings above stand.
trusted() { set -- $(/usr/bin/stat -L -c '%u:%a' -- "$1" "${1%/*}/" 2>/dev/null); [ $# -eq 2 ] && for m; do case "$m" in 0:*[2367]? | 0:*[2367]) return 1 ;; 0:*) ;; *) return 1 ;; esac; done; }
case "$0" in *.sh) if [ -r "${0%.sh}.conf" ]; then if trusted "${0%.sh}.conf"; then . "${0%.sh}.conf"; else echo "gdrgate: not reading ${0%.sh}.conf: want it and its directory owned by root and writable by root only" >&2; fi; fi ;; esac
"$NODE" "$CLI" epilog --config "$CONFIG"
rc=$?
[ "$rc" -eq 1 ] && exit 1
[ "$rc" -ne 0 ] && echo "gdrgate epilog: gdrgate exited $rc; not failing the Epilog" >&2
exit 0
