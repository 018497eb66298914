// `estuary gateway credentials issue`: mints a credential for the gateway's S3 endpoint, offline,
// from the same issuer key file the gateway reads. Nothing is stored: the credential carries its
// own scopes and expiry (gateway/s3/credentials.ts).

import { defineCommand } from '../lib/command.ts';
import { option, optional } from '../lib/config/options.ts';
import { bool, duration, list, oneOf, str } from '../lib/config/values.ts';
import { configErrors } from '../lib/config/errors.ts';
import { gatewayErrors } from './errors.ts';
import { issue, parseScope, type Scope } from './s3/credentials.ts';
import { prefixProblem } from './s3/scope.ts';
import { readIssuerKey } from './s3/setup.ts';

/** Long enough for a day of jobs; a week at most, so a leaked credential does not live for ever. */
const MAX_TTL = 7 * 86_400_000;

export const credentialsOptions = {
  prefix: option(list(str('BUCKET/PREFIX', 'bucket/prefix')), [] as string[], 'what the credential may reach: a served bucket name, optionally /key-prefix (repeat for several)'),
  write: option(bool(), false, 'allow writes and deletes under the prefixes too (default: read only)'),
  read: option(bool(), true, 'allow reads and listings under the prefixes (always on)'),
  ttl: option(duration(60_000, MAX_TTL), 12 * 3_600_000, 'how long the credential is valid'),
  issuerKeyFile: optional(str('FILE', 'a file'), "the gateway's --s3-issuer-key-file"),
  format: option(oneOf(['json', 'env'] as const), 'json', 'json: the AWS credential_process shape; env: export lines for a shell'),
};

export const command = defineCommand({
  name: 'gateway credentials',
  summary: 'issue expiring S3 credentials scoped to buckets and prefixes, for the gateway S3 endpoint',
  description:
    'Prints a credential (access key, secret, session token, expiry) that the gateway S3 endpoint ' +
    '(estuary gateway --s3 NAME=URL) accepts until it expires, for reading (and with --write, writing) ' +
    'under the given bucket prefixes only. Made offline from the issuer key file; jobs and drones get ' +
    'these instead of the site keys. See docs/STAGING.md.',
  positionals: [{ name: 'issue', describe: 'the action (only issue exists)' }],
  examples: [
    {
      cmd: 'estuary gateway credentials issue --prefix kek-data/run42/ --ttl 12h --issuer-key-file /etc/estuary/s3-issuer.key',
      what: 'read-only access to one run, for 12 hours',
    },
    {
      cmd: 'eval "$(estuary gateway credentials issue --prefix results/run42/ --write --format env --issuer-key-file KEY)"',
      what: 'write access to an output prefix, as AWS_* variables for the aws CLI or the SDKs',
    },
  ],
  options: credentialsOptions,
  async run({ config, args }) {
    if (args[0] !== 'issue') throw configErrors.badArguments('estuary gateway credentials', `unknown action ${args[0]}; use issue`);
    const key = readIssuerKey(config.issuerKeyFile, '--issuer-key-file');
    if (config.prefix.length === 0) throw gatewayErrors.s3Config('name at least one --prefix BUCKET[/PREFIX]');
    const scopes: Scope[] = config.prefix.map((p) => {
      const s = parseScope(p, config.write);
      if (!s) throw gatewayErrors.s3Config(`--prefix ${p} does not start with a bucket name (a-z, 0-9, . and -)`);
      const why = prefixProblem(s.prefix);
      if (why) throw gatewayErrors.s3Config(`--prefix ${p}: ${why}; name the prefix without them`);
      return s;
    });
    const c = issue(key, scopes, config.ttl, Date.now());
    const out =
      config.format === 'env'
        ? `export AWS_ACCESS_KEY_ID=${c.accessKeyId}\nexport AWS_SECRET_ACCESS_KEY=${c.secretAccessKey}\nexport AWS_SESSION_TOKEN=${c.sessionToken}\n# expires ${c.expiration}\n`
        : `${JSON.stringify({ Version: 1, AccessKeyId: c.accessKeyId, SecretAccessKey: c.secretAccessKey, SessionToken: c.sessionToken, Expiration: c.expiration, Scopes: scopes }, null, 2)}\n`;
    process.stdout.write(out);
    return 0;
  },
});
