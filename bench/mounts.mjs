// The mount table read (src/host/mounts.ts mountsBelow) on a node where one job's user has mounted fusermount's
// mount_max (1000) FUSE file systems in their job's directory: a generated /proc/self/mountinfo in the kernel's
// show_mountinfo format (fs/proc_namespace.c: "id parent major:minor root mount-point options optional-fields -
// fstype source super-options", the two paths with space, tab, newline and backslash written as \ooo), after the
// ~30 mounts of a systemd GPU node. Usage: node bench/mounts.mjs [OTHER_DIST] (after npm run build; OTHER_DIST:
// another build's dist/ to time beside this one, e.g. a worktree of an older commit built with tsc).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const REPO = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const STATE = '/run/gdrgate';
const MANY = 1000;
const node = [
  '22 1 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw,errors=remount-ro',
  '23 22 0:21 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw',
  '24 22 0:22 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw',
  '25 22 0:5 / /dev rw,nosuid,relatime shared:2 - devtmpfs udev rw,size=1056744532k,nr_inodes=264186133,mode=755,inode64',
  '26 25 0:23 / /dev/pts rw,nosuid,noexec,relatime shared:3 - devpts devpts rw,gid=5,mode=620,ptmxmode=000',
  '27 22 0:24 / /run rw,nosuid,nodev,noexec,relatime shared:5 - tmpfs tmpfs rw,size=211358548k,mode=755,inode64',
  '28 23 0:6 / /sys/kernel/security rw,nosuid,nodev,noexec,relatime shared:8 - securityfs securityfs rw',
  '29 25 0:25 / /dev/shm rw,nosuid,nodev shared:4 - tmpfs tmpfs rw,inode64',
  '30 27 0:26 / /run/lock rw,nosuid,nodev,noexec,relatime shared:6 - tmpfs tmpfs rw,size=5120k,inode64',
  '31 23 0:27 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot',
  '32 23 0:28 / /sys/fs/pstore rw,nosuid,nodev,noexec,relatime shared:10 - pstore pstore rw',
  '33 23 0:29 / /sys/firmware/efi/efivars rw,nosuid,nodev,noexec,relatime shared:11 - efivarfs efivarfs rw',
  '34 23 0:30 / /sys/fs/bpf rw,nosuid,nodev,noexec,relatime shared:13 - bpf bpf rw,mode=700',
  '35 24 0:31 / /proc/sys/fs/binfmt_misc rw,relatime shared:14 - autofs systemd-1 rw,fd=29,pgrp=1,timeout=0,minproto=5,maxproto=5,direct,pipe_ino=21713',
  '36 25 0:32 / /dev/hugepages rw,relatime shared:15 - hugetlbfs hugetlbfs rw,pagesize=2M',
  '37 25 0:19 / /dev/mqueue rw,nosuid,nodev,noexec,relatime shared:16 - mqueue mqueue rw',
  '38 23 0:7 / /sys/kernel/debug rw,nosuid,nodev,noexec,relatime shared:17 - debugfs debugfs rw',
  '39 23 0:12 / /sys/kernel/tracing rw,nosuid,nodev,noexec,relatime shared:18 - tracefs tracefs rw',
  '40 23 0:33 / /sys/fs/fuse/connections rw,nosuid,nodev,noexec,relatime shared:19 - fusectl fusectl rw',
  '41 23 0:20 / /sys/kernel/config rw,nosuid,nodev,noexec,relatime shared:20 - configfs configfs rw',
  '42 22 259:1 / /boot/efi rw,relatime shared:21 - vfat /dev/nvme0n1p1 rw,fmask=0077,dmask=0077,codepage=437,iocharset=iso8859-1,shortname=mixed,errors=remount-ro',
  '43 22 0:34 / /home rw,relatime shared:22 - nfs4 nas:/home rw,vers=4.2,rsize=1048576,wsize=1048576,namlen=255,hard,proto=tcp,timeo=600,retrans=2,sec=sys',
  '44 22 0:35 / /scratch rw,relatime shared:23 - lustre 10.0.0.1@o2ib:/scratch rw,flock,lazystatfs',
  '45 27 0:36 / /run/user/0 rw,nosuid,nodev,relatime shared:24 - tmpfs tmpfs rw,size=105679272k,nr_inodes=26419818,mode=700,inode64',
  '46 27 0:37 / /run/gdrgate rw,nosuid,nodev,relatime shared:25 - tmpfs tmpfs rw,size=65536k,mode=711,inode64',
];
// The job's user's mounts, as fusermount makes them below a shared /run: a peer group each; a few names with a space.
const fuse = Array.from({ length: MANY }, (_, i) => `${100 + i} 46 0:${40 + i} / ${STATE}/job-4242/${i % 100 === 0 ? 'my\\040data' : 'm'}${i} rw,nosuid,nodev,relatime shared:${30 + i} - fuse.sshfs u4245@login:/data rw,user_id=4245,group_id=4245,allow_other`);
const table = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gdrgate-bench-mounts-')), 'mountinfo');
fs.writeFileSync(table, [...node, ...fuse, `${100 + MANY} 27 0:${40 + MANY} / /run/user/4246/doc rw,nosuid,nodev,relatime shared:${30 + MANY} - fuse.portal portal rw,user_id=4246,group_id=4246`].join('\n') + '\n');
console.log(`${table}: ${node.length + MANY + 1} lines, ${fs.statSync(table).size} bytes`);

const builds = [['this', path.join(REPO, 'dist')], ...(process.argv[2] ? [['other', path.resolve(process.argv[2])]] : [])];
const fns = await Promise.all(builds.map(async ([name, dist]) => [name, (await import(path.join(dist, 'host/mounts.js'))).mountsBelow]));
for (const [name, f] of fns) {
  const got = f(STATE, table);
  if (got.length !== MANY || !got.includes(`${STATE}/job-4242/my data0`)) throw new Error(`${name}: read wrongly (${got.length} mounts)`);
}
const time = (f) => {
  for (let i = 0; i < 50; i++) f(STATE, table);
  const t0 = performance.now();
  for (let i = 0; i < 500; i++) f(STATE, table);
  return ((performance.now() - t0) / 500).toFixed(3);
};
for (let round = 1; round <= 3; round++) console.log(`round ${round}: ${fns.map(([name, f]) => `${name} ${time(f)} ms`).join('   ')}`);
fs.rmSync(path.dirname(table), { recursive: true });
