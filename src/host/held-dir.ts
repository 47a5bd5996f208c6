// A job user's directory, and the names users own in the state directory, looked at by root without ever entering a
// mount. fusermount lets a user mount on what they own; where /etc/fuse.conf has user_allow_other, a FUSE daemon there
// holds root's every stat, open or lookup in it, for as long as it likes. Reading the mount table first (mounts.ts)
// leaves a window between the read and the look. Here a directory is held by an O_PATH reference, and a name in it is
// taken as an O_PATH reference too, through /proc/self/fd/<n>/<name>: that resolves the name in the very directory
// held, whatever was mounted on its path since, and asks no file system mounted on the name itself (no lookup, no
// permission check, no open: fs/namei.c crosses onto a mount's root without a call to it, test/host/held-dir.test.ts
// shows it on a FUSE file system that never answers). A reference is looked at (fstat, an open through it) only when
// it lies on the held directory's mount (its fdinfo's mnt_id); one on another mount is told as 'mount'.
import fs from 'node:fs';
import { readOpened, type FileResult, type ReadRules } from './files.js';

/** O_PATH (asm-generic/fcntl.h, x86-64 and arm64 alike; node:fs has no constant): a reference, no open of the file. */
const O_PATH = 0o10000000;
const C = fs.constants;

/** What a look found: the thing, a mount on the name (never looked into), or nothing of that name. */
export type Look<T> = T | 'mount' | null;

/** The mount a descriptor lies on (fdinfo's mnt_id, Linux 3.15 on), or null when the kernel does not say. */
function mountOf(fd: number): number | null {
  const m = /^mnt_id:\s*(\d+)$/m.exec(fs.readFileSync(`/proc/self/fdinfo/${fd}`, 'latin1'));
  return m ? Number(m[1]) : null;
}

const gone = (e: unknown): boolean => (e as NodeJS.ErrnoException).code === 'ENOENT';

export class HeldDir {
  private open = true;
  private constructor(
    readonly path: string,
    private readonly fd: number,
    private readonly mount: number,
    /** The directory's own lstat, taken on the reference (what is held, not what the path names now). */
    readonly stats: fs.Stats,
  ) {}

  /** `dir`, a path root alone can change (the state directory), held; or why it could not be. */
  static of(dir: string): HeldDir | string {
    return HeldDir.ifAny(dir) ?? `${dir}: no such directory (ENOENT)`;
  }

  /** HeldDir.of, or null when `dir` is not there. */
  static ifAny(dir: string): HeldDir | string | null {
    let fd: number;
    try {
      fd = fs.openSync(dir, O_PATH | C.O_DIRECTORY);
    } catch (e) {
      return gone(e) ? null : `${dir}: ${(e as Error).message}`;
    }
    try {
      const mount = mountOf(fd);
      if (mount !== null) return new HeldDir(dir, fd, mount, fs.fstatSync(fd));
    } catch {
      /* said below */
    }
    fs.closeSync(fd);
    return `${dir}: the kernel does not say which mount it lies on (/proc/self/fdinfo): a mount in it could not be told`;
  }

  /** A reference to `name` here when it lies on this directory's mount. Throws what the kernel said otherwise. */
  private ref(name: string): Look<number> {
    if (!this.open) throw new Error(`${this.path} is no longer held`);
    if (name === '' || name === '.' || name === '..' || name.includes('/')) throw new Error(`${JSON.stringify(name)} is not a name in ${this.path}`);
    let fd: number;
    try {
      fd = fs.openSync(`/proc/self/fd/${this.fd}/${name}`, O_PATH | C.O_NOFOLLOW);
    } catch (e) {
      if (gone(e)) return null;
      throw e;
    }
    let ok = false;
    try {
      ok = mountOf(fd) === this.mount;
    } finally {
      if (!ok) fs.closeSync(fd);
    }
    return ok ? fd : 'mount';
  }

  /** lstat(2) of `name` here (a link is told as one, never followed). */
  lstat(name: string): Look<fs.Stats> {
    const r = this.ref(name);
    if (typeof r !== 'number') return r;
    try {
      return fs.fstatSync(r);
    } finally {
      fs.closeSync(r);
    }
  }

  /** lstat, or 'error' for anything but a plain answer (the callers that must not throw: a sweep, a refusal's words). */
  lookQuietly(name: string): Look<fs.Stats> | 'error' {
    try {
      return this.lstat(name);
    } catch {
      return 'error';
    }
  }

  /** The directory `name` held in its turn; a string says what it is instead (a link, a file). */
  dir(name: string): Look<HeldDir> | string {
    const r = this.ref(name);
    if (typeof r !== 'number') return r;
    let st: fs.Stats | null = null;
    try {
      st = fs.fstatSync(r);
      if (st.isDirectory()) return new HeldDir(`${this.path}/${name}`, r, this.mount, st);
    } catch (e) {
      fs.closeSync(r);
      throw e;
    }
    fs.closeSync(r);
    return `${this.path}/${name} is not a directory${st.isSymbolicLink() ? ' (a symbolic link)' : ''}`;
  }

  /**
   * `name` opened with `flags` (O_NONBLOCK added: a FIFO's open never waits) when `want` accepts its lstat; what was
   * looked at is what is opened, through the reference (no name is looked up again). A string says why not.
   */
  openAs(name: string, flags: number, want: (st: fs.Stats) => string | null): Look<number> | string {
    const r = this.ref(name);
    if (typeof r !== 'number') return r;
    try {
      const why = want(fs.fstatSync(r));
      return why ?? fs.openSync(`/proc/self/fd/${r}`, flags | C.O_NONBLOCK);
    } finally {
      fs.closeSync(r);
    }
  }

  /** `name`, a regular file here, read as readSmall reads a file (`rules`); a mount on it is never opened. */
  read(name: string, rules: ReadRules): FileResult<Buffer> {
    const file = `${this.path}/${name}`;
    let fd: Look<number> | string;
    try {
      fd = this.openAs(name, C.O_RDONLY, (st) => (st.isFile() ? null : `${file} is not a regular file${st.isSymbolicLink() ? ' (a symbolic link)' : ''}`));
    } catch (e) {
      return { ok: false, kind: 'io', why: `${file}: ${(e as Error).message}` };
    }
    if (fd === null) return { ok: false, kind: 'missing', why: `${file}: no such file (ENOENT)` };
    if (fd === 'mount') return { ok: false, kind: 'unsafe', why: `${file} is a mount: not entered` };
    if (typeof fd === 'string') return { ok: false, kind: 'unsafe', why: fd };
    return readOpened(fd, file, rules);
  }

  close(): void {
    if (!this.open) return;
    this.open = false;
    fs.closeSync(this.fd);
  }
}
