// A real capture of an InfiniBand HCA read as a normal user: 64-byte config space, no max_link_*. Whatever the
// current link says, without the maximum (and without a baseline) the gate cannot tell a trained-down link: skip.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CHECKS } from '../../src/checks/index.js';
import { FsHost } from '../../src/host/fs-host.js';
import { buildInventory } from '../../src/inventory/build.js';
import type { Finding } from '../../src/model/finding.js';
import { valueOf } from '../../src/model/fact.js';
import { fixture } from '../helpers/paths.js';
import { scratchDir } from '../helpers/scratch.js';

const HCA = '0000:82:00.0'; // mlx4_0, ConnectX-3 (15b3:1003), under root port 0000:80:02.2

/** The archive extracted once (tmpfs when there is one); tests change their copy only, never the archive. */
const TMP = existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir();
const dir = scratchDir('gdrgate-hca-', TMP);
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
execFileSync('/bin/tar', ['xjf', fixture('sysfs-real/32em64t-2n8c+dax+nvme+mic+dimms.tar.bz2'), '-C', dir], { timeout: 120_000 });
const root = path.join(dir, '32em64t-2n8c+1mic');
const DEV = path.join(root, 'sys/devices/pci0000:80/0000:80:02.2', HCA);

const linkOf = (fs: readonly Finding[]): Finding | undefined => fs.find((f) => f.subject === HCA);
const run = async (host: FsHost): Promise<Finding[]> => CHECKS.find((c) => c.id === 'pcie-link')!.run({ inv: await buildInventory(host), baseline: null });

t.test('the capture as taken (no link attributes at all): skip with link-unknown', async (t) => {
  const inv = await buildInventory(new FsHost(root));
  t.ok(inv.nics.some((n) => n.name === 'mlx4_0' && valueOf(n.bdf) === HCA), 'mlx4_0 resolves to its PCI function');
  t.same(linkOf(await run(new FsHost(root))), { check: 'pcie-link', code: 'link-unknown', status: 'skip', subject: '0000:82:00.0', message: 'NIC mlx4_0: link speed/width not readable (no current_link_* and no Link Status)' });
});

t.test('current_link_* Gen3 x4, no max_link_*, 64-byte config, no baseline: skip, never "PASS … of Gen? x?"', async (t) => {
  // The capture's kernel wrote no link attributes; these two are what a newer kernel adds for the HCA.
  writeFileSync(path.join(DEV, 'current_link_speed'), '8 GT/s\n');
  writeFileSync(path.join(DEV, 'current_link_width'), '4\n');
  const f = linkOf(await run(new FsHost(root)));
  t.match(f, { status: /^skip$/, code: /^link-max-unknown$/, actual: /^Gen3 x4$/ });
  t.equal(f?.message, 'NIC mlx4_0 at Gen3 x4; what it can do is not known (no maximum speed for the device)');
});
