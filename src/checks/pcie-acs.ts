// pcie-acs: the ACS control word of each port a GPU↔NIC transfer crosses, by the node's platform: classic (no
// redirect), Direct NIC (the masks NVIDIA's rdma_topo computes, port by port), virtualized (isolation kept).
import type { Finding } from '../model/finding.js';
import { acsPlatform } from '../pcie/acs-platform.js';
import { classicFindings } from './acs/classic.js';
import { f } from './acs/codes.js';
import { maskFindings } from './acs/direct-nic.js';
import { defineCheck } from './types.js';
import WORDING from './pcie-acs.json' with { type: 'json' };

const TOPOLOGY = { dma: 'ConnectX-8 Data Direct', inline: 'ConnectX switch inline', numa: 'Grace/Vera root ports' } as const;

export default defineCheck('pcie-acs', WORDING, {
  run({ inv, baseline }): Finding[] {
    const platform = acsPlatform(inv);
    // The class may name the policy (baseline capture records what it detected); otherwise the node says.
    const policy = baseline?.acsPolicy ?? (platform.kind === 'classic' ? 'classic' : 'direct-nic');
    if (policy !== 'direct-nic') {
      const note = platform.kind === 'classic' ? platform.note : platform.kind === 'unexpected' ? `Direct NIC topology not recognised (${platform.why})` : `the class sets ${policy} on a Direct NIC node (${TOPOLOGY[platform.topology]})`;
      return classicFindings(inv, baseline, policy, note);
    }
    // A function that could not be told leaves no topology (acs-platform.ts Untold): a Direct NIC platform only where the
    // class says so; without a class the node may be any (an x86 HGX with one unreadable function lands here too).
    if (platform.kind === 'unexpected') {
      const what = platform.topology ? `${TOPOLOGY[platform.topology]} platform, but` : baseline?.acsPolicy === 'direct-nic' ? 'Direct NIC platform, but' : 'which platform this is cannot be told:';
      return [f('acs-platform-unexpected', 'skip', 'node', `${what} ${platform.why}: no mask can be told`)];
    }
    if (platform.kind === 'classic') return [f('acs-platform-mismatch', 'fail', 'node', `the class expects a Direct NIC node; ${platform.note ?? 'no ConnectX DMA function, inline ConnectX switch or GPU on a Grace root port'}`, 'direct-nic', 'classic')];
    const label = `${TOPOLOGY[platform.topology]}${platform.topology === 'inline' ? (platform.virt ? ', virtualized' : ', bare metal') : ''}`;
    return maskFindings(inv, platform.rules, label);
  },
});
