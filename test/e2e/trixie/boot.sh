#!/bin/sh
# boot.sh, in the Debian root as PID 1 of its namespaces (up.sh): munged, slurmctld and slurmd from the root's own
# Debian packages, as their units start them; then it stays, as init, until the test kills the namespace.
# /opt/e2e/booted says it got that far; the daemons' logs are in /var/log/e2e.
set -eu
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
mkdir -p /run/munge /var/log/e2e /var/spool/e2e/slurmd /var/spool/e2e/state
chown munge:munge /run/munge
printf '127.0.0.1 localhost %s\n' "$(hostname)" > /etc/hosts
runuser -u munge -- munged
/usr/sbin/slurmctld -f /etc/slurm/slurm.conf
# slurmd with the limits of Debian's slurmd.service where allowed (the Prolog inherits them).
( ulimit -l unlimited 2>/dev/null || true; exec /usr/sbin/slurmd -f /etc/slurm/slurm.conf )
: > /opt/e2e/booted
exec sleep infinity
