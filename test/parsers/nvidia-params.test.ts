// parseRegistryDwords on /proc/driver/nvidia/params texts as the driver prints them (empty, one key, several).
import t from 'tap';
import { parseRegistryDwords } from '../../src/parsers/nvidia-params.js';

const tail = (dwords: string): string => `ImexChannelCount: 2048\nRegistryDwords: "${dwords}"\nRegistryDwordsPerDevice: ""\nResmanDebugLevel: 4294967295\n`;

t.strictSame(parseRegistryDwords(tail('')), { ok: true, value: {} }, 'empty: no keys');
t.strictSame(parseRegistryDwords(tail('PeerMappingOverride=1;')), { ok: true, value: { PeerMappingOverride: '1' } }, 'the NVSHMEM setting');
t.strictSame(parseRegistryDwords(tail('RMPcieLinkSpeed=0x1;PeerMappingOverride=0')), { ok: true, value: { RMPcieLinkSpeed: '0x1', PeerMappingOverride: '0' } }, 'several, last without ;');
t.strictSame(parseRegistryDwords('ModifyDeviceFiles: 1\n'), { ok: false, error: 'no RegistryDwords line' }, 'not this file');
