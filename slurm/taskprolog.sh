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
case "$0" in *.sh) [ -r "${0%.sh}.conf" ] && . "${0%.sh}.conf" ;; esac
set -- task --config "$CONFIG"
[ -n "$ROOT" ] && set -- "$@" --root "$ROOT"
[ "$FAIL" = 1 ] && set -- "$@" --fail
"$NODE" "$CLI" "$@"
rc=$?
# A non-zero TaskProlog fails the task: only a finding under FAIL=1 (exit 1) may do that, never a broken tool.
[ "$rc" -eq 1 ] && [ "$FAIL" = 1 ] && exit 1
[ "$rc" -ne 0 ] && echo "gdrgate taskprolog: gdrgate exited $rc; letting the task run" >&2
exit 0
