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
"$NODE" "$CLI" epilog --config "$CONFIG"
rc=$?
[ "$rc" -eq 1 ] && exit 1
[ "$rc" -ne 0 ] && echo "gdrgate epilog: gdrgate exited $rc; not failing the Epilog" >&2
exit 0
