// The AWS shared config file (~/.aws/config, or AWS_CONFIG_FILE) as the AWS SDKs read it, for the
// few settings the mount takes from it: one profile's `region`, `endpoint_url`, the `s3` block of
// its `services` section, and the FIPS, dual-stack and ignore-endpoint switches. Pure: the caller
// reads the file.
//
// The format: `[default]` or `[profile NAME]` sections (in this file `[NAME]` alone names no
// profile), `[services NAME]` sections, `key = value` lines, and a key with an empty value
// followed by indented `sub = value` lines (`s3 =` then `  endpoint_url = ...`). Lines starting
// with `#` or `;` are comments.

export type Settings = Readonly<Record<string, string>>;

export interface SharedConfig {
  /** Section title (`profile dev`, `default`, `services local`) → its settings; a sub-setting is `s3.endpoint_url`. */
  readonly sections: ReadonlyMap<string, Settings>;
}

export function parseSharedConfig(text: string): SharedConfig {
  const sections = new Map<string, Record<string, string>>();
  let current: Record<string, string> | undefined;
  let parent: string | undefined;
  for (const raw of text.split(/\r?\n/)) {
    if (/^\s*([#;]|$)/.test(raw)) continue;
    const title = /^\s*\[\s*([^\]]*?)\s*\]\s*$/.exec(raw);
    if (title) {
      const name = title[1]!.replace(/\s+/g, ' ');
      current = sections.get(name) ?? {};
      sections.set(name, current);
      parent = undefined;
      continue;
    }
    const pair = /^(\s*)([^=\s][^=]*?)\s*=\s*(.*?)\s*$/.exec(raw);
    if (!pair || !current) continue;
    const [, indent, key, value] = pair as unknown as [string, string, string, string];
    if (indent !== '' && parent !== undefined) current[`${parent}.${key.toLowerCase()}`] = value;
    else {
      parent = value === '' ? key.toLowerCase() : undefined;
      if (value !== '') current[key.toLowerCase()] = value;
    }
  }
  return { sections };
}

/** The profile's settings: `[profile NAME]`, and for `default` also `[default]` (which wins, as in the SDK). */
export function profileSettings(config: SharedConfig, profile: string): Settings {
  const named = config.sections.get(`profile ${profile}`) ?? {};
  return profile === 'default' ? { ...named, ...config.sections.get('default') } : named;
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
