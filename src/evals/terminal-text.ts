/**
 * C0 and C1 control characters (ESC starts the sequences that move the cursor, clear the
 * screen, retitle the window or write the clipboard; C1's CSI and OSC do the same alone),
 * DEL, and the bidirectional marks and overrides that reorder what a line shows.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what this pattern finds.
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * Text from a suite file or a run, as a terminal may be given it: each character above
 * written as its `\u001b`-style escape, so a case name or a model's output shows what it
 * holds and never acts on the terminal. `multiline`: "\n" stays (a diff's lines).
 */
export function terminalText(text: string, multiline = false): string {
  return text.replace(UNSAFE, (ch) => (multiline && ch === "\n" ? ch : `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`));
}
