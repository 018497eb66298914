// Text bound for a terminal (a pretty log line, a status table) that carries what others wrote:
// a batch user's job comment, a site script's complaint, a cloud's error. C0 and C1 control
// characters in it would be obeyed by the terminal (ESC ] 0 retitles the window, ESC [ 2 J
// clears it), so each is shown as `?`. Tabs and newlines too: every such field is one line.

const CONTROLS = /[\u0000-\u001f\u007f-\u009f]/g;

/** `text` with every C0/C1 control character (ESC, BEL, CR, LF, TAB, CSI …) replaced by `?`. */
export function terminalSafe(text: string): string {
  return text.replace(CONTROLS, '?');
}

const NAMED: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/**
 * `text` with every C0/C1 control character written as an escape (`\n`, `\x1b`), for a name the
 * reader must be able to tell apart from its neighbours (a key `stage` failed on).
 */
export function escapeControls(text: string): string {
  return text.replace(CONTROLS, (c) => NAMED[c] ?? `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}
