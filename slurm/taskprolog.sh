#!/bin/sh
# Slurm TaskProlog for gdrgate (TaskProlog= in slurm.conf): runs as the job's user before every task, in the
# job's environment, before slurmstepd applies the propagated limits. Its stdout is Slurm's TaskProlog
# protocol: gdrgate writes only "print ..." lines, which reach the job's output.
# Settings: NODE (node binary), CLI (gdrgate's dist/cli.js), CONFIG, ROOT (the job view under another
# directory: tests only), FAIL=1 (a finding fails the task instead of warning), overridden by a root-owned
# file beside this script with the same name and .conf instead of .sh (e.g. /etc/slurm/gdrgate-taskprolog.conf).
NODE=/usr/bin/node
CLI=/usr/lib/node_modules/gdrgate/dist/cli.js
CONFIG=/etc/gdrgate/config.json
ROOT=
FAIL=0
# It runs as root (the TaskProlog: as the job's user): the .conf is sourced only if root owns it and its directory
# and no one else may write either; otherwise it is left unread, said on stderr, and the settings above stand.
trusted() { set -- $(/usr/bin/stat -L -c '%u:%a' -- "$1" "${1%/*}/" 2>/dev/null); [ $# -eq 2 ] && for m; do case "$m" in 0:*[2367]? | 0:*[2367]) return 1 ;; 0:*) ;; *) return 1 ;; esac; done; }
case "$0" in *.sh) if [ -r "${0%.sh}.conf" ]; then if trusted "${0%.sh}.conf"; then . "${0%.sh}.conf"; else echo "gdrgate: not reading ${0%.sh}.conf: want it and its directory owned by root and writable by root only" >&2; fi; fi ;; esac
set -- task --config "$CONFIG"
[ -n "$ROOT" ] && set -- "$@" --root "$ROOT"
[ "$FAIL" = 1 ] && set -- "$@" --fail
"$NODE" "$CLI" "$@"
rc=$?
# A non-zero TaskProlog fails the task: only a finding under FAIL=1 (exit 1) may do that, never a broken tool.
[ "$rc" -eq 1 ] && [ "$FAIL" = 1 ] && exit 1
[ "$rc" -ne 0 ] && echo "gdrgate taskprolog: gdrgate exited $rc; letting the task run" >&2
exit 0
