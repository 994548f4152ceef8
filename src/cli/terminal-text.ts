/**
 * Text bound for a terminal, with every control character made visible (issue 32, finding 3). A
 * transcript holds model text, tool output and header fields written by others, and `status` prints
 * the organisation name from the user's config: raw, their escapes would write the clipboard (OSC 52),
 * clear the screen (CSI 2J), retitle the window or plant a link whose target differs from its text
 * (OSC 8). Every human-readable renderer of the command-line tool prints through `terminalText`;
 * `--json` output is JSON.stringify's and stays exact.
 *
 * Hand-written rather than strip-ansi and the like: those remove recognised sequences (the reader then
 * cannot see that something was there, and an unrecognised or truncated one passes); this makes each
 * control character itself visible, whatever sequence it starts.
 */

/**
 * C0 controls but tab and newline (carriage return included: it overwrites the line), DEL, C1 controls
 * (U+0080–U+009F: 0x9B is a one-byte CSI on some terminals), and the Unicode bidirectional overrides and
 * isolates, which reorder what is shown.
 */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/** `text` with each control character written as its `\uXXXX` escape, e.g. ESC as `\u001b`. */
export function terminalText(text: string): string {
  return text.replace(CONTROL, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** An output pair whose every write goes through `terminalText` (idempotent: escaping twice changes nothing). */
export function terminalIo<T extends { stdout(text: string): void; stderr(text: string): void }>(io: T): T {
  return { ...io, stdout: (text: string) => io.stdout(terminalText(text)), stderr: (text: string) => io.stderr(terminalText(text)) };
}
