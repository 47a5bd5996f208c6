#!/bin/bash
# Slurm TaskProlog for gdrgate (TaskProlog= in slurm.conf): runs as the job's user before every task, in the
# job's environment, before slurmstepd applies the propagated limits. Its stdout is Slurm's TaskProlog
# protocol: gdrgate writes only "print ..." lines, which reach the job's output.
# Settings: NODE (node binary), CLI (gdrgate's dist/cli.js), BLOB (the gate's startup snapshot, default gate.blob
# beside CLI; empty: never use one), CONFIG, ROOT (the job view under another
# directory: tests only), FAIL=1 (a finding fails the task instead of warning), overridden by root-owned files:
# /etc/gdrgate/NAME.conf, then one beside this script, NAME being its name less .sh (e.g.
# /etc/gdrgate/gdrgate-taskprolog.conf, /etc/slurm/gdrgate-taskprolog.conf),
# STATE (the config's stateDir: where the Prolog left this job's directory, owned by the job's user; empty: judge
# every task anew) and WAIT (seconds a task waits for another task's judgment of the same view, default 10).
# Slurm runs it for every task of every step: the first task of a view judges (Node, ~0.2 s of CPU) and keeps its
# answer in the job's directory; every other task with the same view (step, CPUs, memory nodes, GPUs, memlock)
# prints that answer from bash alone. The Epilog removes the directory with the job.
NODE=/usr/bin/node
CLI=/usr/lib/node_modules/gdrgate/dist/cli.js
BLOB=default
CONFIG=/etc/gdrgate/config.json
ROOT=
FAIL=0
STATE=/run/gdrgate
WAIT=10
# It runs as root (the TaskProlog: as the job's user), so what it sources or starts from must be root's alone.
# rootonly PATH: sets $real to where PATH really lies (readlink -f, asked only when PATH passes a link; a link may
# not rename the file) and succeeds when that file and every directory above it are root's and writable by root
# only (a sticky directory such as /tmp may be writable by all: nobody can replace root's entry in it). Then only
# root can change what $real names, so it is $real that is sourced or started, never PATH. (No /dev/fd: a TaskProlog
# started by slurmstepd after a change of user may not open its own /proc/self/fd.)
rootonly() {
  case "$1" in /*) ;; *) return 1 ;; esac
  real=$1 d=$1
  while [ -n "$d" ]; do [ -L "$d" ] && { real=$(/usr/bin/readlink -f -- "$1" 2>/dev/null) && [ "${real##*/}" = "${1##*/}" ] || return 1; break; }; d=${d%/*}; done
  d=$real; set -- "$real"
  while d=${d%/*}; [ -n "$d" ]; do set -- "$@" "$d"; done
  for m in $(/usr/bin/stat -L -c '%u:%a' -- "$@" / 2>/dev/null || echo x); do case "$m" in 0:[1357]???) ;; 0:*[2367]? | 0:*[2367]) return 1 ;; 0:*) ;; *) return 1 ;; esac; done
}
# The settings: /etc/gdrgate/NAME.conf (NAME: this script's file name less .sh), then the .conf beside this script,
# which wins. A configless node gets the script alone (23.11+: slurmd fetches a bare-named Prolog/Epilog into
# SlurmdSpoolDir/conf-cache, never a file beside it), so the first is the place that does not move with it.
# (gdrgate_read is set here first: a TaskProlog inherits the job's environment.)
gdrgate_read=
for gdrgate_conf in "/etc/gdrgate/${0##*/}" "$0"; do
  case "$gdrgate_conf" in *.sh) gdrgate_conf=${gdrgate_conf%.sh}.conf ;; *) continue ;; esac
  [ "$gdrgate_conf" != "${gdrgate_read-}" ] && [ -r "$gdrgate_conf" ] || continue
  gdrgate_read=$gdrgate_conf
  if rootonly "$gdrgate_conf"; then . "$real"; else echo "gdrgate: not reading $gdrgate_conf: want it, and every directory above where it lies, owned by root and writable by root only" >&2; fi
done
# A .conf holds settings: shell options it sets are undone (under set -e, a gate that ends without a verdict would end
# this script with its status, which fails the task or drains the node; in POSIX mode, a failed exec's open would too).
set +eu +o pipefail +o posix
set -- task --config "$CONFIG"
[ -n "$ROOT" ] && set -- "$@" --root "$ROOT"
[ "$FAIL" = 1 ] && set -- "$@" --fail
[ "$BLOB" = default ] && BLOB="${CLI%/*}/gate.blob"
# A judgment starts Node: from the node's startup snapshot (made on this node, root's alone, as slurm/prolog.sh uses
# it), else the plain program. An exit above gdrgate's own 0-3 means the blob judged nothing (14: refused; 10:
# stale; a signal: damaged): its output is dropped and the plain program answers instead.
judge() {
  local said
  if [ -n "$BLOB" ] && [ -r "$BLOB" ] && rootonly "$BLOB"; then
    said=$("$NODE" --snapshot-blob "$real" "$@")
    rc=$?
    if [ "$rc" -le 3 ]; then
      [ -z "$said" ] || printf '%s\n' "$said"
      return "$rc"
    fi
  fi
  "$NODE" "$CLI" "$@"
}
# The task's view: what gdrgate task judges that may differ between tasks of a job on this node.
cpus= mems=
while IFS=$'\t' read -r k v; do case "$k" in Cpus_allowed_list:) cpus=$v ;; Mems_allowed_list:) mems=$v ;; esac; done </proc/self/status
key="v1 step=${SLURM_STEP_ID-} cpus=$cpus mems=$mems gpus=${SLURM_STEP_GPUS-}/${SLURM_JOB_GPUS-}/${CUDA_VISIBLE_DEVICES-} memlock=${SLURM_RLIMIT_MEMLOCK-} root=$ROOT fail=$FAIL"
dir=$STATE/job-${SLURM_JOB_ID-}
# The job's directory is the job user's (the Prolog handed it over): only then are answers kept there.
if [ -n "$STATE" ] && [ -n "${SLURM_JOB_ID-}" ] && [ -d "$dir" ] && [ -O "$dir" ] && [ ! -L "$dir" ]; then
  voice=0
  [ -z "${SLURM_LOCALID-}" ] || [ "${SLURM_LOCALID-}" = 0 ] && voice=1
  h=5381
  for ((i = 0; i < ${#key}; i++)); do printf -v c %d "'${key:i:1}"; h=$(((h * 33 + c) & 0xffffffff)); done
  answer=$dir/task.$h
  # The kept answer is the view's whole answer, judged as its first local task (SLURM_LOCALID=0), which speaks for the
  # node: its print lines and the task record. Every task prints its export lines; only local task 0 the print lines,
  # whichever task judged (else a warning would reach the job once per task, or never when task 3 judged first).
  tell() { local l; for l in "$@"; do { [ "$voice" = 1 ] || [ "${l#export }" != "$l" ]; } && printf '%s\n' "$l"; done; return 0; }
  said() { [ -f "$answer.done" ] && mapfile -t lines <"$answer" && [ "${lines[0]-}" = "$key" ] && rc=${lines[1]-3} && tell "${lines[@]:2}"; }
  if said; then
    :
  elif [ -e "$answer.done" ]; then
    # An answer kept under this name for another view (a hash collision): judge, keep nothing.
    judge "$@"
    rc=$?
  elif mkdir "$answer.lock" 2>/dev/null; then
    out=$(SLURM_LOCALID=0 judge "$@")
    rc=$?
    { printf '%s\n%s\n' "$key" "$rc"; [ -z "$out" ] || printf '%s\n' "$out"; } >"$answer" && : >"$answer.done"
    [ -z "$out" ] || { mapfile -t lines <<<"$out"; tell "${lines[@]}"; }
  else
    # Another task of this view judges now: wait for its answer (read -t on a pipe this shell holds open: no sleep(1)).
    exec 7<> <(:)
    for ((w = 0, got = 1; w < WAIT * 20; w++)); do read -r -t 0.05 -u 7 _; said && got=0 && break; [ -e "$answer.done" ] && break; done
    exec 7<&-
    [ "$got" = 0 ] || { judge "$@"; rc=$?; }
  fi
else
  judge "$@"
  rc=$?
fi
# A non-zero TaskProlog fails the task: only a finding under FAIL=1 (exit 1) may do that, never a broken tool.
[ "$rc" -eq 1 ] && [ "$FAIL" = 1 ] && exit 1
[ "$rc" -ne 0 ] && echo "gdrgate taskprolog: gdrgate exited $rc; letting the task run" >&2
exit 0
