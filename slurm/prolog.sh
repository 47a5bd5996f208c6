#!/bin/bash
trap '' PIPE # an output whose reader left is an error to write, never the end of this script (141: a drain)
# When slurmd started this script: the gate's deadline counts from here, Node's start included (src/runner/deadline.ts).
GDRGATE_T0=$EPOCHREALTIME
export GDRGATE_T0
# Slurm Prolog (and HealthCheckProgram, as health.sh) for gdrgate.
# Slurm runs it as root with no PATH, cwd in slurmd's log directory, stdin /dev/null: every path is absolute.
# Settings: NODE (node binary), CLI (gdrgate's one-file dist/gdrgate.cjs: dist/cli.js loads chunks beside it that the ownership check below never sees), BLOB (the gate's startup snapshot, default gate.blob
# beside CLI; empty: never use one), AGENT (the directory of a running `gdrgate agent`; empty: never ask one) and
# AGENT_TIMEOUT (seconds), and HARD_TIMEOUT (seconds from the gate's start, when it is started, after which Node is
# killed and the hook fails open; 0 or empty: never; malformed: 45), overridden by /etc/gdrgate/NAME.conf and then
# by a file beside this script, NAME being this script's name less .sh (e.g. /etc/gdrgate/gdrgate-prolog.conf,
# /etc/slurm/gdrgate-prolog.conf).
NODE=/usr/bin/node
CLI=/usr/lib/node_modules/gdrgate/dist/gdrgate.cjs
CONFIG=/etc/gdrgate/config.json
BLOB=default
AGENT=/run/gdrgate-agent
AGENT_TIMEOUT=1
HARD_TIMEOUT=45
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
# A .conf holds settings: shell options it sets are undone (under set -e, a read -t that times out would end this
# Prolog with 142; in POSIX mode, a failed open of exec would end it with 1; a non-zero Prolog drains the node).
set +eu +o pipefail +o posix
IFS=$' \t\n'
for gdrgate_v in NODE CLI CONFIG BLOB AGENT AGENT_TIMEOUT HARD_TIMEOUT LOGGER; do printf -v "$gdrgate_v" %s "${!gdrgate_v%$'\r'}"; done # a .conf saved with CRLF: each value less its \r
[ "$BLOB" = default ] && BLOB="${CLI%/*}/gate.blob"
# Which hook this is. slurmd says so for a Prolog: SLURM_SCRIPT_CONTEXT=prolog_slurmd (prep/script, every release
# 22.05-26.05, also from the job's extern slurmstepd under PrologFlags=RunInJob), whatever the script is named (a
# prolog.d/50-gpu-health.sh is a Prolog). It sets no context for a HealthCheckProgram: slurmd starts it itself
# with SLURMD_NODENAME alone (26.05 adds SLURM_NODE_IS_HEALTHY), never a SLURM_JOB_ID (slurmd.c
# run_script_health_check). Anything else (by hand, a wrapper between, another context): the script's name.
MODE=prolog
case "${0##*/}" in *health*) MODE=health ;; esac # the file's name, not a directory above it
if [ "${SLURM_SCRIPT_CONTEXT-}" = prolog_slurmd ]; then
  MODE=prolog
elif [ -z "${SLURM_SCRIPT_CONTEXT+set}${SLURM_JOB_ID+set}" ] && [ -n "${SLURMD_NODENAME-}" ] &&
  read -r parent 2>/dev/null </proc/$PPID/comm && [ "$parent" = slurmd ]; then
  MODE=health
fi
# The agent (gdrgate agent: resident, reads the node anew for every request), asked first when one runs. It answers
# only "ok" (healthy: its summary line is printed, exit 0) and never drains. Anything else, or no answer within
# AGENT_TIMEOUT seconds, and the gate runs in this process below: it judges again, drains if it must, and logs what
# the agent said. Nothing is executed and nothing forked (bash 5.1+): the reply comes through a pipe this shell holds
# open for reading and writing on descriptor 87, which the agent, root as this Prolog is, opens as /proc/$$/fd/87, and
# read -t bounds the wait. The pipe is a here-string's, which bash 5.1+ makes a pipe (no file to make or remove; its
# one newline is read off first), reopened read-write so that it never reads as ended; an older bash gets it from a
# process substitution (one fork). The request FIFO is opened read-write too, which never blocks, not even with no
# agent holding it (one that died since the check above: the line is then dropped with the last descriptor). A write
# could block only on a full FIFO, and the line is written only into an empty one: while the FIFO holds unread lines
# (an agent alive but not reading: stopped, or stuck in a slow request), this Prolog waits for it to empty within
# AGENT_TIMEOUT, and gives up without writing. The agent empties it in microseconds, so a busy node's Prologs wait
# their turn, and no FIFO ever fills: a stopped agent holds at most one line per Prolog that found it empty.
# A request is one line of fields split at spaces: a CONFIG with a space or a control character in it cannot be
# asked for (the agent would ignore the line and the Prolog wait its whole AGENT_TIMEOUT), so it is not asked.
if [ "$MODE" = prolog ] && [ -n "$AGENT" ] && [ "${CONFIG//[[:space:][:cntrl:]]/}" != "$CONFIG" ]; then
  GDRGATE_AGENT_SAID="not asked: CONFIG has a space or a control character"
  export GDRGATE_AGENT_SAID
elif [ "$MODE" = prolog ] && [ -n "$AGENT" ] && [ -p "$AGENT/requests" ] && [ -f "$AGENT/agent.pid" ] && { read -r -d '' -n 24 apid; [ -n "$apid" ]; } 2>/dev/null <"$AGENT/agent.pid" && kill -0 "$apid" 2>/dev/null; then
  # (The pid read up to 24 characters or a NUL: bash's read skips NULs, so a large or sparse file is never read whole.)
  # AGENT_TIMEOUT in hundredths of a second (a malformed one: 1 s), for the wait on an unread FIFO.
  case "$AGENT_TIMEOUT" in [0-9]* | .[0-9]*) ;; *) AGENT_TIMEOUT=1 ;; esac
  case "$AGENT_TIMEOUT" in *[!0-9.]* | *.*.*) AGENT_TIMEOUT=1 ;; esac
  s=${AGENT_TIMEOUT%%.*} f=${AGENT_TIMEOUT#"${AGENT_TIMEOUT%%.*}"}
  f=${f#.}00
  # At most 999999 s (11 days: as good as forever), so that the count stays within bash's 64-bit arithmetic.
  while [ "${s#0}" != "$s" ]; do s=${s#0}; done
  [ "${#s}" -gt 6 ] && s=999999
  cs=$((10#${s:-0} * 100 + 10#${f:0:2}))
  # The here-string's pipe, its newline read off; where it is no pipe (a bash before 5.1, or one told to behave as
  # one: BASH_COMPAT=50 makes it a file), a process substitution's.
  { exec 87<<<'' && exec 87<>"/proc/$$/fd/87" && [ -p "/proc/$$/fd/87" ] && read -r -u 87 _; } 2>/dev/null ||
    { exec 87<> <(:); } 2>/dev/null
  # (The open fails when the agent's directory went since the look above: bash's error kept off stderr.)
  if [ -p "/proc/$$/fd/87" ] && { exec 88<>"$AGENT/requests"; } 2>/dev/null; then
    # Looked at once more after the last wait, and always once (an AGENT_TIMEOUT under 0.01 s too): never a blind write.
    # Only a FIFO: an agent restarting may have removed its old one since the look above, and then `<>` made a plain
    # file, which reads as ever ready (and would take the line).
    empty= fifo=
    [ -p "/proc/$$/fd/88" ] && fifo=1 &&
      for ((w = 0; w <= cs; w++)); do read -r -t 0 -u 88 || { empty=1; break; }; ((w < cs)) && read -r -t 0.01 -u 87 _; done
    if [ -n "$empty" ]; then
      printf 'v2 prolog %s 87 %s\n' "$$" "$CONFIG" >&88
      exec 88>&-
      ((w = cs - w > 0 ? cs - w : 1))
      read -r -t "$((w / 100)).$((w / 10 % 10))$((w % 10))" -u 87 verdict answer
      said=$?
      # Closed before anything else: from here on the agent cannot open the pipe, and drops this request. One that had
      # it open already may be writing its answer (one write, counted delivered: then it keeps the job's record and run
      # line): after a wait that ended unanswered, the pipe stays readable on 89 for 50 ms, and such an answer is taken.
      if ((said > 128)); then exec 89<&87 87<&-; read -r -t 0.05 -u 89 verdict answer && said=0; exec 89<&-; else exec 87<&-; fi
      if [ "$said" -eq 0 ]; then
        [ "$verdict" = ok ] && { printf '%s\n' "$answer"; exit 0; }
        GDRGATE_AGENT_SAID="$verdict: $answer"
      else
        GDRGATE_AGENT_SAID="no answer within ${AGENT_TIMEOUT}s"
      fi
    else
      exec 88>&- 87<&-
      GDRGATE_AGENT_SAID="its requests stayed unread for ${AGENT_TIMEOUT}s"
      [ -n "$fifo" ] || GDRGATE_AGENT_SAID="$AGENT/requests is not a FIFO"
    fi
    export GDRGATE_AGENT_SAID
  else
    [ -p "/proc/$$/fd/87" ] && GDRGATE_AGENT_SAID="cannot open $AGENT/requests" && export GDRGATE_AGENT_SAID
    { exec 87<&-; } 2>/dev/null
  fi
fi
# gdrgate's exit code (0-3) is its verdict only when gdrgate says so: it writes the code into a pipe of this script's
# (GDRGATE_VERDICT_FD, src/host/verdict.ts) as it ends. Node's own exit 1 (an exception before or outside gdrgate's
# code: the program missing, unreadable or cut short) or 0 (an empty program) is no verdict, and a 1 here drains the
# node. The pipe: a here-string's, opened read-write (nothing forked on bash 5.1+; older bash: a process substitution).
vfd= drained=
unset GDRGATE_VERDICT_FD
{ exec 86<<<'' && exec 86<>"/proc/$$/fd/86" && [ -p "/proc/$$/fd/86" ] && read -r -u 86 _; } 2>/dev/null ||
  { exec 86<> <(:); } 2>/dev/null
[ -p "/proc/$$/fd/86" ] && vfd=86 && GDRGATE_VERDICT_FD=86 && export GDRGATE_VERDICT_FD
# verdict RC: whether RC (0-3) is the pipe's last line, gdrgate's verdict (without the pipe: whether RC is 0-3, as
# before it). It empties the pipe, so a blob's line (one killed after its write) is never the plain program's verdict,
# and it waits at most 1 s for a line begun (a stray writer's): never for ever.
verdict() { local v= l n=0; [ -n "$vfd" ] || { [ "$1" -le 3 ]; return; }; while ((n++ < 64)) && read -r -t 0 -u 86 && read -r -t 1 -u 86 l; do [ "$l" = drained ] && drained=1 || v=$l; done; [ "$1" -le 3 ] && [ "$v" = "$1" ]; }
# ended RC: this script's end on gdrgate's verdict RC. 0 and 1 are the verdict (healthy; unhealthy, the drain done as
# the policy says, a broken config or an internal error included); 2 (usage) and 3 (an error outside the judgment)
# mean gdrgate broke, and a broken tool never drains: the Prolog fails open and says so.
ended() { [ "$1" -le 1 ] && exit "$1"; drainedexit "exited $1"; say daemon.err "gdrgate $MODE: gdrgate exited $1; not failing the $MODE"; exit 0; }
# drainedexit WHAT: gdrgate said (a "drained" line in the pipe) that its drain of this node was written; whatever came
# after (killed, stdout full), the node is drained by us and the job must not start on it: the hook fails.
drainedexit() { [ -n "$drained" ] || return 0; say daemon.err "gdrgate $MODE: $NODE $1 after gdrgate drained this node; failing the $MODE"; exit 1; }
# Node and the program, and the startup snapshot where there is one, are root's alone (one stat for the three; a
# second only where that fails) and started from where they really lie: this runs as root.
# (BLOB a FIFO or a directory: not a startup snapshot, and Node would block on a FIFO's open; never started.)
blob= why=
if [ -n "$BLOB" ] && [ -f "$BLOB" ] && [ -r "$BLOB" ] && rootonly -n "$NODE" "$CLI" "$BLOB"; then
  blob=${reals[2]}
elif ! rootonly -n "$NODE" "$CLI"; then
  for bad in "$NODE" "$CLI"; do rootonly -n "$bad" || break; done
  [ -e "$bad" ] && bad="$bad, or a directory above where it lies, is not root's alone or not a regular file" || bad="$bad is missing"
  say daemon.err "gdrgate $MODE: not starting $NODE $CLI ($bad): want each a regular file there, and it and every directory above where it lies owned by root and writable by root only; not failing the $MODE"
  exit 0
elif [ -n "$BLOB" ] && [ -e "$BLOB" ] && [ ! -f "$BLOB" ]; then
  why=notafile
elif [ -n "$BLOB" ] && [ -r "$BLOB" ]; then
  why=untrusted
elif [ -n "$BLOB" ]; then
  why=missing
fi
node=${reals[0]} cli=${reals[1]}
# The hard bound. The gate keeps its own deadline (deadlineMs) between its reads, but a read that blocks (a FIFO, a
# hung mount) or a loop of its own stops every timer in the process: Node then runs under /usr/bin/timeout, killed
# once HARD_TIMEOUT seconds have passed since this script first started it (after the agent's wait, at most
# AGENT_TIMEOUT: the agent's path reads nothing for the bound), and the hook fails open (a KILL the process cannot
# take, one stuck in the kernel, is PrologEpilogTimeout's; no timeout there, or HARD_TIMEOUT 0: unbounded, as
# before). Keep it above AGENT_TIMEOUT + deadlineMs + a few seconds, and below PrologEpilogTimeout.
# upcs: the uptime now in hundredths of a second (REPLY; the clock's where /proc/uptime cannot be read). bound: `hard`,
# the command that bounds the next run by what is left of HARD_TIMEOUT since the first (at least 1 s).
# stopped RC: whether the run ended by that kill (SIGKILL's 137 once its bound had passed, on the uptime: a clock set
# back or forth meanwhile changes nothing; the OOM killer's 137 comes earlier): said, and the hook fails open.
case "$HARD_TIMEOUT" in '') HARD_TIMEOUT=0 ;; *[!0-9]*) HARD_TIMEOUT=45 ;; esac
HARD_TIMEOUT=${HARD_TIMEOUT#"${HARD_TIMEOUT%%[!0]*}"}
[ "${#HARD_TIMEOUT}" -gt 6 ] && HARD_TIMEOUT=999999
HARD_TIMEOUT=$((10#0$HARD_TIMEOUT))
upcs() { local u=; { read -r u _ </proc/uptime; } 2>/dev/null; u=${u/[.,]/}; case "$u" in '' | *[!0-9]*) u=${EPOCHSECONDS}00 ;; esac; REPLY=$((10#$u)); }
upcs && t0=$REPLY
bound() {
  local left; hard=(); ((HARD_TIMEOUT > 0)) && [ -x /usr/bin/timeout ] || return 0
  upcs; b0=$REPLY left=$(((HARD_TIMEOUT * 100 - REPLY + 10#$t0 + 99) / 100)); ((left < 1)) && left=1; bl=$((left * 100))
  hard=(/usr/bin/timeout --foreground -s KILL "$left")
}
stopped() {
  drainedexit "ended (exit $1)"
  [ "$1" = 137 ] && [ "${#hard[@]}" -gt 0 ] && upcs && ((REPLY - b0 >= bl - 5)) || return 0
  say daemon.err "gdrgate $MODE: $NODE killed at the hard bound, ${HARD_TIMEOUT}s after the gate started, without a verdict; not failing the $MODE"
  exit 0
}
# The gate from its startup snapshot (made on this node: gdrgate startup-snapshot), every module already loaded
# and compiled. Its exit codes are gdrgate's own (0-3); any other means nothing was judged: Node refused the blob
# (14: made by another Node build or with other V8 flags; a signal, or 11 from its own seal check: a damaged or cut
# file) or it is stale (10: the program changed since it was made, or it is of another program than CLI, which
# GDRGATE_CLI tells it). Then the plain program runs, and logs why the fast path was not taken (GDRGATE_BLOB_FAILED:
# that code, or "missing", "untrusted", "notafile"; GDRGATE_BLOB: the file).
if [ -n "$blob" ]; then
  bound
  GDRGATE_CLI=$cli "${hard[@]}" "$node" --snapshot-blob "$blob" "$MODE" --config "$CONFIG"
  rc=$?
  verdict "$rc" && ended "$rc"
  stopped "$rc"
  why=$rc
fi
[ -n "$why" ] && GDRGATE_BLOB_FAILED=$why GDRGATE_BLOB=$BLOB && export GDRGATE_BLOB_FAILED GDRGATE_BLOB
# The plain program, as a child (not exec'd): its verdict is gdrgate's own (0-3). Anything else means it ended
# without a verdict: killed by a signal (128+N; the OOM killer's SIGKILL: under PrologFlags=RunInJob, 24.05+, this
# Prolog runs inside the job's cgroup, so Node's memory counts against the job's limit) or not started at all (126,
# 127). A non-zero Prolog drains the node ("Prolog error"), and a broken tool must not drain: the Prolog fails open
# and says why (say: the system log). (Started in the background and waited for: bash's own "Killed" notice goes
# with wait's stderr, not to slurmd's log.)
bound
"${hard[@]}" "$node" "$cli" "$MODE" --config "$CONFIG" &
wait $! 2>/dev/null
rc=$?
verdict "$rc" && ended "$rc"
stopped "$rc"
# A timeout that fails itself (125) or cannot start Node (126, 127) would leave every Prolog without a verdict, the
# gate switched off: once more without it, said (Node's own 126 or 127 then comes again, and is said below).
case "$rc:${#hard[@]}" in 12[5-7]:[1-9]*)
  say daemon.warning "gdrgate $MODE: no verdict (exit $rc) under ${hard[0]}: the gate once more without the hard bound"
  "$node" "$cli" "$MODE" --config "$CONFIG" &
  wait $! 2>/dev/null
  rc=$?
  verdict "$rc" && ended "$rc"
  ;;
esac
if [ "$rc" -gt 128 ]; then why="killed by signal $((rc - 128))"; elif [ "$rc" -le 3 ]; then why="exit $rc, not written by gdrgate"; else why="exit $rc"; fi
drainedexit "ended without a verdict ($why)"
say daemon.err "gdrgate $MODE: $NODE ended without a verdict ($why); not failing the $MODE"
exit 0
