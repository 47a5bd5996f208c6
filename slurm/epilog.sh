#!/bin/bash
trap '' PIPE # an output whose reader left is an error to write, never the end of this script (141: a drain)
# Slurm Epilog for gdrgate (Epilog= in slurm.conf): removes the job's per-job state and, when the config has
# `probes`, runs the bandwidth probes its sampling policy selects (the node stays COMPLETING meanwhile: the
# probes have a budget, default 20 s).
# Slurm runs it as root with no PATH, cwd in slurmd's log directory, stdin /dev/null: every path is absolute.
# A non-zero Epilog makes Slurm drain the node with "Epilog error": only gdrgate's exit 1 (the node now
# carries gdrgate's own "gdrgate: bw-..." reason) passes through; a broken gdrgate never drains by itself.
# Settings: NODE (node binary), CLI (gdrgate's one-file dist/gdrgate.cjs: dist/cli.js loads chunks beside it that the ownership check below never sees), CONFIG, HARD_TIMEOUT (slurm/prolog.sh: seconds from the
# gate's start after which Node is killed and the Epilog fails open; above probes.budgetMs + deadlineMs), overridden
# by /etc/gdrgate/NAME.conf and then by a file beside this script, NAME being this script's name less .sh (e.g.
# /etc/gdrgate/gdrgate-epilog.conf, /etc/slurm/gdrgate-epilog.conf).
NODE=/usr/bin/node
CLI=/usr/lib/node_modules/gdrgate/dist/gdrgate.cjs
CONFIG=/etc/gdrgate/config.json
HARD_TIMEOUT=55
LOGGER=/usr/bin/logger
# It runs as root (the TaskProlog: as the job's user), so what it sources or starts from must be root's alone.
# rootonly [-n] PATH...: sets reals to where each PATH really lies and real to the first (readlink -f, asked only when
# a PATH passes a link; without -n a link may not rename the file: a .conf) and succeeds when those files and every
# directory above them are root's and writable by root only (a sticky directory such as /tmp may be writable by all:
# nobody can replace root's entry in it; a file never), one /usr/bin/stat for all. Then only root can change what
# reals name, so they are sourced or started, never PATH. Each PATH is a regular file (stat's %f 8xxx): a FIFO there
# would block its open for ever, and the Prolog's deadline with it. Its own IFS (a .conf may set one) and a line for
# every path asked, or it fails. (No /dev/fd: a TaskProlog started by slurmstepd after a change of user may not open its
# own /proc/self/fd.)
rootonly() {
  local IFS=$' \t\n' p d r m n=0 rename=1; local -a dirs=(); reals=()
  [ "$1" = -n ] && rename= && shift
  for p; do
    case "$p" in /*) ;; *) return 1 ;; esac
    r=$p d=$p
    while [ -n "$d" ]; do [ -L "$d" ] && { r=$(/usr/bin/readlink -f -- "$p" 2>/dev/null) && { [ -z "$rename" ] || [ "${r##*/}" = "${p##*/}" ]; } || return 1; break; }; d=${d%/*}; done
    reals+=("$r") d=$r
    while d=${d%/*}; [ -n "$d" ]; do dirs+=("$d"); done
  done
  real=${reals[0]-}
  for m in $(/usr/bin/stat -L -c '%f:%u:%a' -- "${reals[@]}" "${dirs[@]}" / 2>/dev/null || echo x); do
    ((n++ < ${#reals[@]})) && case "$m" in 8???:*:*[2367]? | 8???:*:*[2367]) return 1 ;; 8???:*) ;; *) return 1 ;; esac
    case "${m#*:}" in 0:[1357]???) ;; 0:*[2367]? | 0:*[2367]) return 1 ;; 0:*) ;; *) return 1 ;; esac
  done
  [ "$n" -gt 1 ] && [ "$n" = $((${#reals[@]} + ${#dirs[@]} + 1)) ]
}
# say PRIORITY MESSAGE: MESSAGE on stderr and, through LOGGER (tag gdrgate; empty: never), in the system log. What
# a wrapper says when it does not fail would otherwise reach nobody: slurmd logs a Prolog's or Epilog's output only
# when it fails (at SlurmdDebug=debug2 otherwise), and slurmstepd reads a TaskProlog's stderr with its stdout,
# keeping only export/print/unset lines (run_command, 22.05 to 26.05). Only on those paths: a process or two.
say() {
  printf '%s\n' "$2" >&2
  [ -n "$LOGGER" ] && [ -x "$LOGGER" ] || return 0
  local t=()
  [ -x /usr/bin/timeout ] && t=(/usr/bin/timeout 2)
  # (|| :, never its status: a .conf's set -e still holds while the settings are read.)
  "${t[@]}" "$LOGGER" -t gdrgate -p "$1" -- "$2${SLURM_JOB_ID:+ (job $SLURM_JOB_ID)}" </dev/null >/dev/null 2>&1 || :
}
# The settings: /etc/gdrgate/NAME.conf (NAME: this script's file name less .sh), then the .conf beside this script,
# which wins. A configless node gets the script alone (23.11+: slurmd fetches a bare-named Prolog/Epilog into
# SlurmdSpoolDir/conf-cache, never a file beside it), so the first is the place that does not move with it.
# (gdrgate_read is set here first: a TaskProlog inherits the job's environment.)
gdrgate_read=
# A .conf that ends this script while it is read (set -u and a name it never set, exit, a fatal error) fails open,
# and says so; its failing commands never end it (errexit holds for none of them behind ||).
trap 'gdrgate_rc=$?; set +eu; say daemon.err "gdrgate: $gdrgate_conf ended ${0##*/} (exit $gdrgate_rc) while its settings were read; not failing it"; exit 0' EXIT
for gdrgate_conf in "/etc/gdrgate/${0##*/}" "$0"; do
  case "$gdrgate_conf" in *.sh) gdrgate_conf=${gdrgate_conf%.sh}.conf ;; *) continue ;; esac
  [ "$gdrgate_conf" != "${gdrgate_read-}" ] && [ -r "$gdrgate_conf" ] || continue
  gdrgate_read=$gdrgate_conf
  if rootonly "$gdrgate_conf"; then . "$real" || :; else say daemon.warning "gdrgate: not reading $gdrgate_conf: want it a regular file and it, and every directory above where it lies, owned by root and writable by root only"; fi
done
trap - EXIT
# A .conf holds settings: shell options it sets are undone (under set -e, a gate that ends without a verdict would end
# this Epilog with its status, which drains the node).
set +eu +o pipefail +o posix
IFS=$' \t\n'
for gdrgate_v in NODE CLI CONFIG HARD_TIMEOUT LOGGER; do printf -v "$gdrgate_v" %s "${!gdrgate_v%$'\r'}"; done # a .conf saved with CRLF: each value less its \r
# gdrgate's exit code is its verdict only when gdrgate says so, in a pipe of this script's (GDRGATE_VERDICT_FD,
# src/host/verdict.ts): Node's own exit 1 (an exception before or outside gdrgate's code: the program missing,
# unreadable or cut short) is no drain of gdrgate's, and would drain the node with Slurm's "Epilog error". (bash, not
# sh, for this: a here-string's pipe opened read-write, and read -t 0 to look into it.)
vfd= drained=
unset GDRGATE_VERDICT_FD
{ exec 86<<<'' && exec 86<>"/proc/$$/fd/86" && [ -p "/proc/$$/fd/86" ] && read -r -u 86 _; } 2>/dev/null ||
  { exec 86<> <(:); } 2>/dev/null
[ -p "/proc/$$/fd/86" ] && vfd=86 && GDRGATE_VERDICT_FD=86 && export GDRGATE_VERDICT_FD
# verdict RC: whether RC (0-3) is the pipe's last line, gdrgate's verdict (no pipe: whether RC is 0-3, as before it);
# a line begun and never ended (a stray writer's) is waited for at most 1 s, never for ever.
verdict() { local v= l n=0; [ -n "$vfd" ] || { [ "$1" -le 3 ]; return; }; while ((n++ < 64)) && read -r -t 0 -u 86 && read -r -t 1 -u 86 l; do [ "$l" = drained ] && drained=1 || v=$l; done; [ "$1" -le 3 ] && [ "$v" = "$1" ]; }
# Node and the program are root's alone, and started from where they really lie: this runs as root.
if ! rootonly -n "$NODE" "$CLI"; then
  for bad in "$NODE" "$CLI"; do rootonly -n "$bad" || break; done
  [ -e "$bad" ] && bad="$bad, or a directory above where it lies, is not root's alone or not a regular file" || bad="$bad is missing"
  say daemon.err "gdrgate epilog: not starting $NODE $CLI ($bad): want each a regular file there, and it and every directory above where it lies owned by root and writable by root only; not failing the Epilog"
  exit 0
fi
# The hard bound (slurm/prolog.sh says why): Node under /usr/bin/timeout until HARD_TIMEOUT seconds after its
# start, on the uptime (0 or empty: none; malformed: 55); a 137 once that had passed is that kill: said, and
# the Epilog fails open. (Started in the background and waited for: bash's own "Killed" notice goes with wait's
# stderr, not slurmd's log.)
case "$HARD_TIMEOUT" in '') HARD_TIMEOUT=0 ;; *[!0-9]*) HARD_TIMEOUT=55 ;; esac
HARD_TIMEOUT=${HARD_TIMEOUT#"${HARD_TIMEOUT%%[!0]*}"}
[ "${#HARD_TIMEOUT}" -gt 6 ] && HARD_TIMEOUT=999999
HARD_TIMEOUT=$((10#0$HARD_TIMEOUT))
upcs() { local u=; { read -r u _ </proc/uptime; } 2>/dev/null; u=${u/[.,]/}; case "$u" in '' | *[!0-9]*) u=${EPOCHSECONDS}00 ;; esac; REPLY=$((10#$u)); }
upcs && t0=$REPLY
upcs
b0=$REPLY left=$(((HARD_TIMEOUT * 100 - REPLY + 10#$t0 + 99) / 100)) hard=()
((left < 1)) && left=1
((HARD_TIMEOUT > 0)) && [ -x /usr/bin/timeout ] && hard=(/usr/bin/timeout --foreground -s KILL "$left")
"${hard[@]}" "${reals[0]}" "${reals[1]}" epilog --config "$CONFIG" &
wait $! 2>/dev/null
rc=$?
if [ "$rc" = 137 ] && [ "${#hard[@]}" -gt 0 ] && upcs && ((REPLY - b0 >= left * 100 - 5)); then
  say daemon.err "gdrgate epilog: $NODE killed at the hard bound, ${HARD_TIMEOUT}s after the gate started, without a verdict; not failing the Epilog"
  exit 0
fi
# A timeout that fails itself (125) or cannot start Node (126, 127): once more without it, said (slurm/prolog.sh).
case "$rc:${#hard[@]}" in 12[5-7]:[1-9]*)
  say daemon.warning "gdrgate epilog: no verdict (exit $rc) under ${hard[0]}: the gate once more without the hard bound"
  "${reals[0]}" "${reals[1]}" epilog --config "$CONFIG" &
  wait $! 2>/dev/null
  rc=$?
  ;;
esac
if verdict "$rc"; then
  [ "$rc" -eq 1 ] && exit 1
  [ "$rc" -ne 0 ] && say daemon.err "gdrgate epilog: gdrgate exited $rc; not failing the Epilog"
  exit 0
fi
if [ "$rc" -gt 128 ]; then why="killed by signal $((rc - 128))"; elif [ "$rc" -le 3 ]; then why="exit $rc, not written by gdrgate"; else why="exit $rc"; fi
say daemon.err "gdrgate epilog: $NODE ended without a verdict ($why); not failing the Epilog"
exit 0
