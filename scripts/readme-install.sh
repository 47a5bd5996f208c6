#!/bin/sh
# The README's install commands, run for real in a clean root, printed with their real output in the README's
# format ("$ command", then what it printed; "[exit N]" when it did not exit 0; "# ..." says what a step is):
# a minbase Debian root (mmdebstrap, no Node), the .deb installed there with apt, the baseline, the Prolog before
# it, a non-interactive upgrade with a changed conffile, removal and purge; then the .rpm with `rpm --root` in
# another such root, installed and erased. The README's `sudo` is a one-line shim in the root (it runs as root).
#   sudo scripts/readme-install.sh [--deb FILE] [--rpm FILE] [--work DIR]
# The root is cached as a tarball ($GDRGATE_MINBASE, default /var/cache/gdrgate-test/minbase-bookworm.tar).
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
version=$(sed -n 's/^  "version": "\(.*\)",$/\1/p' "$here/package.json")
DEB=$here/dist/package/gdrgate_${version}-1_amd64.deb
RPM=$here/dist/package/gdrgate-${version}-1.x86_64.rpm
WORK=
while [ $# -gt 0 ]; do
  case $1 in
    --deb) DEB=$2; shift 2 ;;
    --rpm) RPM=$2; shift 2 ;;
    --work) WORK=$2; shift 2 ;;
    *) echo "usage: $0 [--deb FILE] [--rpm FILE] [--work DIR]" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" = 0 ] || { echo "$0: run it as root (it makes a root with mmdebstrap, chroots and mounts)" >&2; exit 2; }
for f in "$DEB" "$RPM"; do [ -f "$f" ] || { echo "$0: $f is missing: node scripts/package.mjs --arch x64" >&2; exit 2; }; done
MINBASE=${GDRGATE_MINBASE:-/var/cache/gdrgate-test/minbase-bookworm.tar}
if [ ! -f "$MINBASE" ]; then
  mkdir -p "$(dirname "$MINBASE")"
  # Bounded: a first run downloads ~50 MB of Debian packages.
  timeout 1200 mmdebstrap --variant=minbase --mode=root bookworm "$MINBASE.part.tar" http://deb.debian.org/debian >&2
  mv "$MINBASE.part.tar" "$MINBASE"
fi
W=${WORK:-$(mktemp -d /var/tmp/gdrgate-readme-install.XXXXXX)}
R=$W/deb-root
ROOT=$W/rpm-root
export ROOT
cleanup() {
  for m in "$R/dev/pts" "$R/sys" "$R/proc"; do mountpoint -q "$m" 2>/dev/null && umount "$m"; done
  rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
mkdir -p "$R" "$ROOT"
tar -C "$R" -xf "$MINBASE"
mount -t proc proc "$R/proc"
mount -t sysfs sysfs "$R/sys"
mount --bind /dev/pts "$R/dev/pts"
printf '#!/bin/sh\nexec env "$@"\n' > "$R/usr/local/bin/sudo"
chmod 0755 "$R/usr/local/bin/sudo"
deb=$(basename "$DEB")
cp "$DEB" "$R/root/$deb"

# The next release of this package as dpkg sees it, its /etc/gdrgate/config.json changed (a key at its default).
v2=$(dpkg-deb -f "$DEB" Version | sed 's/-\([0-9]*\)$//')-$(( $(dpkg-deb -f "$DEB" Version | sed 's/.*-//') + 1 ))
deb2=gdrgate_${v2}_amd64.deb
dpkg-deb -R "$DEB" "$W/up"
sed -i "s/^Version: .*/Version: $v2/" "$W/up/DEBIAN/control"
sed -i '0,/{/s//{\n  "onConfigError": "open",/' "$W/up/etc/gdrgate/config.json"
sum=$(cd "$W/up" && md5sum etc/gdrgate/config.json)
sed -i "s|^[0-9a-f]*  etc/gdrgate/config.json\$|$sum|" "$W/up/DEBIAN/md5sums"
dpkg-deb --build --root-owner-group -Zgzip -z1 "$W/up" "$R/root/$deb2" >/dev/null
rm -rf "$W/up"

# One step: the command as printed, run in the clean root as root, nothing inherited; stdin closed (a prompt fails).
step() {
  printf '$ %s\n' "$1"
  rc=0
  chroot "$R" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 TERM=dumb \
    /bin/sh -c "cd /root && $1" </dev/null >"$W/out" 2>&1 || rc=$?
  # As a terminal shows it: of a line redrawn with carriage returns (dpkg's progress), its last state.
  sed 's/\r$//; s/.*\r//' "$W/out"
  [ "$rc" = 0 ] || echo "[exit $rc]"
}
# A step run here, on the machine that holds the rpm root ($ROOT), in the directory of the .rpm.
host() {
  printf '$ %s\n' "$1"
  rc=0
  (cd "$(dirname "$RPM")" && env -i PATH="$PATH" ROOT="$ROOT" LANG=C.UTF-8 /bin/sh -c "$1") </dev/null 2>&1 || rc=$?
  [ "$rc" = 0 ] || echo "[exit $rc]"
}

echo "# A minbase Debian root (mmdebstrap --variant=minbase bookworm): no Node."
step 'command -v node'
step "sudo apt install ./$deb"
step 'ls -la /var/lib/gdrgate'
step 'gdrgate --version'
step 'gdrgate check --root /usr/share/gdrgate/examples/h200-vm.tar.gz'
echo "# Before the baseline: the Prolog fails open and says why."
step 'sudo env -i SLURMD_NODENAME=gpu001 SLURM_JOB_ID=1 /usr/libexec/gdrgate/prolog.sh'
echo "# This machine has no GPU: the baseline is captured from the bundled H200 capture (on a node: no --root)."
step "sudo gdrgate baseline capture --root /usr/share/gdrgate/examples/h200-vm.tar.gz --class h200 --match 'gpu[001-064]' | sudo tee /etc/gdrgate/baseline.json >/dev/null"
step 'sudo gdrgate baseline validate /etc/gdrgate/baseline.json'
echo "# An edited config, then a release whose own config.json changed too ($deb2): no prompt, yours kept."
step 'sudo sed -i '\''s/^{$/{\n  "deadlineMs": 8000,/'\'' /etc/gdrgate/config.json'
step "sudo DEBIAN_FRONTEND=noninteractive apt-get -o Dpkg::Options::=--force-confold install ./$deb2"
step 'grep -c deadlineMs /etc/gdrgate/config.json; ls /etc/gdrgate'
echo "# What systemctl enable gdrgate-agent writes (this root has no systemd)."
step 'sudo mkdir -p /etc/systemd/system/multi-user.target.wants && sudo ln -s /usr/lib/systemd/system/gdrgate-agent.service /etc/systemd/system/multi-user.target.wants/'
echo "# What a startup-snapshot killed while it wrote leaves (its temporary name): removal takes it with the blob."
step 'sudo cp /var/lib/gdrgate/gate.blob /var/lib/gdrgate/.gate.blob.4242.0123456789ab'
step 'sudo apt-get remove -y gdrgate'
step "find /var/lib/gdrgate -name '*gate.blob*'"
step 'ls -A /etc/gdrgate /var/log/gdrgate /etc/systemd/system/multi-user.target.wants/gdrgate-agent.service'
step 'sudo dpkg --purge gdrgate'
echo "# What is left: the baseline, which the admin wrote."
step "find / -xdev -path '*gdrgate*' -not -path '/root/*'"
echo "# The .rpm, in another minbase root (\$ROOT), with this machine's rpm (no rpm database there: --nodeps)."
tar -C "$ROOT" -xf "$MINBASE"
host "rpm --root \"\$ROOT\" -i --nodeps $(basename "$RPM")"
host 'ls -A "$ROOT"/var/lib/gdrgate && chroot "$ROOT" /usr/sbin/gdrgate --version'
host 'rpm --root "$ROOT" -e gdrgate'
host "find \"\$ROOT\" -xdev -name '*gdrgate*'"
