// gres.conf as slurmd reads it (parse_config.c: comments, backslash continuations and escapes, quoted values, blanks
// around `=`) and File= as it expands it (hostlist_create, then hostlist_shift): one bracket group, in the order written,
// each number as wide as its range's first. The order is Slurm's GPU numbering without AutoDetect (a `[7,3]` record's
// first index is nvidia7): test/e2e/_gres-order.ts checks the same against the real slurmd and scontrol.
import t from 'tap';
import { present } from '../../src/model/fact.js';
import { expandFiles, type GresConf, parseGresConf } from '../../src/parsers/gres-conf.js';
import { keyValues, logicalLines } from '../../src/parsers/slurm-syntax.js';
import { slurmGpuOrder } from '../../src/state/slurm-gpus.js';

const files = (s: string): string[] | string => {
  const r = expandFiles(s);
  return r.ok ? r.value : r.error;
};

t.test('in the order written, never sorted nor merged', async (t) => {
  t.same(files('/dev/nvidia[7,3,10]'), ['/dev/nvidia7', '/dev/nvidia3', '/dev/nvidia10']);
  t.same(files('/dev/nvidia[4-5,0-1]'), ['/dev/nvidia4', '/dev/nvidia5', '/dev/nvidia0', '/dev/nvidia1']);
  t.same(files('/dev/nvidia[1,1]'), ['/dev/nvidia1', '/dev/nvidia1'], 'a number twice stays twice (the numbering then says so)');
  t.same(files('/dev/nvidia2'), ['/dev/nvidia2'], 'no bracket: the file as written');
});

t.test('each number as wide as its range\'s first as written', async (t) => {
  t.same(files('/dev/nvidia[08-10]'), ['/dev/nvidia08', '/dev/nvidia09', '/dev/nvidia10']);
  t.same(files('/dev/nvidia[8-10]'), ['/dev/nvidia8', '/dev/nvidia9', '/dev/nvidia10']);
});

t.test('what is not a range is an error, said', async (t) => {
  t.equal(files('/dev/nvidia[3-1]'), 'File=/dev/nvidia[3-1]: unexpected range "3-1"');
  t.equal(files('/dev/nvidia[1,,2]'), 'File=/dev/nvidia[1,,2]: unexpected range ""');
  t.equal(files('/dev/nvidia[0-5000]'), 'File=/dev/nvidia[0-5000] names more than 1024 files');
  t.equal(files('/dev/nvidia[0]x[1]'), 'unexpected File=/dev/nvidia[0]x[1]');
});

t.test('the numbering follows: a record [7,3] gives index 0 to nvidia7; a padded name is no device node', async (t) => {
  const minors = new Map([[3, '0000:18:00.0'], [7, '0000:9a:00.0'], [8, '0000:2a:00.0']]);
  const order = (conf: string) => {
    const o = slurmGpuOrder({ gres: present((parseGresConf(conf) as { value: GresConf }).value), gresPath: 'gres.conf', minors: present(minors), node: 'n1', asked: present({ count: 8, untyped: true, types: [] }) });
    return o.ok ? o.gpus.map((g) => g.minor) : o.why;
  };
  t.same(order('Name=gpu File=/dev/nvidia[7,3]\n'), [7, 3]);
  t.equal(order('Name=gpu File=/dev/nvidia[07-08]\n'), "gres.conf line 1 (/dev/nvidia07 is not a /dev/nvidiaN node): Slurm's numbering is not derived for it");
});

t.test('lines as slurmd reads them: comments, continuations, escapes', async (t) => {
  t.same(logicalLines('Name=gpu # a comment\nFile=x'), [{ line: 1, body: 'Name=gpu ' }, { line: 2, body: 'File=x' }]);
  t.same(logicalLines('Name=gpu \\\n  File=/dev/nvidia0\nName=gpu'), [{ line: 1, body: 'Name=gpu   File=/dev/nvidia0' }, { line: 3, body: 'Name=gpu' }], 'joined where the backslash stood; numbered by the first line');
  t.same(logicalLines('Name=gpu \\  \nFile=x'), [{ line: 1, body: 'Name=gpu File=x' }], 'blanks after the backslash');
  t.same(logicalLines('A=b\\\\\nC=d'), [{ line: 1, body: 'A=b\\' }, { line: 2, body: 'C=d' }], 'two backslashes: one escaped, no continuation');
  t.same(logicalLines('Type=a\\#b # c'), [{ line: 1, body: 'Type=a#b ' }], 'an escaped # is no comment');
  t.same(logicalLines('Name=gpu \\ # more below\nFile=x'), [{ line: 1, body: 'Name=gpu File=x' }], 'a comment after the backslash: still continued');
});

t.test('Key=Value pairs as slurmd takes them', async (t) => {
  t.same(keyValues('Name = gpu  File= "/dev/nvidia[1,0]"\tType ="a b"'), { ok: true, value: [['Name', 'gpu'], ['File', '/dev/nvidia[1,0]'], ['Type', 'a b']] });
  t.same(keyValues('  '), { ok: true, value: [] });
  t.same(keyValues('Name=gpu File'), { ok: false, error: '"File" is not Key=Value' });
  t.same(keyValues('Name=gpu Count+=2'), { ok: false, error: '"Count+=2" is not Key=Value' }, 'an operator: not read (no guess)');
  const g = parseGresConf('NodeName = n1 \\\n Name="gpu" File="/dev/nvidia[1,0]" # two\n');
  t.same(g.ok && g.value.lines.map((l) => [l.line, l.nodeFirst, l.name, l.files]), [[1, true, 'gpu', ['/dev/nvidia1', '/dev/nvidia0']]]);
});
