// Editing a CVMFS client config file (/etc/cvmfs/default.local and friends): replace the
// CVMFS_HTTP_PROXY assignment, keep every other line exactly as it was. Pure: text in, text out.
// CVMFS config files are sourced by a shell, so the value is written in double quotes.

const ASSIGNMENT = /^\s*(?:export\s+)?CVMFS_HTTP_PROXY\s*=/;

/** The current value, unquoted, from the last assignment (the one the shell would keep). */
export function currentProxyValue(text: string): string | undefined {
  let value: string | undefined;
  for (const line of text.split('\n')) {
    if (!ASSIGNMENT.test(line)) continue;
    const raw = line.slice(line.indexOf('=') + 1).trim();
    value = raw.replace(/^(["'])(.*)\1$/, '$2');
  }
  return value;
}

/** Splits a CVMFS_HTTP_PROXY value into proxies, in order, ignoring group structure. */
export function proxiesOf(value: string | undefined): string[] {
  if (!value) return [];
  return value
    .split(/[;|]/)
    .map((p) => p.trim())
    .filter((p) => p !== '');
}

/** Replaces the first assignment and removes later ones, or appends one if there is none. */
export function setProxyValue(text: string, value: string): string {
  if (/["$`\\\n]/.test(value)) throw new Error('a proxy value may not contain quotes, $, ` or backslashes');
  const line = `CVMFS_HTTP_PROXY="${value}"`;
  const lines = text === '' ? [] : text.split('\n');
  const out: string[] = [];
  let done = false;
  for (const l of lines) {
    if (!ASSIGNMENT.test(l)) out.push(l);
    else if (!done) {
      out.push(line);
      done = true;
    }
  }
  if (!done) {
    if (out.length > 0 && out[out.length - 1] === '') out.splice(out.length - 1, 0, line);
    else out.push(line, '');
  }
  return out.join('\n');
}

/** Ordered, without duplicates: the first occurrence wins. */
export function joinProxies(proxies: readonly string[]): string {
  return [...new Set(proxies)].join(';');
}
