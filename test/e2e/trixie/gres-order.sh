#!/bin/bash
# gres-order.sh ROOT CASE: how the root's slurmd numbers a node's GPUs, as `slurmd -G` prints its final GPU list (one
# File= a line, in the order that gives each its index). Run in a mount namespace of its own (unshare -m): over the
# root's /proc/driver, /sys/bus/pci/drivers, /dev and /etc/slurm it mounts what CASE describes, so that gpu/nvidia
# (AutoDetect=nvidia: it reads /proc/driver/nvidia/gpus/*/information and /sys/bus/pci/drivers/nvidia/*/local_cpulist)
# and gres.conf's File= (stat'ed) find the GPUs there. CASE: gpus (lines "MINOR BDF [MODEL]"), gres.conf, nodes (slurm.conf's
# NodeName= lines: the GPUs Slurm is told of), fake_gpus.conf (optional), gres.d/ (optional: files gres.conf includes). Nothing outside this namespace changes; the root may run a cluster meanwhile (its /etc/slurm is untouched).
set -eu
R=$1 C=$2
mount --make-rprivate /
mount -t proc proc "$R/proc"
mount -t sysfs sysfs "$R/sys"
mount -t tmpfs tmpfs "$R/proc/driver"
mount -t tmpfs tmpfs "$R/sys/bus/pci/drivers"
mount -t tmpfs tmpfs "$R/dev"
mount -t tmpfs tmpfs "$R/etc/slurm"
mknod -m 666 "$R/dev/null" c 1 3
while read -r minor bdf model; do
  d=$R/proc/driver/nvidia/gpus/$bdf
  mkdir -p "$d" "$R/sys/bus/pci/drivers/nvidia/$bdf"
  printf 'Model: \t\t %s\nIRQ:   \t\t 1\nGPU UUID: \t GPU-%08x-0000-0000-0000-000000000000\nBus Type: \t PCIe\nBus Location: \t %s\nDevice Minor: \t %s\nGPU Excluded:\t No\n' "${model:-NVIDIA H100 80GB HBM3}" "$minor" "$bdf" "$minor" >"$d/information"
  echo 0-1 >"$R/sys/bus/pci/drivers/nvidia/$bdf/local_cpulist"
  mknod -m 666 "$R/dev/nvidia$minor" c 195 "$minor"
done <"$C/gpus"
cat >"$R/etc/slurm/slurm.conf" <<CONF
ClusterName=order
SlurmctldHost=localhost
AuthType=auth/slurm
CredType=cred/slurm
SlurmUser=root
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SlurmdSpoolDir=/var/spool/slurmd
GresTypes=gpu
$(cat "$C/nodes")
PartitionName=p Nodes=n1 Default=YES
CONF
echo CgroupPlugin=disabled >"$R/etc/slurm/cgroup.conf"
head -c 1024 /dev/urandom >"$R/etc/slurm/slurm.key"
chmod 600 "$R/etc/slurm/slurm.key"
cp "$C/gres.conf" "$R/etc/slurm/gres.conf"
# The files gres.conf includes (Include gres.d/NAME or /etc/slurm/gres.d/NAME), where the case has them.
[ ! -d "$C/gres.d" ] || cp -r "$C/gres.d" "$R/etc/slurm/gres.d"
# gres_gpu.c's own stand-in for NVML (AutoDetect=nvml without NVIDIA's library), where the case has one.
[ ! -f "$C/fake_gpus.conf" ] || cp "$C/fake_gpus.conf" "$R/etc/slurm/fake_gpus.conf"
mkdir -p "$R/var/spool/slurmd"
# -G prints the GRES records it ends with ("Gres Name=gpu ... File=...", DebugFlags=Gres), in index order, and exits.
chroot "$R" /usr/sbin/slurmd -D -G -N n1 >"$C/slurmd.out" 2>&1 || true
# A record of several files (File=/dev/nvidia[5,12,6], no AutoDetect) is given its indices in the order Slurm's hostlist
# expands it: asked of the root's own `scontrol show hostnames`.
sed -n 's/.*Gres Name=[gG][pP][uU] .* File=\([^ ]*\) .*/\1/p' "$C/slurmd.out" | while read -r f; do
  chroot "$R" /usr/bin/scontrol show hostnames "$f"
done
