// Messages whose wording was corrected after a live run was recorded: the recording stays as the node gave it, and a
// test that compares it with today's replay reads it through here. Only the message text changes; every other field
// of the recording is compared as recorded.
const REWORDED: readonly (readonly [before: string, after: string])[] = [
  // pcie-ats said the missing capability twice.
  ['ATS no ATS capability', 'no ATS capability'],
];

/** A recorded report (JSON text) with each corrected message as gdrgate words it now. */
export function reworded(report: string): string {
  let s = report;
  for (const [before, after] of REWORDED) s = s.replace(new RegExp(`("message":\\s*)${JSON.stringify(before)}`, 'g'), (_m, key: string) => `${key}${JSON.stringify(after)}`);
  return s;
}
