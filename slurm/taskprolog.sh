#!/bin/bash -p
trap '' PIPE; unset FUNCNEST TMOUT # a write to a reader that left is an error, never this script's end; the job's FUNCNEST, TMOUT are not ours
# Slurm TaskProlog for gdrgate: runs as the job's user before every task, in the job's environment, before slurmstepd
# applies the propagated limits; its stdout is Slurm's TaskProlog protocol ("print ..." and "export ..." lines only).
# Settings (docs/slurm-wrappers.md; root-owned NAME.conf overrides them): NODE, CLI, BLOB (startup snapshot; empty:
# none), CONFIG, ROOT (tests), FAIL=1 (a finding fails the task), STATE (the config's stateDir; empty: judge every task),
# WAIT (whole s a task waits for another's judgment; bad, as "1.5": 10), AGENT (1: ask a running agent; empty: never), AGENT_TIMEOUT,
# LOGGER, HARD_TIMEOUT (s from a judgment's start after which Node is killed, the task runs; 0 or empty: never; bad: 15).
# The first task of a view (step, CPUs, memory nodes, GPUs, memlock) judges and keeps its answer in the job's directory
# (the Epilog removes it); every other task of that view prints it from bash alone.
NODE=/usr/bin/node
CLI=/usr/lib/node_modules/gdrgate/dist/gdrgate.cjs
BLOB=default
CONFIG=/etc/gdrgate/config.json
ROOT=
FAIL=0
STATE=/run/gdrgate
WAIT=10
AGENT=1
AGENT_TIMEOUT=1
HARD_TIMEOUT=15
LOGGER=/usr/bin/logger
# What it sources or starts from must be root's alone. rootonly [-n] PATH...: sets reals (real: the first) to where each
# PATH lies; succeeds when only root can change them, each a regular file (as slurm/prolog.sh's; no /dev/fd: see there).
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
# say PRIORITY MESSAGE: on stderr (slurmstepd reads it with stdout and keeps only export/print/unset lines) and,
# through LOGGER (tag gdrgate; empty: never), in the system log (docs/slurm-wrappers.md). Never on a passing task.
say() {
  printf '%s\n' "$2" >&2
  [ -n "$LOGGER" ] && [ -x "$LOGGER" ] || return 0
  local t=()
  [ -x /usr/bin/timeout ] && t=(/usr/bin/timeout 2)
  "${t[@]}" "$LOGGER" -t gdrgate -p "$1" -- "$2${SLURM_JOB_ID:+ (job $SLURM_JOB_ID)}" </dev/null >/dev/null 2>&1 || :
}
# The settings: /etc/gdrgate/NAME.conf, then the .conf beside this script, which wins (slurm/prolog.sh says why both;
# gdrgate_read is set here first: a TaskProlog inherits the job's environment); one that ends this script fails open.
gdrgate_read= kept= vfd= && unset GDRGATE_VERDICT_FD
trap 'gdrgate_rc=$?; set +eu; say daemon.err "gdrgate: $gdrgate_conf ended ${0##*/} (exit $gdrgate_rc) while its settings were read; not failing it"; exit 0' EXIT
for gdrgate_conf in "/etc/gdrgate/${0##*/}" "$0"; do
  case "$gdrgate_conf" in *.sh) gdrgate_conf=${gdrgate_conf%.sh}.conf ;; *) continue ;; esac
  [ "$gdrgate_conf" != "${gdrgate_read-}" ] && [ -r "$gdrgate_conf" ] || continue
  gdrgate_read=$gdrgate_conf
  if rootonly "$gdrgate_conf"; then . "$real" || :; continue; fi
  # Into the system log once per step and node (its local task 0), not once per task.
  m="gdrgate: not reading $gdrgate_conf: want it a regular file and it, and every directory above where it lies, owned by root and writable by root only"
  if [ "${SLURM_LOCALID:-0}" = 0 ]; then say user.warning "$m"; else printf '%s\n' "$m" >&2; fi
done
trap - EXIT
# A .conf's shell options are undone (slurm/prolog.sh), and those that change what the agent's reads below see (bash
# takes SHELLOPTS from the job's environment: noglob made every listing one "*", noclobber kept an old task record).
set +eu +o pipefail +o posix
set +fC; shopt -u failglob nocaseglob nocasematch
IFS=$' \t\n'
for gdrgate_v in NODE CLI BLOB CONFIG ROOT FAIL STATE WAIT AGENT AGENT_TIMEOUT HARD_TIMEOUT LOGGER; do printf -v "$gdrgate_v" %s "${!gdrgate_v%$'\r'}"; done # a .conf saved with CRLF: each value less its \r
set -- task --config "$CONFIG"
[ -n "$ROOT" ] && set -- "$@" --root "$ROOT"
[ "$FAIL" = 1 ] && set -- "$@" --fail
[ "$BLOB" = default ] && BLOB="${CLI%/*}/gate.blob"
# A judgment starts Node and CLI only where root alone can change them (else 123; started from where they lie: this runs
# as every job's user; in a user namespace, a container's, root's files are nobody's and that cannot be told: as given),
# from the node's startup snapshot (made here, root's alone, as slurm/prolog.sh uses it), else the plain program. An exit
# code is gdrgate's verdict only when gdrgate writes it into this script's pipe (GDRGATE_VERDICT_FD, src/host/verdict.ts;
# $BASHPID's: the first task of a view judges in a command substitution): else the blob judged nothing (14: refused; 10:
# stale; a signal: damaged; Node's own 1) and the plain program answers, or 125 (no verdict). The hard bound (slurm/prolog.sh's;
# Slurm gives a TaskProlog no time limit): Node under timeout, killed HARD_TIMEOUT s after the judgment first started it, on the uptime; such a run judged nothing (124), and no plain program follows a blob's.
case "$WAIT" in '' | *[!0-9]*) WAIT=10 ;; esac; WAIT=${WAIT#"${WAIT%%[!0]*}"}; ((${#WAIT} > 5)) && WAIT=99999; WAIT=$((10#0$WAIT))
case "$HARD_TIMEOUT" in '') HARD_TIMEOUT=0 ;; *[!0-9]*) HARD_TIMEOUT=15 ;; esac
HARD_TIMEOUT=${HARD_TIMEOUT#"${HARD_TIMEOUT%%[!0]*}"}
[ "${#HARD_TIMEOUT}" -gt 6 ] && HARD_TIMEOUT=999999
HARD_TIMEOUT=$((10#0$HARD_TIMEOUT))
upcs() { local u=; { read -r u _ </proc/uptime; } 2>/dev/null; u=${u/[.,]/}; case "$u" in '' | *[!0-9]*) u=${EPOCHSECONDS}00 ;; esac; REPLY=$((10#$u)); }
hostns() { local a b c; { read -r a b c </proc/self/uid_map; } 2>/dev/null; [ "$a:$b:$c" = 0:0:4294967295 ]; }
# bound: `hard`, what bounds the next run (slurm/prolog.sh). stopped RC: whether that run ended by the bound's kill.
bound() { local left; hard=(); ((HARD_TIMEOUT > 0)) && [ -x /usr/bin/timeout ] || return 0; upcs; b0=$REPLY left=$(((HARD_TIMEOUT * 100 - REPLY + 10#$t0 + 99) / 100)); ((left < 1)) && left=1; bl=$((left * 100)); hard=(/usr/bin/timeout --foreground -s KILL "$left"); }
stopped() { [ "$1" = 137 ] && [ "${#hard[@]}" -gt 0 ] && upcs && ((REPLY - b0 >= bl - 5)); }
judge() {
  local said v node cli; for v in "${!NODE_@}"; do unset "$v"; done # the job's NODE_OPTIONS (--inspect-brk waits for ever) are not ours
  if [ -z "$vfd" ]; then
    { exec 86<<<'' && exec 86<>"/proc/$BASHPID/fd/86" && [ -p "/proc/$BASHPID/fd/86" ] && read -r -u 86 _; } 2>/dev/null ||
      { exec 86<> <(:); } 2>/dev/null
    [ -p "/proc/$BASHPID/fd/86" ] && vfd=86 && GDRGATE_VERDICT_FD=86 && export GDRGATE_VERDICT_FD
  fi
  node=$NODE cli=$CLI && ! hostns || { rootonly -n "$NODE" "$CLI" || return 123; node=${reals[0]} cli=${reals[1]}; }
  upcs && t0=$REPLY
  if [ -n "$BLOB" ] && [ -r "$BLOB" ] && rootonly "$BLOB"; then
    bound
    said=$(GDRGATE_CLI=$CLI "${hard[@]}" "$node" --snapshot-blob "$real" "$@"); rc=$?
    verdict "$rc" && { [ -z "$said" ] || printf '%s\n' "$said"; return "$rc"; }
    stopped "$rc" && return 124
  fi
  bound
  "${hard[@]}" "$node" "$cli" "$@" & wait $! 2>/dev/null; rc=$? # (bash's "Killed" notice: wait's stderr)
  verdict "$rc" && return "$rc"
  stopped "$rc" && return 124
  # A timeout that fails itself (125) or cannot start Node (126, 127): once more without it (slurm/prolog.sh).
  case "$rc:${#hard[@]}" in 12[5-7]:[1-9]*) "$node" "$cli" "$@" & wait $! 2>/dev/null; rc=$?; verdict "$rc" && return "$rc" ;; esac
  return 125
}
# verdict RC: whether RC (0-3) is the last line gdrgate wrote, the pipe emptied (as slurm/prolog.sh; no pipe: 0-3).
verdict() { local v= l n=0; [ -n "$vfd" ] || { [ "$1" -le 3 ]; return; }; while ((n++ < 64)) && read -r -t 0 -u 86 && read -r -t 1 -u 86 l; do [ "$l" = drained ] && drained=1 || v=$l; done; [ "$1" -le 3 ] && [ "$v" = "$1" ]; }
# The agent judges for the first task of a view when one runs: this script reads what `gdrgate task` would read of the
# job's view, with bash alone (globs, read, test, cd -P: no process), into task.<view>.facts in the job's directory,
# asks through the job's FIFO, STATE/tasks-<job> (the job's user's, 0600, given as the agent answered the Prolog; the
# answer comes back only into this process's pipe, with the facts' nonce: src/agent/task.ts), and prints what the agent
# says gdrgate would have said. Anything it cannot read as gdrgate would (an error it cannot name, a name with a
# newline), no agent, or no answer within AGENT_TIMEOUT: gdrgate judges as before. F: the facts, a line each
# (src/task/facts.ts). absent PATH: not there (ENOENT, ENOTDIR), as opposed to unreachable (EACCES) or a link to nowhere
# (there, not absent: a directory where a file should be, a FIFO, a file this user may not read; or a link).
absent() { local d=$1; [ -L "$d" ] || [ -e "$d" ] && return 1; while d=${d%/*}; [ -n "$d" ]; do if [ -e "$d" ]; then [ ! -d "$d" ] || [ -x "$d" ]; return; fi; done; return 0; }
f_list() {
  local p=$ROOT$1 e; local -a n
  names=() # the entries listed: none where it could not list them, never the last list's
  [ -d "$p" ] || { absent "$p" && F+=("list	$1	-") || F+=("list	$1	?"); return; }
  [ -r "$p" ] && [ -x "$p" ] || { F+=("list	$1	?"); return 1; }
  n=("$p"/*) && names=("${n[@]##*/}") && F+=("list	$1	${#n[@]}" "${names[@]/#/	}")
}
f_text() {
  local p=$ROOT$1 l t; local -a L
  # Read whole up to a NUL: one there (bash cannot hold it; Node reads it) or a last line without its newline (the
  # format has none): could not be told ('?', as absent says of any file that is there).
  if [ -f "$p" ] && [ -r "$p" ] && ! IFS= read -r -d '' t 2>/dev/null <"$p" && { [ -z "$t" ] || [ "${t: -1}" = $'\n' ]; }; then
    while [ -n "$t" ]; do L+=("${t%%$'\n'*}"); t=${t#*$'\n'}; done
    F+=("text	$1	${#L[@]}" "${L[@]/#/	}")
  else
    absent "$p" && F+=("text	$1	-") || F+=("text	$1	?")
  fi
}
f_node() {
  local p=$ROOT$1 k=other
  if [ -d "$p" ]; then k=dir; elif [ -c "$p" ]; then k=char; elif [ -b "$p" ]; then k=block; elif [ -f "$p" ]; then k=file
  elif [ -p "$p" ]; then k=fifo; elif [ -S "$p" ]; then k=socket; elif [ ! -e "$p" ]; then absent "$p" && k=- || k='?'; fi
  F+=("kind	$1	$k")
  [ "$k" = dir ] || { [ -r "$p" ] && [ -w "$p" ] && F+=("access	$1	rw") || F+=("access	$1	?"); }
}
f_real() {
  local p=$ROOT$1 r
  if cd -P -- "$p" 2>/dev/null; then
    r=$PWD && { cd -- "$here" 2>/dev/null || cd /; }
    if [ -z "$ROOT" ]; then F+=("real	$1	$r"); elif [ "${r#"$proot"/}" != "$r" ]; then F+=("real	$1	/${r#"$proot"/}"); else F+=("real	$1	?"); fi
  else
    absent "$p" && F+=("real	$1	-") || F+=("real	$1	?")
  fi
}
# In the job's directory, which its user may change, gdrgate opens without following a link (a link is unreadable to
# it) and reads at most 4 MiB: a link there is 0, and a file of the user's own (its size unknown to bash) untold.
f_readable() {
  if [ "${1%/*}" = "$dir" ] && [ -L "$1" ]; then F+=("readable	$1	0")
  elif [ "${1%/*}" = "$dir" ] && [ -O "$1" ]; then F+=("readable	$1	?")
  elif [ -f "$1" ] && [ -r "$1" ]; then F+=("readable	$1	1")
  else F+=("readable	$1	0"); fi
}
# Sets out and rc from the agent's answer, writes the task record it sends (as this user), and succeeds; else fails.
ask() {
  local -a F=() names=() L
  local here=$PWD proot= nonce d g v e c b k n i l kind said=1 w cs seen= r=87
  shopt -s nullglob dotglob
  [ -n "${SRANDOM-}" ] && [ "${CONFIG//[[:space:][:cntrl:]]/}" = "$CONFIG" ] && [ -p "$STATE/tasks-$SLURM_JOB_ID" ] || return 1
  case "$AGENT_TIMEOUT" in [0-9] | [0-9].[0-9]* | [0-9][0-9] | [0-9][0-9].[0-9]*) ;; *) AGENT_TIMEOUT=1 ;; esac
  [ -z "$ROOT" ] || { cd -P -- "$ROOT" 2>/dev/null && proot=$PWD && cd -- "$here" 2>/dev/null; } || return 1
  printf -v nonce '%08x%08x%08x%08x' "$SRANDOM" "$SRANDOM" "$SRANDOM" "$SRANDOM"
  F=("gdrgate-task-facts 1 $nonce $$ $EUID $FAIL" "root	${ROOT:-/}")
  for v in SLURM_JOB_ID SLURM_STEP_ID SLURM_LOCALID SLURM_JOB_GPUS SLURM_STEP_GPUS SLURM_GPUS_ON_NODE CUDA_VISIBLE_DEVICES SLURM_RLIMIT_MEMLOCK SLURMD_NODENAME NCCL_TOPO_FILE GDRGATE_CONFIG; do
    if [ "$v" = SLURM_LOCALID ]; then F+=("env	$v	0"); elif [ -n "${!v+x}" ]; then F+=("env	$v	${!v}"); else F+=("env	$v"); fi
  done
  f_text /proc/self/limits; f_text /proc/self/status
  # Each adapter's PCI function: where its device link leads (gdrgate reads it only without a trusted record).
  f_list /sys/class/infiniband; for n in "${names[@]}"; do f_real "/sys/class/infiniband/$n/device"; done
  f_list /sys/class/infiniband_verbs
  for n in "${names[@]}"; do [[ $n =~ ^uverbs[0-9]+$ ]] && f_text "/sys/class/infiniband_verbs/$n/ibdev"; done
  f_list /dev/infiniband; for n in "${names[@]}"; do [[ $n =~ ^uverbs[0-9]+$ ]] && f_node "/dev/infiniband/$n"; done
  f_list /dev; for n in "$ROOT/dev"/nvidia*; do f_node "/dev/${n##*/}"; done
  f_list /proc/driver/nvidia/gpus
  for g in "${names[@]}"; do
    f_text "/proc/driver/nvidia/gpus/$g/information"
    g=${g,,}
    f_text "/sys/bus/pci/devices/$g/local_cpulist"
    f_text "/sys/bus/pci/devices/$g/numa_node"
  done
  # The host's NCCL topology names devices by PCI address: where each lies in this job's /sys.
  if [ -f "$dir/prolog.json" ] && [ ! -L "$dir/prolog.json" ] && mapfile -t L 2>/dev/null <"$dir/prolog.json" && [[ ${L[*]} == *ncclTopo* ]]; then
    l=${L[*]}
    while [[ $l =~ ([0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7])(.*) ]]; do
      [[ " ${seen-} " == *" ${BASH_REMATCH[1]} "* ]] || { seen="${seen-} ${BASH_REMATCH[1]}"; f_real "/sys/bus/pci/devices/${BASH_REMATCH[1]}"; }
      l=${BASH_REMATCH[2]}
    done
  fi
  f_readable "$CONFIG"
  # The baseline the config names (a hint only: a path read wrongly here is a fact the agent does not use).
  if mapfile -t L 2>/dev/null <"$CONFIG"; then
    c=${L[*]}
    b=${c#*\"baseline\"}
    [ "$b" != "$c" ] && b=${b#*\"} && f_readable "${b%%\"*}"
  fi
  for b in "$dir"/prolog.json "$dir"/nccl-topo.xml "$dir"/task.json "$STATE"/signing.pub; do f_readable "$b"; done
  F+=(end)
  l=${F[*]}
  [[ $l == *$'\n'* ]] && return 1
  printf '%s\n' "${F[@]}" >"$answer.facts" || return 1
  # The reply pipe and the request, as slurm/prolog.sh asks: nothing forked on bash 5.1+.
  { exec 87<<<'' && exec 87<>"/proc/$$/fd/87" && [ -p "/proc/$$/fd/87" ] && read -r -u 87 _; } 2>/dev/null || return 1
  if { exec 88<>"$STATE/tasks-$SLURM_JOB_ID"; } 2>/dev/null && [ -p "/proc/$$/fd/88" ]; then
    # Only into an empty FIFO, looked at for up to 50 ms: a FIFO that keeps a line (no agent reads it) is left alone.
    for ((w = 0; w < 5; w++)); do read -r -t 0 -u 88 || { said=0; break; }; read -r -t 0.01 -u 87 _; done
    [ "$said" = 0 ] && printf 'v1 task %s %s 87 %s %s %s\n' "$SLURM_JOB_ID" "$$" "$h" "$nonce" "$CONFIG" >&88
  fi
  { exec 88>&-; } 2>/dev/null
  # Unanswered: fd 87 closed first, an answer begun meanwhile taken on 89 within 50 ms (slurm/prolog.sh says why).
  [ "$said" = 0 ] && { read -r -t "$AGENT_TIMEOUT" -u 87 kind v l || { (($? > 128)) && exec 89<&87 87<&- && r=89 && read -r -t 0.05 -u 89 kind v l; }; } && [ "$v" = "$nonce" ] || { exec 87<&- 89<&-; return 1; }
  # The agent's "fallback" says why it did not judge: gdrgate judges, and the agent's log has the reason.
  [ "$kind" = ok ] || { exec 87<&- 89<&-; [ "$kind" != fallback ] || printf 'gdrgate taskprolog: the agent did not judge: %s\n' "$l" >&2; return 1; }
  # "<rc> <lines> <bytes>", then the bytes read in one counted read (bytes: in the C locale).
  rc=${l%% *} l=${l#* } n=${l%% *} c=${l#* }
  [[ $rc =~ ^[0-9]{1,3}$ && $n =~ ^[0-9]{1,4}$ && $c =~ ^[0-9]{1,6}$ ]] || { exec 87<&- 89<&-; return 1; }
  local LC_ALL=C
  IFS= read -r -N "$c" -t "$AGENT_TIMEOUT" -u "$r" l && [ "${#l}" = "$c" ] || { exec 87<&- 89<&-; return 1; }
  exec 87<&- 89<&-
  L=()
  for ((i = 0; i < n; i++)); do [[ $l == *$'\n'* ]] || return 1; L+=("${l%%$'\n'*}"); l=${l#*$'\n'}; done
  k=${l%%$'\n'*} l=${l#*$'\n'}
  [ "$l" = "end $nonce"$'\n' ] || return 1
  # The task record, as `gdrgate task` leaves it: private to the job's user.
  [ "$k" = - ] || { umask 077 && printf '%s\n' "$k" >"$dir/task.json"; } 2>/dev/null
  out=; [ "$n" = 0 ] || printf -v out '%s\n' "${L[@]}"; out=${out%$'\n'}
  return 0
}
# The task's view: what gdrgate task judges that may differ between tasks of a job on this node (/proc/self/status read
# whole: `read` line by line seeks back after each line, and each seek makes the kernel format it again).
cpus= mems= && mapfile -t status </proc/self/status
for l in "${status[@]}"; do case "$l" in Cpus_allowed_list:*) cpus=${l#*$'\t'} ;; Mems_allowed_list:*) mems=${l#*$'\t'} ;; esac; done
key="v1 step=${SLURM_STEP_ID-} cpus=$cpus mems=$mems gpus=${SLURM_STEP_GPUS-}/${SLURM_GPUS_ON_NODE-}/${SLURM_JOB_GPUS-}/${CUDA_VISIBLE_DEVICES-} memlock=${SLURM_RLIMIT_MEMLOCK-} root=$ROOT fail=$FAIL"
# A heterogeneous step's tasks carry the leader's SLURM_JOB_ID (slurmstepd task.c), each component's Prolog recorded
# under its own: with no leader's directory here, the one SLURM_JOB_ID_HET_GROUP_<n> whose directory is (none, two: as is).
if [ -n "$STATE" ] && [ -n "${SLURM_JOB_ID-}" ] && [ "${SLURM_JOB_ID_HET_GROUP_0-}" = "$SLURM_JOB_ID" ] && [ ! -e "$STATE/job-$SLURM_JOB_ID" ]; then
  het= && for v in "${!SLURM_JOB_ID_HET_GROUP_@}"; do case "${!v}" in '' | *[!0-9]*) ;; *) [ -d "$STATE/job-${!v}" ] && het="$het ${!v}" ;; esac; done
  case "$het" in '' | " "*" "*) ;; *) SLURM_JOB_ID=${het# } ;; esac
fi
dir=$STATE/job-${SLURM_JOB_ID-}
# The agent answers the Prolog, writes the job's record into the directory it began, then gives it to the job's user: a
# task that finds it begun (not its own, or no record yet) waits while it is, at most 1 s (only then a process: a pipe).
begun() { [ -d "$dir" ] && [ ! -L "$dir" ] && ! { [ -O "$dir" ] && [ -e "$dir/prolog.json" ]; }; }
[ -n "$STATE" ] && [ -n "${SLURM_JOB_ID-}" ] && begun &&
  { exec 7<> <(:); for ((w = 0; w < 100; w++)); do read -r -t 0.01 -u 7 _; begun || break; done; exec 7<&-; }
# The job's directory is the job user's (the Prolog handed it over): only then are answers kept there.
if [ -n "$STATE" ] && [ -n "${SLURM_JOB_ID-}" ] && [ -d "$dir" ] && [ -O "$dir" ] && [ ! -L "$dir" ] && [ "${#key}" -le 4096 ]; then
  voice=0 # print lines: said by the task that judged the view (below), whichever local task; a kept answer's: never
  # The view's file name: its key with every character but [A-Za-z0-9.,=-] made _; a key too long for a file name,
  # hashed (a character at a time; over 4 KiB no view is kept). Two views of one name: told apart by key.
  h=${key//[^A-Za-z0-9.,=-]/_}
  [ "${#h}" -le 200 ] || for ((h = 5381, i = 0; i < ${#key}; i++)); do printf -v c %d "'${key:i:1}"; h=$(((h * 33 + c) & 0xffffffff)); done
  answer=$dir/task.$h
  # The kept answer is the view's whole answer, judged as its first local task (SLURM_LOCALID=0). Every task prints its
  # export (only NCCL_TOPO_FILE: a kept answer is the user's file), only the task that judged the print lines (once per
  # view: a view local task 0 does not share, a task bound to its own GPU, is told too).
  tell() { local l; for l in "$@"; do case "$l" in "print "*) [ "$voice" = 1 ] && printf '%s\n' "$l" ;; "export NCCL_TOPO_FILE=/"*) printf '%s\n' "$l" ;; esac; done; return 0; }
  said() { [ -f "$answer.done" ] && [ -f "$answer" ] && [ ! -L "$answer" ] && mapfile -t lines <"$answer" && [ "${lines[0]-}" = "$key" ] && rc=${lines[1]-3} && kept=1 && tell "${lines[@]:2}"; }
  if said; then :
  elif [ -e "$answer.done" ]; then
    # An answer kept under this name for another view (a hash collision): judge, keep nothing.
    judge "$@"; rc=$?
  elif { set -C && : >"$answer.lock"; } 2>/dev/null; then
    # (A lock made with noclobber: created only where no file was, as O_EXCL creates; mkdir would be a process.)
    set +C
    { [ "$AGENT" = 1 ] && ask; } || { out=$(SLURM_LOCALID=0 judge "$@"); rc=$?; }
    { printf '%s\n%s\n' "$key" "$rc"; [ -z "$out" ] || printf '%s\n' "$out"; } >"$answer" && : >"$answer.done"
    [ -z "$out" ] || { voice=1; mapfile -t lines <<<"$out"; tell "${lines[@]}"; }
  else
    set +C
    # Another task of this view judges now: wait for its answer (read -t on a pipe this shell holds open: no sleep(1)).
    exec 7<> <(:); for ((w = 0, got = 1; w < WAIT * 20; w++)); do read -r -t 0.05 -u 7 _; said && got=0 && break; [ -e "$answer.done" ] && break; done; exec 7<&-
    [ "$got" = 0 ] || { judge "$@"; rc=$?; }
  fi
else
  judge "$@"; rc=$?
fi
# A non-zero TaskProlog fails the task: only a finding under FAIL=1 (exit 1) may do that, never a broken tool.
[ "$rc" -eq 1 ] && [ "$FAIL" = 1 ] && exit 1
# Said by the task that judged (a kept answer's tasks say nothing: one line per view, not per task).
[ -n "$kept" ] || case $rc in
  0) ;; 124) say user.err "gdrgate taskprolog: $NODE killed at the hard bound, ${HARD_TIMEOUT}s after the gate started, without a verdict; letting the task run" ;;
  125) say user.err "gdrgate taskprolog: $NODE ended without a verdict (an exit gdrgate did not write); letting the task run" ;;
  123) for bad in "$NODE" "$CLI"; do rootonly -n "$bad" || break; done; [ -e "$bad" ] && bad="$bad, or a directory above where it lies, is not root's alone or not a regular file" || bad="$bad is missing"; say user.err "gdrgate taskprolog: not starting $NODE $CLI ($bad): want each a regular file there, and it and every directory above where it lies owned by root and writable by root only; letting the task run" ;;
  *) say user.err "gdrgate taskprolog: gdrgate exited $rc; letting the task run" ;;
esac
exit 0
