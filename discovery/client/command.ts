// `estuary discover`: the worker-node client, made for cron. Exit 0 when something usable was
// applied (discovered proxies, or the fallbacks when discovery is unreachable), 1 when nothing
// was, in which case no file is touched.

import { readFile, realpath } from 'node:fs/promises';
import { defineCommand } from '../../lib/command.ts';
import { option, optional } from '../../lib/config/options.ts';
import { bool, duration, int, list, oneOf, str, url } from '../../lib/config/values.ts';
import { discoveryErrors } from '../errors.ts';
import { MAX_N } from '../query.ts';
import { pacText } from '../shoal-format.ts';
import { DEFAULT_TEST_URL } from '../verifier.ts';
import { writeFileAtomic } from './atomic-write.ts';
import { currentProxyValue, joinProxies, proxiesOf, setProxyValue } from './cvmfs-config.ts';
import { discover } from './discover.ts';

export const discoverOptions = {
  server: option(list(url()), [] as string[], 'discovery servers (estuary or Shoal), tried in order'),
  n: option(int(1, MAX_N), 5, 'how many nearest caches to ask for', { short: 'n' }),
  upstream: option(
    oneOf(['cvmfs', 'frontier', 'any'] as const),
    'cvmfs',
    'which caches: CVMFS, Frontier (conditions) or any',
  ),
  print: option(bool(), false, 'print the CVMFS_HTTP_PROXY value; what is done when neither --write nor --pac is given'),
  write: optional(
    str('FILE'),
    'set CVMFS_HTTP_PROXY in this CVMFS config file, atomically, keeping every other line',
  ),
  pac: option(bool(), false, 'print a proxy auto-config (PAC) file instead'),
  testUrl: option(url(), DEFAULT_TEST_URL, 'file fetched through each offered proxy to test it'),
  test: option(bool(), true, 'test each proxy before using it (--no-test trusts the server)'),
  testTimeout: option(duration(100), 2000, 'time a test fetch may take'),
  serverTimeout: option(duration(100), 5000, 'time a discovery server may take to answer'),
  verbose: option(
    bool(),
    false,
    'also log each server and proxy that failed and what was applied; without it a run that applied proxies prints nothing but its output, so cron mails only trouble',
    { short: 'v' },
  ),
  fallback: option(
    list(str('PROXY')),
    [] as string[],
    'proxies (or DIRECT) to use after the discovered ones and when discovery is unreachable; when writing a file without this, the file’s current proxies are the fallbacks',
  ),
};

export const command = defineCommand({
  name: 'discover',
  summary: 'find, test and apply the nearest caches (CVMFS_HTTP_PROXY or PAC)',
  description: `
Asks a discovery server for the nearest N caches, tests each with a real fetch through it, orders
the ones that passed by speed and applies the result: prints a CVMFS_HTTP_PROXY value, writes it
into a CVMFS config file (atomically, every other line kept), or prints a PAC file. Falls back to
--fallback proxies (or the file's current ones) when discovery is unreachable. Made for cron:
a run that applied proxies prints only its output (nothing with --write) unless -v; falling back,
and every error, go to stderr, and the exit status is 1 when nothing was applied.`,
  examples: [
    {
      cmd: 'estuary discover --server http://discovery.example.org:8080 -n 3',
      what: 'print the tested proxy list',
    },
    {
      cmd: 'estuary discover --server http://discovery.example.org:8080 --write /etc/cvmfs/default.local && cvmfs_config reload',
      what: 'update the CVMFS client config, keeping the current proxies as fallbacks',
    },
    {
      cmd: 'estuary discover --server http://discovery.example.org:8080 --pac > /var/www/proxy.pac',
      what: 'write a PAC file',
    },
  ],
  options: discoverOptions,
  async run({ config, log }) {
    const outputs = [config.print, config.write !== undefined, config.pac].filter(Boolean).length;
    if (outputs > 1) throw discoveryErrors.conflictingOutputs();
    if (config.server.length === 0 && config.fallback.length === 0) {
      throw discoveryErrors.badQuery('give --server URL (and optionally --fallback proxies)');
    }
    const target = config.write ? await writeTarget(config.write) : undefined;
    const existingText = target ? await readExisting(target) : '';
    const fallbacks =
      config.fallback.length > 0 ? config.fallback : proxiesOf(currentProxyValue(existingText));
    // Quiet unless asked: a server or proxy that failed while others served is not news for cron.
    const chatty = config.verbose || config.logLevel === 'debug' || config.logLevel === 'trace';
    const detail = chatty ? log : log.child({}, { level: 'error' });
    const found = await discover({
      servers: config.server,
      n: config.n,
      upstream: config.upstream,
      testUrl: config.testUrl,
      test: config.test,
      testTimeoutMs: config.testTimeout,
      serverTimeoutMs: config.serverTimeout,
      log: detail,
    });
    if (found.good.length === 0 && fallbacks.length === 0) {
      if (!found.server)
        throw discoveryErrors.noServerAnswer(found.serverErrors.join('; ') || 'no --server given');
      throw discoveryErrors.noWorkingProxy(found.offered.length);
    }
    if (found.good.length === 0)
      log.warn({ fallbacks }, 'no discovered proxy usable; applying the fallbacks');
    const proxies = [...found.good, ...fallbacks];
    detail.info({ server: found.server, tested: found.tested, applied: proxies }, 'proxies chosen');
    if (config.pac) {
      const hostPorts = proxies
        .filter((p) => p !== 'DIRECT' && URL.canParse(p))
        .map((p) => new URL(p))
        .map((u) => ({ host: u.hostname.replace(/^\[|\]$/g, ''), port: Number(u.port || 80) }));
      process.stdout.write(pacText(hostPorts));
    } else if (target) {
      try {
        await writeFileAtomic(target, setProxyValue(existingText, joinProxies(proxies)));
      } catch (err) {
        throw discoveryErrors.writeFailed(
          target,
          (err as NodeJS.ErrnoException).code ?? (err as Error).message,
        );
      }
    } else {
      process.stdout.write(`${joinProxies(proxies)}\n`);
    }
    return 0;
  },
});

/**
 * The file to replace: a symlink's target (config management often links default.local), so the
 * rename updates the file the link names instead of replacing the link with a regular file.
 */
async function writeTarget(path: string): Promise<string> {
  try {
    return await realpath(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return path;
    throw discoveryErrors.writeFailed(path, (err as NodeJS.ErrnoException).code ?? (err as Error).message);
  }
}

/**
 * The current config; only a missing file counts as empty. A file that exists but cannot be read
 * (mode 0200, root_squash, EIO) would otherwise be replaced by one line, losing every other line.
 */
async function readExisting(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return '';
    throw discoveryErrors.writeFailed(path, `cannot read it (${code ?? (err as Error).message})`);
  }
}
