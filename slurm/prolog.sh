#!/bin/bash
# When slurmd started this script: the gate's deadline counts from here, Node's start included (src/runner/deadline.ts).
GDRGATE_T0=$EPOCHREALTIME
export GDRGATE_T0
# Slurm Prolog (and HealthCheckProgram, as health.sh) for gdrgate.
# Slurm runs it as root with no PATH, cwd in slurmd's log directory, stdin /dev/null: every path is absolute.
# Settings: NODE (node binary), CLI (gdrgate's dist/cli.js), BLOB (the gate's startup snapshot, default gate.blob
# beside CLI; empty: never use one), AGENT (the directory of a running `gdrgate agent`; empty: never ask one) and
# AGENT_TIMEOUT (seconds), overridden by a file beside this script with the same name and .conf instead
# of .sh (e.g. /etc/slurm/gdrgate-prolog.conf).
NODE=/usr/bin/node
CLI=/usr/lib/node_modules/gdrgate/dist/cli.js
CONFIG=/etc/gdrgate/config.json
BLOB=default
AGENT=/run/gdrgate-agent
AGENT_TIMEOUT=1
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
[ "$BLOB" = default ] && BLOB="${CLI%/*}/gate.blob"
MODE=prolog
case "$0" in *health*) MODE=health ;; esac
# The agent (gdrgate agent: resident, reads the node anew for every request), asked first when one runs. It answers
# only "ok" (healthy: its summary line is printed, exit 0) and never drains. Anything else, or no answer within
# AGENT_TIMEOUT seconds, and the gate runs in this process below: it judges again, drains if it must, and logs what
# the agent said. Every step is bounded: built-ins only but one mkfifo, <> opens a FIFO without blocking, read -t
# bounds the wait. The request is written by a background copy of this shell: a printf into the request FIFO blocks
# once its 64 KiB are full (an agent alive but not reading: stopped, or stuck in a slow request, with the requests of
# ~1,000 timed-out Prologs left in it). That copy is killed when the wait ends; a line under PIPE_BUF is written
# whole or not at all, and the agent drops a line whose reply FIFO is gone (src/agent/serve.ts).
if [ "$MODE" = prolog ] && [ -n "$AGENT" ] && [ -p "$AGENT/requests" ] && [ -f "$AGENT/agent.pid" ] && read -r apid 2>/dev/null <"$AGENT/agent.pid" && kill -0 "$apid" 2>/dev/null; then
  reply="$AGENT/reply.$$"
  if /usr/bin/mkfifo -m 600 "$reply" 2>/dev/null && exec 3<>"$reply"; then
    printf 'v1 prolog %s %s\n' "$$" "$CONFIG" 1<>"$AGENT/requests" &
    writer=$!
    read -r -t "$AGENT_TIMEOUT" -u 3 verdict answer
    said=$?
    exec 3<&-
    # The agent removes the reply FIFO when it answers; after a timeout this Prolog does.
    [ "$said" -eq 0 ] || /bin/rm -f "$reply"
    # wait: reaps it now (SIGKILL ends a write blocked on a pipe at once), and keeps bash's "Killed" off stderr.
    kill -KILL "$writer" 2>/dev/null
    wait "$writer" 2>/dev/null
    if [ "$said" -eq 0 ]; then
      [ "$verdict" = ok ] && { printf '%s\n' "$answer"; exit 0; }
      GDRGATE_AGENT_SAID="$verdict: $answer"
    else
      GDRGATE_AGENT_SAID="no answer within ${AGENT_TIMEOUT}s"
    fi
    export GDRGATE_AGENT_SAID
  fi
fi
# The gate from its startup snapshot (made on this node: gdrgate startup-snapshot), every module already loaded
# and compiled, when the blob is there and root's alone; Node reads it through the descriptor checked here. Its
# exit codes are gdrgate's own (0-3); any other means nothing was judged: Node refused the blob (14: made by
# another Node build or on another CPU; a signal: a damaged file) or it is stale (10: the program changed since).
# Then the plain program runs, and logs why the fast path was not taken (GDRGATE_BLOB_FAILED).
if [ -n "$BLOB" ] && [ -r "$BLOB" ] && exec 8<"$BLOB"; then
  if rootonly 8 "$BLOB"; then
    "$NODE" --snapshot-blob /dev/fd/8 "$MODE" --config "$CONFIG"
    rc=$?
    [ "$rc" -le 3 ] && exit "$rc"
    GDRGATE_BLOB_FAILED=$rc
  else
    GDRGATE_BLOB_FAILED=untrusted
  fi
  exec 8<&-
  export GDRGATE_BLOB_FAILED
fi
exec "$NODE" "$CLI" "$MODE" --config "$CONFIG"
