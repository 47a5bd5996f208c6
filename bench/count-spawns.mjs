// Preloaded into the measured process (node --import): counts every child process it starts and
// writes the count to $GDRGATE_SPAWN_COUNT_FILE at exit. All spawns go through ChildProcess#spawn.
import { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';

let n = 0;
const orig = ChildProcess.prototype.spawn;
ChildProcess.prototype.spawn = function (...args) {
  n++;
  return orig.apply(this, args);
};
process.on('exit', () => writeFileSync(process.env.GDRGATE_SPAWN_COUNT_FILE, String(n)));
