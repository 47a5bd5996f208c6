#!/usr/bin/env bash
# daemon.sh DIR NAME - start (or start again) one daemon of the cluster that start.sh made in DIR: NAME "ctl" is
# slurmctld, any other name that node's slurmd. It runs in that name's network namespace (recorded in DIR/netns)
# and in a new UTS and mount namespace: hostname NAME, DIR/etc/hosts on /etc/hosts, DIR/etc on /etc/slurm (a
# HealthCheckProgram gets no SLURM_CONF and scontrol then reads /etc/slurm/slurm.conf), and the name's own
# directory (DIR/ctl or DIR/nodes/NAME) on DIR/node. The daemon forks itself and writes its pid file.
# NAME "munge" is munged, on the host as start.sh runs it (its socket reaches every namespace), same key and socket.
# nsenter, not `ip netns exec`: that remounts /sys for the namespace, hiding /sys/fs/cgroup, which slurmd needs.
set -euo pipefail
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
DIR=$(realpath -m "${1:?usage: daemon.sh DIR NAME}")
NAME=${2:?usage: daemon.sh DIR NAME}
[[ "$NAME" =~ ^[A-Za-z][A-Za-z0-9-]{0,30}$ ]] || { echo "daemon.sh: bad name: $NAME" >&2; exit 2; }
if [ "$NAME" = munge ]; then
  runuser -u munge -- munged --force --key-file="$DIR/munge/munge.key" --socket="$DIR/munge/munge.socket.2" \
    --pid-file="$DIR/munge/munged.pid" --log-file="$DIR/munge/munged.log" --seed-file="$DIR/munge/munged.seed"
  cp "$DIR/munge/munged.pid" "$DIR/ctl/run/munged.pid"
  exit 0
fi
NS=$(head -n 1 "$DIR/netns"); NS=${NS%-ctl}-$NAME
grep -qxF "$NS" "$DIR/netns" || { echo "daemon.sh: no namespace $NS in $DIR/netns" >&2; exit 2; }
if [ "$NAME" = ctl ]; then OWN=$DIR/ctl CMD=(slurmctld -f "$DIR/etc/slurm.conf"); else OWN=$DIR/nodes/$NAME CMD=(slurmd -f "$DIR/etc/slurm.conf"); fi
export SLURM_CONF=$DIR/etc/slurm.conf
exec nsenter --net="/run/netns/$NS" unshare --uts --mount --propagation private -- /bin/bash -c '
  set -euo pipefail
  hostname "$1"; mount --bind "$2/etc/hosts" /etc/hosts; mount --bind "$3" "$2/node"
  if [ -d /etc/slurm ]; then mount --bind "$2/etc" /etc/slurm; fi
  shift 3
  ulimit -l unlimited 2>/dev/null || true; ulimit -n 131072 2>/dev/null || true
  exec "$@"' _ "$NAME" "$DIR" "$OWN" "${CMD[@]}"
