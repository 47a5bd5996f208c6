// memlock-limit: RLIMIT_MEMLOCK soft and hard of this process and slurmd, against the class minimum (unlimited).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { limitsText } from '../gen/sysfs-tree.js';
import { H200 } from '../helpers/paths.js';
import { type Patch, patches, put, remove, table, unreadable, type Want } from './_trees.js';

/** A slurmd's /proc/4242/status: the real H200 capture's (a root process's) with its name, pids and uids replaced. */
function slurmdStatus(uid: number, uids = `${uid}\t${uid}\t${uid}\t${uid}`): string {
  return readFileSync(path.join(H200, 'proc/self/status'), 'utf8')
    .replace(/^Name:.*$/m, 'Name:\tslurmd')
    .replace(/^Pid:.*$/m, 'Pid:\t4242')
    .replace(/^PPid:.*$/m, 'PPid:\t1')
    .replace(/^Uid:.*$/m, `Uid:\t${uids}`);
}

/** This process's walk up ends at init; /run/slurmd.pid names 4242, a process called slurmd of `uid`, at 64 KiB. */
const viaPidFile = (uid: number | string, ...more: Patch[]): Patch =>
  patches(
    put('proc/self/status', 'Name:\tnode\nState:\tR (running)\nPid:\t5151\nPPid:\t1\n'),
    put('run/slurmd.pid', '4242\n'),
    put('proc/4242/comm', 'slurmd\n'),
    put('proc/4242/status', typeof uid === 'number' ? slurmdStatus(uid) : slurmdStatus(0, uid)),
    put('proc/4242/limits', limits(KiB64, KiB64)),
    ...more,
  );
/** /proc/<pid>/limits with a given "Max locked memory" row (fs/proc/base.c: "%-25s %-20s %-20s %-10s"). */
function limits(soft: string, hard: string): string {
  return limitsText('unlimited').replace(/^Max locked memory .*$/m, `${'Max locked memory'.padEnd(25)} ${soft.padEnd(20)} ${hard.padEnd(20)} ${'bytes'.padEnd(10)}`);
}
const KiB64 = String(64 * 1024);
const MiB8 = 8 * 1024 * 1024;
const low = (actual: string, expected = '>= unlimited', subject = 'self'): Want => ({ status: 'fail', code: 'memlock-low', subject, expected, actual });
const ok = (actual: string, expected = '>= unlimited', subject = 'self'): Want => ({ status: 'pass', code: 'memlock-ok', subject, expected, actual });
const unknown: Want = { status: 'skip', code: 'memlock-unknown', subject: 'self' };

export const cases = table('memlock-limit', [
  {
    name: 'valid: unlimited soft and hard',
    subjects: ['self'],
    bare: [ok('unlimited')],
    based: [ok('unlimited')],
  },
  {
    name: 'invalid: soft 64 KiB (hard unlimited): registration meets the soft limit',
    patch: put('proc/self/limits', limits(KiB64, 'unlimited')),
    bare: [low('64 KiB (hard unlimited)')],
    based: [low('64 KiB (hard unlimited)')],
  },
  {
    name: 'invalid: hard 64 KiB (soft 64 KiB, the distro default)',
    change: (n) => void (n.memlockKiB = 64),
    bare: [low('64 KiB')],
    based: [low('64 KiB')],
  },
  {
    name: 'valid with baseline: class minimum 8 MiB and limit 8 MiB (below unlimited without baseline)',
    change: (n) => void (n.memlockKiB = 8192),
    edit: { memlockMin: MiB8 },
    subjects: ['self'],
    bare: [low('8 MiB')],
    based: [ok('8 MiB', '>= 8 MiB')],
  },
  {
    name: 'invalid: soft 64 KiB under an 8 MiB hard limit, class minimum 8 MiB',
    patch: put('proc/self/limits', limits(KiB64, String(MiB8))),
    edit: { memlockMin: MiB8 },
    bare: [low('64 KiB (hard 8 MiB)')],
    based: [low('64 KiB (hard 8 MiB)', '>= 8 MiB')],
  },
  {
    name: 'skip: /proc/self/limits missing (cannot tell, never pass)',
    patch: remove('proc/self/limits'),
    subjects: ['self'],
    bare: [unknown],
    based: [unknown],
  },
  {
    name: 'skip: limits file without a "Max locked memory" row',
    patch: put('proc/self/limits', limits('unlimited', 'unlimited').replace(/^Max locked memory.*\n/m, '')),
    subjects: ['self'],
    bare: [unknown],
    based: [unknown],
  },
  {
    name: 'invalid: slurmd (parent of this process) at 64 KiB: the prolog and jobs inherit it',
    patch: patches(
      put('proc/self/status', 'Name:\tnode\nState:\tR (running)\nPid:\t5151\nPPid:\t4242\n'),
      put('proc/4242/comm', 'slurmd\n'),
      put('proc/4242/limits', limits(KiB64, KiB64)),
    ),
    subjects: ['self', 'slurmd[4242]'],
    bare: [ok('unlimited'), low('64 KiB', '>= unlimited', 'slurmd[4242]')],
    based: [ok('unlimited'), low('64 KiB', '>= unlimited', 'slurmd[4242]')],
  },
  // slurmd as its container's init (an entrypoint that ends `exec /usr/sbin/slurmd -D`, its pid file where slurm.conf
  // puts it, /var/run/slurmd/slurmd.pid): the Prolog's walk up reaches pid 1, which is slurmd.
  {
    name: 'invalid: slurmd is pid 1 (a container\'s entrypoint execs it), at 64 KiB, the prolog script between',
    patch: patches(
      put('proc/self/status', 'Name:\tnode\nState:\tR (running)\nPid:\t5151\nPPid:\t4242\n'),
      put('proc/4242/comm', 'prolog.sh\n'),
      put('proc/4242/status', 'Name:\tprolog.sh\nState:\tS (sleeping)\nPid:\t4242\nPPid:\t1\n'),
      put('proc/1/comm', 'slurmd\n'),
      put('proc/1/status', 'Name:\tslurmd\nState:\tS (sleeping)\nPid:\t1\nPPid:\t0\n'),
      put('proc/1/limits', limits(KiB64, KiB64)),
    ),
    subjects: ['self', 'slurmd', 'slurmd[1]'],
    bare: [ok('unlimited'), low('64 KiB', '>= unlimited', 'slurmd[1]')],
    based: [ok('unlimited'), low('64 KiB', '>= unlimited', 'slurmd[1]')],
  },
  // A read that failed on the way to slurmd (its comm, the pid file) was "no slurmd": the low limit above went
  // unjudged and the node passed. Unknown now, for each place the walk reads.
  ...(['proc/4242/comm', 'run/slurmd.pid'] as const).map((failed) => ({
    name: `skip: slurmd (64 KiB) behind an unreadable ${failed}: its limit unknown, never left out`,
    patch: viaPidFile(0, unreadable(failed)),
    subjects: ['self', 'slurmd', 'slurmd[4242]'],
    bare: [ok('unlimited'), { status: 'skip', code: 'memlock-unknown', subject: 'slurmd' } as Want],
    based: [ok('unlimited'), { status: 'skip', code: 'memlock-unknown', subject: 'slurmd' } as Want],
  })),
  ...(['ends at init', 'cannot start (its own status unreadable)'] as const).map((walk) => ({
    name: `invalid: the same slurmd found through /run/slurmd.pid when the walk up ${walk}`,
    patch: walk === 'ends at init' ? viaPidFile(0) : viaPidFile(0, unreadable('proc/self/status')),
    subjects: ['self', 'slurmd', 'slurmd[4242]'],
    bare: [ok('unlimited'), low('64 KiB', '>= unlimited', 'slurmd[4242]')],
    based: [ok('unlimited'), low('64 KiB', '>= unlimited', 'slurmd[4242]')],
  })),
  // Anyone may name a process slurmd (and wait for a stale pid file's number): the pid file's process is taken only
  // when it is root's. A user's process there, its limit low: not slurmd, nothing judged of it.
  {
    name: 'valid: the process /run/slurmd.pid names is called slurmd but is a user\'s (uid 1000): not slurmd, its 64 KiB not judged',
    patch: viaPidFile(1000),
    subjects: ['self', 'slurmd', 'slurmd[4242]'],
    bare: [ok('unlimited')],
    based: [ok('unlimited')],
  },
  // Every uid root's, not one of them: a user's setuid-root program (real uid the user's, effective root's) named slurmd.
  {
    name: "valid: the process /run/slurmd.pid names is called slurmd, its effective uid root's, its real uid a user's: not slurmd",
    patch: viaPidFile('1000\t0\t0\t0'),
    subjects: ['self', 'slurmd', 'slurmd[4242]'],
    bare: [ok('unlimited')],
    based: [ok('unlimited')],
  },
  {
    name: "skip: the process /run/slurmd.pid names is called slurmd, its status unreadable: whose it is unknown, its limit too",
    patch: viaPidFile(0, unreadable('proc/4242/status')),
    subjects: ['self', 'slurmd', 'slurmd[4242]'],
    bare: [ok('unlimited'), { status: 'skip', code: 'memlock-unknown', subject: 'slurmd' } as Want],
    based: [ok('unlimited'), { status: 'skip', code: 'memlock-unknown', subject: 'slurmd' } as Want],
  },
]);
