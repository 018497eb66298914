// The AWS shared config file (~/.aws/config, or AWS_CONFIG_FILE) as the AWS SDKs read it, for the
// few settings the mount takes from it: one profile's `region`, `endpoint_url`, the `s3` block of
// its `services` section, and the FIPS, dual-stack and ignore-endpoint switches. Pure: the caller
// reads the file.
//
// The format, as the SDK's parseIni reads it: `[default]` or `[profile NAME]` sections (the name
// may be quoted, `[profile "dev"]`; in this file `[NAME]` alone names no profile), `[services
// NAME]` sections, `key = value` lines, and a key with an empty value followed by indented
// `sub = value` lines (`s3 =` then `  endpoint_url = ...`). A `#` or `;` that starts a line or
// follows white space starts a comment, after a title or a value too (`region = eu-west-1 # Ireland`).

export type Settings = Readonly<Record<string, string>>;

export interface SharedConfig {
  /** Section title (`profile dev`, `default`, `services local`) → its settings; a sub-setting is `s3.endpoint_url`. */
  readonly sections: ReadonlyMap<string, Settings>;
}

/** `TYPE NAME` titles, the name optionally quoted (the SDK's prefixKeyRegex). */
const TYPED_TITLE = /^([\w-]+)\s(["'])?([\w@+.%:/-]+)\2$/;
const SECTION_TYPES = new Set(['profile', 'sso-session', 'services']);

/** The section a title names, undefined for one the SDK skips (`[foo bar]`). */
function sectionName(title: string): string | undefined {
  const typed = TYPED_TITLE.exec(title);
  if (!typed) return title;
  return SECTION_TYPES.has(typed[1]!) ? `${typed[1]} ${typed[3]}` : undefined;
}

export function parseSharedConfig(text: string): SharedConfig {
  const sections = new Map<string, Record<string, string>>();
  let current: string | undefined;
  let parent: string | undefined;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.split(/(?:^|\s)[;#]/)[0]!.trim();
    if (line.startsWith('[') && line.endsWith(']')) {
      current = sectionName(line.slice(1, -1));
      parent = undefined;
      continue;
    }
    const eq = line.indexOf('=');
    if (current === undefined || eq <= 0) continue;
    const key = line.slice(0, eq).trim().toLowerCase();
    const value = line.slice(eq + 1).trim();
    if (value === '') {
      parent = key;
      continue;
    }
    if (parent !== undefined && raw.trimStart() === raw) parent = undefined;
    // A section with no setting is no section, as in the SDK (it matters for `[profile default]`).
    const settings = sections.get(current) ?? {};
    sections.set(current, settings);
    settings[parent === undefined ? key : `${parent}.${key}`] = value;
  }
  return { sections };
}

/**
 * The profile's settings: `[profile NAME]`; for `default`, `[default]` unless a `[profile default]`
 * with settings replaces it whole, as the SDK's getConfigData does.
 */
export function profileSettings(config: SharedConfig, profile: string): Settings {
  const named = config.sections.get(`profile ${profile}`);
  return named ?? (profile === 'default' ? config.sections.get('default') : undefined) ?? {};
}

/** The `s3` block of the `[services NAME]` section the profile names with `services = NAME`. */
export function s3ServiceSettings(config: SharedConfig, profile: Settings): Settings {
  const name = profile.services;
  if (name === undefined) return {};
  const section = config.sections.get(`services ${name}`) ?? {};
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(section)) if (k.startsWith('s3.')) out[k.slice(3)] = v;
  return out;
}
