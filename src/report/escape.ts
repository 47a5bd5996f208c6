// Terminal safety for text a person reads: every character a terminal may act on is written as a JSON-style \uXXXX
// escape, so a name read from the node (host name, kernel release, a file name, a Prometheus label) cannot move the
// cursor, retitle the window, clear the screen or forge a line of the report. Escaped: C0 (U+0000–U+001F: ESC starts
// a sequence, CR and LF rewrite or add lines), DEL, C1 (U+0080–U+009F: U+009B is CSI where 8-bit controls are
// honoured), the line and paragraph separators, and the bidirectional controls that reorder what is shown (U+061C,
// U+200E–U+200F, U+202A–U+202E, U+2066–U+2069). The same escape is valid inside a JSON string.
const CONTROLS = '\\u0000-\\u001f\\u007f-\\u009f\\u061c\\u200e\\u200f\\u2028\\u2029\\u202a-\\u202e\\u2066-\\u2069';
const ALL = new RegExp(`[${CONTROLS}]`, 'g');
/** The same, less the newline and tab a text is laid out with. */
const BUT_LAYOUT = new RegExp(`[${CONTROLS.replace('\\u0000-\\u001f', '\\u0000-\\u0008\\u000b-\\u001f')}]`, 'g');

const hex = (c: string): string => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** One field, or one line of a report: every control escaped, newline and tab included. */
export function escapeControls(s: string): string {
  return s.replace(ALL, hex);
}

/** A whole text (what stdout or stderr gets): its newlines and tabs kept, every other control escaped. */
export function escapeText(s: string): string {
  return s.replace(BUT_LAYOUT, hex);
}
