// /proc/<pid>/status fields as the agent reads them (src/parsers/proc-status.ts statusField, statusWords): the uids
// and gids a Prolog or TaskProlog runs with and the groups access(2) uses, from this machine's own status file and
// from the kernel's layout written out (fs/proc/array.c task_state: tab-separated, Groups ending in a space).
import { readFileSync } from 'node:fs';
import t from 'tap';
import { statusField, statusWords } from '../../src/parsers/proc-status.js';

const written = 'Name:\tbash\nUmask:\t0022\nPPid:\t5338\nUid:\t65534\t65534\t65534\t65534\nGid:\t100\t100\t100\t101\nFDSize:\t256\nGroups:\t4 27 \nCpus_allowed_list:\t0-15\n';

t.test('the kernel layout', async (t) => {
  t.same(statusWords(written, 'Uid'), ['65534', '65534', '65534', '65534']);
  t.same(statusWords(written, 'Gid'), ['100', '100', '100', '101']);
  t.same(statusWords(written, 'Groups'), ['4', '27']);
  t.equal(statusField(written, 'PPid'), '5338');
  t.equal(statusField(written, 'Cpus_allowed_list'), '0-15');
  t.same(statusWords('Groups:\t\n', 'Groups'), [], 'no supplementary group');
  t.equal(statusField(written, 'Tgid'), null, 'absent field');
  t.same(statusWords(written, 'Tgid'), []);
  t.equal(statusField('XUid:\t1\n', 'Uid'), null, 'a field is matched from the line start');
});

t.test("this process's own status", async (t) => {
  const own = readFileSync('/proc/self/status', 'utf8');
  t.same(statusWords(own, 'Uid').map(Number), Array(4).fill(process.getuid!()), 'four uids, this process runs with no set-id');
  t.equal(Number(statusWords(own, 'Gid')[3]), process.getgid!(), 'the fs gid');
  t.same(statusWords(own, 'Groups').filter((g) => !process.getgroups!().includes(Number(g))), [], 'each supplementary group is one getgroups(2) gives');
});
