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
# It runs as root (the TaskProlog: as the job's user), so what it sources or starts from must be root's alone.
# rootonly FD PATH: the file open on FD (opened from PATH) is root's and writable by root only, and so is every
# directory above where it really lies. /dev/fd/FD is the opened file itself, so a swap after the open changes
# nothing; where PATH passes a link, the opened file's real path is asked (readlink) and a link may not rename it.
# A sticky directory (/tmp) may be writable by all: nobody can rename or remove root's entry below it.
rootonly() {
  case "$2" in /*) ;; *) return 1 ;; esac
  real=$2 d=$2
  while [ -n "$d" ]; do [ -L "$d" ] && { real=$(/usr/bin/readlink "/dev/fd/$1" 2>/dev/null) && [ "${real##*/}" = "${2##*/}" ] || return 1; break; }; d=${d%/*}; done
  d=$real; set -- "/dev/fd/$1"
  while d=${d%/*}; [ -n "$d" ]; do set -- "$@" "$d"; done
  for m in $(/usr/bin/stat -L -c '%u:%a' -- "$@" / 2>/dev/null || echo x); do case "$m" in 0:[1357]???) ;; 0:*[2367]? | 0:*[2367]) return 1 ;; 0:*) ;; *) return 1 ;; esac; done
}
case "$0" in *.sh) if [ -r "${0%.sh}.conf" ] && exec 9<"${0%.sh}.conf"; then if rootonly 9 "${0%.sh}.conf"; then . /dev/fd/9; else echo "gdrgate: not reading ${0%.sh}.conf: want it, and every directory above where it lies, owned by root and writable by root only" >&2; fi; exec 9<&-; fi ;; esac
set -- task --config "$CONFIG"
[ -n "$ROOT" ] && set -- "$@" --root "$ROOT"
[ "$FAIL" = 1 ] && set -- "$@" --fail
"$NODE" "$CLI" "$@"
rc=$?
# A non-zero TaskProlog fails the task: only a finding under FAIL=1 (exit 1) may do that, never a broken tool.
[ "$rc" -eq 1 ] && [ "$FAIL" = 1 ] && exit 1
[ "$rc" -ne 0 ] && echo "gdrgate taskprolog: gdrgate exited $rc; letting the task run" >&2
exit 0
