#!/usr/bin/env bash
# The hard bound of each installed wrapper on a GPU node (after `dpkg -i .device/gdrgate_*_amd64.deb`): prolog.sh,
# epilog.sh and taskprolog.sh each copied beside itself with a .conf naming as NODE a root-owned script that never
# ends, run as slurmd runs them (env -i; the TaskProlog as uid 65534), timed. Writes $OUT/hard-bound.txt: what each
# said, its exit code and how long it took. Removes what it made.
set -u
. "${0%/*}/device-lib.sh"
begin hard-bound.txt
L=${L:-/usr/libexec/gdrgate}
printf '#!/bin/sh\nexec /bin/sleep 60\n' >$L/hang-node && chmod 755 $L/hang-node
printf 'NODE=%s\nAGENT=\nHARD_TIMEOUT=3\n' $L/hang-node >$L/hb.conf
printf 'NODE=%s\nHARD_TIMEOUT=2\n' $L/hang-node >$L/he.conf
printf 'NODE=%s\nAGENT=\nSTATE=\nFAIL=1\nHARD_TIMEOUT=2\n' $L/hang-node >$L/ht.conf
cp $L/prolog.sh $L/hb.sh && cp $L/epilog.sh $L/he.sh && cp $L/taskprolog.sh $L/ht.sh && chmod 644 $L/h[bet].conf
timed() {
  local what=$1 s e
  shift
  echo "\$ $what"
  s=$EPOCHREALTIME
  "$@" 2>&1
  local rc=$?
  e=$EPOCHREALTIME
  echo "(exit $rc) after $(((${e/./} - ${s/./}) / 1000)) ms"
}
{
  timed "env -i SLURMD_NODENAME=gpu SLURM_JOB_ID=9 hb.sh (the Prolog, NODE never ends, HARD_TIMEOUT=3)" env -i SLURMD_NODENAME=gpu SLURM_JOB_ID=9 $L/hb.sh
  timed "env -i SLURMD_NODENAME=gpu SLURM_JOB_ID=9 he.sh (the Epilog, HARD_TIMEOUT=2)" env -i SLURMD_NODENAME=gpu SLURM_JOB_ID=9 $L/he.sh
  timed "env -i SLURM_JOB_ID=9 setpriv --reuid=65534 ht.sh (the TaskProlog as the job's user, HARD_TIMEOUT=2, FAIL=1)" env -i SLURMD_NODENAME=gpu SLURM_JOB_ID=9 /usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups $L/ht.sh
} >>"$P" 2>&1
rm -f $L/hang-node $L/h[bet].sh $L/h[bet].conf
cat "$P"
