// The Epilog's judged window starts anew whenever a drain of ours is written or lifted (any hook's drain, the health
// check's resume, `gdrgate resume`): the samples before it are of the path as it was (a link trained down, a rail
// before its repair), and judged with the repaired path's they drained it again on one busy run. Written as
// probe-window.json in the spool (src/epilog/files.ts); an error is logged, never the run's.
import { log } from '../log.js';
import { writeWindowFrom } from './files.js';

export async function restartWindow(spool: string, why: string, node: string): Promise<void> {
  try {
    writeWindowFrom(spool, Date.now(), why);
  } catch (e) {
    (await log()).error({ node, spool, why: (e as Error).message }, 'the Epilog\'s judged window not restarted: it judges from its last start');
  }
}
