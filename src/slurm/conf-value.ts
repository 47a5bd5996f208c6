// A `Key=value` line as slurm.conf must hold it to be read back as that one value (parse_config.c: `#` starts a
// comment and `\` escapes anywhere on the line, before keyvalue_pattern takes a "quoted" value or one without blanks).
// Pure: the merge (conf-merge.ts) writes every line it prints through it; the CLI refuses a path it cannot write.

/** Written as it is: no blank, no comment, no escape, no quote. */
const BARE = /^[^\s"#\\]+$/;

/** The value as slurm.conf must hold it, or null where no line can (a control character; a `"` with a blank, `#` or `\`). */
export function confValue(value: string): string | null {
  if (value === '' || /[\x00-\x1f\x7f]/.test(value)) return null;
  if (BARE.test(value)) return value;
  if (value.includes('"')) return null;
  return `"${value.replace(/[\\#]/g, '\\$&')}"`;
}

/** `Key=value`, the value as confValue writes it. Throws where it cannot be written (the CLI refuses such a path first). */
export function confLine(key: string, value: string): string {
  const v = confValue(value);
  if (v === null) throw new Error(`${key}=${JSON.stringify(value)}: no slurm.conf line can hold this value`);
  return `${key}=${v}`;
}
