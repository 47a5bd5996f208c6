// pcie-acs's finding builder, over the codes its wording file (src/checks/pcie-acs.json) holds.
import { finder } from '../types.js';
import WORDING from '../pcie-acs.json' with { type: 'json' };

export const f = finder('pcie-acs', WORDING.codes);
export type AcsFinding = ReturnType<typeof f>;
