// gpu-rebar: each GPU's Resizable BAR sizes (sysfs resourceN_resize), an area record of its own folder: read after the
// shared inventory pass, compared as its own dimension (after bar1), staged by `gpu-rebar:<gpu bdf>=max256M`.
import { defineArea } from '../types.js';
import { compareRebar, viewRebar } from './compare.js';
import { rebarFault, type RebarFault } from './fault.js';
import { readRebar, type RebarFacts } from './read.js';

export default defineArea<'gpu-rebar', RebarFault, RebarFacts>({
  id: 'gpu-rebar',
  title: "the sizes each GPU's resizable BARs can take (sysfs resourceN_resize), and their size now",
  sortAfter: 'bar1',
  read: readRebar,
  view: viewRebar,
  compare: compareRebar,
  fault: rebarFault,
});
