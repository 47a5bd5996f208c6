// The README's install commands in a clean root (scripts/readme-install.sh): a minbase Debian root with no Node, the
// .deb installed with apt, check, the Prolog failing open before the baseline, the baseline written with tee and
// validated, a non-interactive upgrade over a changed conffile, removal and purge; the .rpm installed and erased
// with `rpm --root`. What installed.test.ts checks on this machine (wrappers, agent, footprint) is not repeated.
// Makes roots, chroots and mounts: runs when GDRGATE_INSTALL_TEST=1 (.ci/run sets it), as root.
import t from 'tap';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { REPO } from '../helpers/paths.js';
import { H200_GPU, artifacts, missing, run } from './_artifacts.js';

const why =
  process.env.GDRGATE_INSTALL_TEST !== '1'
    ? 'set GDRGATE_INSTALL_TEST=1 to run it (it makes a Debian root with mmdebstrap, chroots and mounts; .ci/run runs it)'
    : process.getuid?.() !== 0
      ? 'it must run as root (chroot, mount)'
      : missing(['mmdebstrap', 'dpkg-deb', 'rpm', 'chroot', 'mount', 'mountpoint', 'tar']);
if (why) t.skip(`clean-root test skipped: ${why}`, () => {});
else cleanRoot();

interface Step {
  readonly out: string[];
  readonly exit: number;
}

/** The script's transcript: each "$ command" with the lines it printed and its exit status ("[exit N]", else 0). */
function steps(transcript: string): Map<string, Step> {
  const map = new Map<string, Step>();
  let cmd: string | undefined;
  let out: string[] = [];
  const flush = () => {
    if (cmd === undefined) return;
    const last = /^\[exit (\d+)\]$/.exec(out.at(-1) ?? '');
    map.set(cmd, { out: last ? out.slice(0, -1) : out, exit: last ? Number(last[1]) : 0 });
  };
  for (const line of transcript.split('\n').slice(0, -1)) {
    if (line.startsWith('$ ')) {
      flush();
      cmd = line.slice(2);
      out = [];
    } else if (!line.startsWith('# ')) out.push(line);
  }
  flush();
  return map;
}

function cleanRoot(): void {
  // Bounds for a loaded machine, not speeds: the first run downloads and caches the root (the script bounds it at 20 min).
  t.setTimeout(2_400_000);
  const a = artifacts();
  const version = (JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { version: string }).version;
  const r = run(path.join(REPO, 'scripts/readme-install.sh'), ['--deb', a.deb, '--rpm', a.rpm], { timeoutMs: 2_000_000 });
  t.equal(r.status, 0, r.stderr);
  const s = steps(r.stdout);
  const step = (cmd: string): Step => {
    const found = s.get(cmd);
    if (!found) throw new Error(`no step "${cmd}" in:\n${r.stdout}`);
    return found;
  };
  const deb = path.basename(a.deb);
  const deb2 = `gdrgate_${version}-2_amd64.deb`;

  t.test('no Node in the root; the .deb installs with apt, its postinst makes the startup snapshot', async (t) => {
    t.same(step('command -v node'), { out: [], exit: 127 });
    const install = step(`sudo apt install ./${deb}`);
    t.equal(install.exit, 0);
    t.equal(install.out.at(-1), `Setting up gdrgate (${version}-1) ...`);
    t.notOk(install.out.some((l) => /^(E|W): /.test(l)), install.out.join('\n'));
    t.match(step('ls -la /var/lib/gdrgate').out.at(-1), /^-rw-r--r-- 1 root root \d+ .* gate\.blob$/);
  });

  t.test('gdrgate --version and check on the shipped example', async (t) => {
    t.same(step('gdrgate --version'), { out: [`gdrgate ${version} (Node ${process.versions.node}, OpenSSL ${process.versions.openssl}, V8 ${process.versions.v8}, linux-x64)`], exit: 0 });
    const check = step('gdrgate check --root /usr/share/gdrgate/examples/h200-vm.tar.gz');
    t.equal(check.exit, 0);
    t.match(check.out.join('\n'), H200_GPU);
    t.match(check.out.at(-1), /^result: healthy \(exit 0\) — 0 fail, 0 error, 0 warn, \d+ pass, \d+ skip$/);
    const passes = check.out.filter((l) => l.startsWith('PASS ')).length;
    const skips = check.out.filter((l) => l.startsWith('SKIP ')).length;
    t.equal(check.out.at(-1), `result: healthy (exit 0) — 0 fail, 0 error, 0 warn, ${passes} pass, ${skips} skip`, 'the summary counts the table');
  });

  t.test('the Prolog before a baseline: fails open and says why', async (t) => {
    const p = step('sudo env -i SLURMD_NODENAME=gpu001 SLURM_JOB_ID=1 /usr/libexec/gdrgate/prolog.sh');
    t.equal(p.exit, 0);
    t.match(p.out.at(-2), /^config-error: refusing \/etc\/gdrgate\/baseline\.json: .*ENOENT/);
    t.match(p.out.at(-1), /^gdrgate prolog node=gpu001 job=1 result=config-error exit=0 \d+ms action=none$/);
  });

  t.test('the baseline written with sudo tee, then validated', async (t) => {
    t.same(step("sudo gdrgate baseline capture --root /usr/share/gdrgate/examples/h200-vm.tar.gz --class h200 --match 'gpu[001-064]' | sudo tee /etc/gdrgate/baseline.json >/dev/null"), { out: [], exit: 0 });
    t.same(step('sudo gdrgate baseline validate /etc/gdrgate/baseline.json'), { out: ['/etc/gdrgate/baseline.json: valid, 1 class(es): h200 [gpu[001-064]] virtualized, 1 devices'], exit: 0 });
  });

  t.test('a non-interactive upgrade over an edited conffile the package also changed: no prompt, the edit kept', async (t) => {
    t.equal(step(`sudo sed -i 's/^{$/{\\n  "deadlineMs": 8000,/' /etc/gdrgate/config.json`).exit, 0);
    const up = step(`sudo DEBIAN_FRONTEND=noninteractive apt-get -o Dpkg::Options::=--force-confold install ./${deb2}`);
    t.equal(up.exit, 0);
    t.same(up.out.slice(-5), ['', "Configuration file '/etc/gdrgate/config.json'", ' ==> Modified (by you or by a script) since installation.', ' ==> Package distributor has shipped an updated version.', ' ==> Using current old file as you requested.']);
    t.ok(up.out.includes(`Setting up gdrgate (${version}-2) ...`), up.out.join('\n'));
    t.same(step('grep -c deadlineMs /etc/gdrgate/config.json; ls /etc/gdrgate'), { out: ['1', 'baseline.json', 'config.json', 'config.json.dpkg-dist'], exit: 0 });
  });

  t.test('removal keeps the config and the log; purge leaves only the admin’s baseline, no unit link', async (t) => {
    t.equal(step('sudo mkdir -p /etc/systemd/system/multi-user.target.wants && sudo ln -s /usr/lib/systemd/system/gdrgate-agent.service /etc/systemd/system/multi-user.target.wants/').exit, 0);
    // What a startup-snapshot killed while it wrote leaves (writeAtomic's temporary name): removal takes it with the blob.
    t.equal(step('sudo cp /var/lib/gdrgate/gate.blob /var/lib/gdrgate/.gate.blob.4242.0123456789ab').exit, 0);
    const rm = step('sudo apt-get remove -y gdrgate');
    t.equal(rm.exit, 0);
    t.equal(rm.out.at(-1), `Removing gdrgate (${version}-2) ...`);
    // Nothing left in it, dpkg removed the package's directory too (with the partial blob left there, it stays).
    t.same(step("find /var/lib/gdrgate -name '*gate.blob*'"), { out: ['find: ‘/var/lib/gdrgate’: No such file or directory'], exit: 1 }, 'no blob left, whole or partial');
    // No systemd in this root, so nothing disables the agent here (installed.test.ts: the purge takes the link).
    const left = step('ls -A /etc/gdrgate /var/log/gdrgate /etc/systemd/system/multi-user.target.wants/gdrgate-agent.service');
    t.equal(left.exit, 0);
    t.same(left.out, ['/etc/systemd/system/multi-user.target.wants/gdrgate-agent.service', '', '/etc/gdrgate:', 'baseline.json', 'config.json', 'config.json.dpkg-dist', '', '/var/log/gdrgate:', 'gdrgate.log']);
    const purge = step('sudo dpkg --purge gdrgate');
    t.equal(purge.exit, 0);
    t.equal(purge.out.at(-1), "dpkg: warning: while removing gdrgate, directory '/etc/gdrgate' not empty so not removed");
    t.same(step("find / -xdev -path '*gdrgate*' -not -path '/root/*'"), { out: ['/etc/gdrgate', '/etc/gdrgate/baseline.json'], exit: 0 });
  });

  t.test('the .rpm with rpm --root: installed (snapshot made, gdrgate runs), erased leaving nothing of ours', async (t) => {
    // Debian's rpm says this on every install and erase (a distribution's own rpm does not): not ours.
    const debianNotice = /^rpm: (RPM should not be used directly install RPM packages, use Alien instead!|However assuming you know what you are doing\.\.\.)$/;
    const rpm = (cmd: string) => ({ ...step(cmd), out: step(cmd).out.filter((l) => !debianNotice.test(l)) });
    t.same(rpm(`rpm --root "$ROOT" -i --nodeps ${path.basename(a.rpm)}`), { out: [], exit: 0 });
    t.same(step('ls -A "$ROOT"/var/lib/gdrgate && chroot "$ROOT" /usr/sbin/gdrgate --version'), { out: ['gate.blob', `gdrgate ${version} (Node ${process.versions.node}, OpenSSL ${process.versions.openssl}, V8 ${process.versions.v8}, linux-x64)`], exit: 0 });
    t.same(rpm('rpm --root "$ROOT" -e gdrgate'), { out: [], exit: 0 });
    t.same(step(`find "$ROOT" -xdev -name '*gdrgate*'`), { out: [], exit: 0 });
  });
}
