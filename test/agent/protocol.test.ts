// The agent's wire format (src/agent/protocol.ts): what slurm/prolog.sh writes, what the agent answers, and what it
// keeps of a Prolog's environment. The environ is a real one: this process's children get it from the kernel.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import t from 'tap';
import { formatReply, parseEnviron, parseRequest, PIPE_BUF } from '../../src/agent/protocol.js';

t.test('a request as slurm/prolog.sh writes it', async (t) => {
  // The wrapper's own printf, run by bash with a pid and a config path: the line the agent reads.
  const wrapper = readFileSync(new URL('../../slurm/prolog.sh', import.meta.url), 'utf8');
  const printf = /^ +(printf '[^']*' "\$\$" "\$CONFIG") >&88$/m.exec(wrapper);
  t.ok(printf, 'slurm/prolog.sh writes its request with one printf');
  const line = spawnSync('/bin/bash', ['-c', `CONFIG=/etc/gdrgate/config.json; ${(printf?.[1] ?? "").replace('"$$"', '4242')}`], { encoding: 'utf8' }).stdout;
  t.equal(line, 'v2 prolog 4242 87 /etc/gdrgate/config.json\n');
  t.same(parseRequest(line.trimEnd()), { ok: true, value: { pid: 4242, fd: 87, config: '/etc/gdrgate/config.json' } });
});

t.test('requests the agent refuses, each with its reason', async (t) => {
  const bad: [string, string][] = [
    ['v3 prolog 1 87 /c', 'unknown protocol "v3" (want v2)'],
    ['v1 prolog 1 /c', 'protocol v1 (a reply FIFO) is not answered any more: that Prolog wrapper is older than this agent; it judges itself after its timeout'],
    ['v2 health 1 87 /c', 'unknown request "health" (the agent answers prolog only)'],
    ['v2 prolog 1 87', 'want "v2 prolog <pid> <fd> <config>", got 4 fields'],
    ['v2 prolog 1 87 /a b', 'want "v2 prolog <pid> <fd> <config>", got 6 fields'],
    ['v2 prolog 0 87 /c', 'pid "0" is not a process id'],
    ['v2 prolog -3 87 /c', 'pid "-3" is not a process id'],
    ['v2 prolog 99999999999 87 /c', 'pid "99999999999" is not a process id'],
    ['v2 prolog 12 2 /c', 'fd "2" is not a descriptor from 3 to 254'],
    ['v2 prolog 12 255 /c', 'fd "255" is not a descriptor from 3 to 254'],
    ['v2 prolog 12 087 /c', 'fd "087" is not a descriptor from 3 to 254'],
    ['v2 prolog 12 87 relative.json', 'config "relative.json" is not an absolute path'],
    ['v2 prolog 12 87 /c\tx', 'config "/c\\tx" holds a control character'],
    ['', 'unknown protocol "" (want v2)'],
    [`v2 prolog 12 87 /${'a'.repeat(PIPE_BUF)}`, 'request of 4113 bytes (at most 4095)'],
    // 2,040 characters of 2 bytes each: 4,097 bytes, past one atomic pipe write (counted as 2,057 "bytes" before).
    [`v2 prolog 12 87 /${'é'.repeat(2040)}`, 'request of 4097 bytes (at most 4095)'],
  ];
  for (const [line, why] of bad) {
    const r = parseRequest(line);
    t.notOk(r.ok, JSON.stringify(line.slice(0, 40)));
    if (!r.ok) t.equal(r.error, why);
  }
});

t.test('a reply is one line, short enough for one atomic FIFO write', async (t) => {
  t.equal(formatReply('ok', 'gdrgate prolog node=vm result=healthy exit=0 9ms action=none'), 'ok gdrgate prolog node=vm result=healthy exit=0 9ms action=none\n');
  t.equal(formatReply('fallback', 'config-error: line 1\nline 2\r\x00'), 'fallback config-error: line 1 line 2 \n', 'control bytes cannot split it');
  const long = formatReply('fallback', 'é'.repeat(5000));
  t.ok(Buffer.byteLength(long) < PIPE_BUF, `${Buffer.byteLength(long)} bytes`);
  t.equal(long.split('\n').length, 2, 'one line');
  t.ok(long.endsWith('…\n'), 'marked as cut');
});

t.test("a Prolog's environment, read back the way the agent reads /proc/<pid>/environ", async (t) => {
  // A real process with slurmd's kind of environment: its environ as the kernel keeps it.
  const env = { SLURM_JOB_ID: '42', SLURMD_NODENAME: 'gpu001', SLURM_JOB_GPUS: '0,1', HOME: '/root', GDRGATE_BLOB_FAILED: '14', X: 'a=b' };
  const r = spawnSync('/bin/cat', ['/proc/self/environ'], { env });
  t.equal(r.status, 0);
  t.same(parseEnviron(r.stdout), { SLURM_JOB_ID: '42', SLURMD_NODENAME: 'gpu001', SLURM_JOB_GPUS: '0,1' }, 'only SLURM_* and SLURMD_*');
  t.same(parseEnviron(Buffer.from('SLURM_A=1=2\0=x\0SLURM_B\0\0')), { SLURM_A: '1=2' }, 'a value keeps its "="; entries without a name or value are dropped');
});

t.test("AGENT_TIMEOUT in hundredths of a second, as slurm/prolog.sh reckons the wait on an unread FIFO", async (t) => {
  // The wrapper's own lines, from its first `case "$AGENT_TIMEOUT"` to its `cs=`, run by bash for each setting.
  const wrapper = readFileSync(new URL('../../slurm/prolog.sh', import.meta.url), 'utf8');
  const m = /^( +case "\$AGENT_TIMEOUT" in [^\n]*\n[\s\S]*?\n +cs=[^\n]*)$/m.exec(wrapper);
  t.ok(m, 'slurm/prolog.sh reckons cs from AGENT_TIMEOUT');
  const cs = (v: string): string => spawnSync('/bin/bash', ['-c', `AGENT_TIMEOUT=$1\n${m?.[1] ?? ''}\necho "$AGENT_TIMEOUT $cs"`, 'x', v], { encoding: 'utf8' }).stdout.trim();
  const seen = ['1', '0.3', '.5', '60', '1.234', '0', '2.', '007', 'abc', '1.2.3', '', '-1', '1e3', ' 1'].map((v) => `${JSON.stringify(v)} -> ${cs(v)}`);
  t.same(seen, ['"1" -> 1 100', '"0.3" -> 0.3 30', '".5" -> .5 50', '"60" -> 60 6000', '"1.234" -> 1.234 123', '"0" -> 0 0', '"2." -> 2. 200', '"007" -> 007 700', '"abc" -> 1 100', '"1.2.3" -> 1 100', '"" -> 1 100', '"-1" -> 1 100', '"1e3" -> 1 100', '" 1" -> 1 100']);
});
