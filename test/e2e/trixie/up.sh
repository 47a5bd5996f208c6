#!/bin/sh
# up.sh WORK: run as `unshare --mount --uts --pid --fork --kill-child /bin/sh up.sh WORK`. In those new namespaces
# (mounts private to them, so nothing here reaches the host's mount table), it mounts proc, sysfs, /dev and a /run
# for the Debian root WORK/root, names the host `trixie`, and becomes that root's boot.sh (PID 1 of the namespace).
# Killing the unshare process ends everything in it (--kill-child: the namespace's PID 1, and so every process).
set -eu
R=$1/root
mount -t proc proc "$R/proc"
mount -t sysfs sysfs "$R/sys"
mount --rbind /dev "$R/dev"
mount -t tmpfs -o mode=0755 tmpfs "$R/run"
hostname trixie
exec chroot "$R" /bin/sh /opt/e2e/boot.sh
