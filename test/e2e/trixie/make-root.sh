#!/bin/sh
# make-root.sh SUITE TARBALL: a minbase Debian root of SUITE (trixie: Slurm 24.11) with slurmctld, slurmd,
# slurm-client and munge, made once by mmdebstrap and cached as TARBALL (written whole: .part, then renamed).
# Bounded: a first run downloads ~60 MB of Debian packages. Prints nothing on stdout.
set -eu
[ $# -eq 2 ] || { echo "usage: $0 SUITE TARBALL" >&2; exit 2; }
SUITE=$1 OUT=$2
[ -f "$OUT" ] && exit 0
mkdir -p "$(dirname "$OUT")"
part=$OUT.part.$$.tar
trap 'rm -f "$part"' EXIT
timeout 900 mmdebstrap --variant=minbase --mode=root --include=slurmctld,slurmd,slurm-client,munge \
  "$SUITE" "$part" http://deb.debian.org/debian >&2
mv "$part" "$OUT"
