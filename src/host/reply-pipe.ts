// The pipe behind another process's descriptor (/proc/<pid>/fd/<fd>): which pipe it is now, and that same pipe
// opened for writing, never another file swapped in between the look and the open (src/agent/reply.ts says whose).
import fs from 'node:fs';

/** The inode of the pipe `link` (a /proc/<pid>/fd/<fd>) holds now; null when it holds none or is gone. */
export function pipeAt(link: string): number | null {
  try {
    const m = /^pipe:\[(\d+)\]$/.exec(fs.readlinkSync(link));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/** O_PATH (asm-generic/fcntl.h, x86-64 and arm64 alike; node:fs has no constant): a reference, no open of the file. */
const O_PATH = 0o10000000;

/**
 * Pipe `pipe` behind `link` opened for writing, or null: it is gone, or another is there. The descriptor is first
 * taken as an O_PATH reference, which opens nothing (no file system is asked, no open is seen by a watcher); what
 * that reference holds can no longer change, and its name is the kernel's ("pipe:[inode]"). Only when it is that
 * pipe is it opened, through the reference: a descriptor swapped to another file between a look and an open makes
 * root open nothing. Non-blocking: the asker holds its pipe open for reading and writing, so the open never waits.
 */
export function openPipeAt(link: string, pipe: number): number | null {
  let ref: number;
  try {
    ref = fs.openSync(link, O_PATH);
  } catch {
    return null;
  }
  let fd: number | null = null;
  try {
    if (fs.readlinkSync(`/proc/self/fd/${ref}`) !== `pipe:[${pipe}]`) return null;
    fd = fs.openSync(`/proc/self/fd/${ref}`, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK);
    const st = fs.fstatSync(fd);
    if (st.isFIFO() && st.ino === pipe) return fd;
  } catch {
    /* closed below */
  } finally {
    fs.closeSync(ref);
  }
  if (fd !== null) fs.closeSync(fd);
  return null;
}
