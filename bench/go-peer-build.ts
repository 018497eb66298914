// How `--install-peers` builds goofys from the Go module proxy. Pure text, no I/O: the module
// file of a throw-away main module that pins goofys and every one of its dependencies at an exact
// version.
//
// Why a module of our own: goofys v0.24.0 (its last release, the one the KEK paper's era used)
// predates Go modules. Its go.mod names only itself and its dependencies were git submodules
// under vendor/, which module zips leave out; so `go install github.com/kahing/goofys@v0.24.0`
// has to look up a version of every import, and proxies that refuse version lists (`@v/list`,
// `@latest`) refuse that build. Pinning each module at an exact version asks the proxy only for
// exact versions. The pins are the module versions of the same submodule commits, as goofys's
// own "migrate to go module" commit right after v0.24.0 recorded them, with two changes:
// aws-sdk-go at its release v1.17.14 (the pseudo-version of the vendored commit between v1.17.13
// and v1.17.14 is not served by every proxy) and the fuse fork goofys vendored (kahing/fusego)
// in place of github.com/jacobsa/fuse, as that commit did too.

export interface GoModule {
  readonly path: string;
  readonly version: string;
}

export const GOOFYS: GoModule = { path: 'github.com/kahing/goofys', version: 'v0.24.0' };
/** The commit the v0.24.0 tag names: `goofys --version` prints it, as goofys's `make build` does. */
export const GOOFYS_COMMIT = '45b8d78';

export const GOOFYS_PINS: readonly GoModule[] = [
  { path: 'github.com/Azure/azure-pipeline-go', version: 'v0.2.2' },
  { path: 'github.com/Azure/azure-sdk-for-go', version: 'v32.1.0+incompatible' },
  { path: 'github.com/Azure/azure-storage-blob-go', version: 'v0.7.1-0.20190724222048-33c102d4ffd2' },
  { path: 'github.com/Azure/go-autorest/autorest', version: 'v0.11.18' },
  { path: 'github.com/Azure/go-autorest/autorest/adal', version: 'v0.9.13' },
  { path: 'github.com/Azure/go-autorest/autorest/azure/auth', version: 'v0.5.7' },
  { path: 'github.com/Azure/go-autorest/autorest/azure/cli', version: 'v0.4.2' },
  { path: 'github.com/Azure/go-autorest/autorest/to', version: 'v0.4.0' },
  { path: 'github.com/Azure/go-autorest/autorest/validation', version: 'v0.3.1' },
  { path: 'github.com/aws/aws-sdk-go', version: 'v1.17.14' },
  { path: 'github.com/google/uuid', version: 'v1.1.2-0.20190416172445-c2e93f3ae59f' },
  { path: 'github.com/jacobsa/fuse', version: 'v0.0.0-20201216155545-e0296dec955f' },
  { path: 'github.com/kardianos/osext', version: 'v0.0.0-20190222173326-2bc1f35cddc0' },
  { path: 'github.com/mattn/go-ieproxy', version: 'v0.0.0-20190805055040-f9202b1cfdeb' },
  { path: 'github.com/mitchellh/go-homedir', version: 'v1.1.0' },
  { path: 'github.com/satori/go.uuid', version: 'v1.2.1-0.20181028125025-b2ce2384e17b' },
  { path: 'github.com/sevlyar/go-daemon', version: 'v0.1.5' },
  { path: 'github.com/shirou/gopsutil', version: 'v0.0.0-20190731134726-d80c43f9c984' },
  { path: 'github.com/sirupsen/logrus', version: 'v1.4.3-0.20190807103436-de736cf91b92' },
  { path: 'github.com/urfave/cli', version: 'v1.21.1-0.20190807111034-521735b7608a' },
  { path: 'golang.org/x/net', version: 'v0.0.0-20190724013045-ca1201d0de80' },
  { path: 'golang.org/x/sys', version: 'v0.0.0-20191026070338-33540a1f6037' },
  { path: 'golang.org/x/text', version: 'v0.3.2' },
  { path: 'gopkg.in/ini.v1', version: 'v1.46.0' },
];

/** The fuse library goofys v0.24.0 was built with: kahing's fork of jacobsa/fuse. */
export const GOOFYS_FUSE_FORK: GoModule = {
  path: 'github.com/kahing/fusego',
  version: 'v0.0.0-20200327063725-ca77844c7bcc',
};

/**
 * Hashes of the two modules that are goofys's own code, as computed by `go mod download` on the
 * first build here. The checksum database may be out of reach (the build runs with GOSUMDB=off),
 * so these lines are what makes go refuse a proxy that serves other bytes under these versions.
 */
export const GOOFYS_SUMS: readonly string[] = [
  'github.com/kahing/goofys v0.24.0 h1:og95GxwHaYaRhekzDPADNb+FSYzMiMrcr/czSoOTtsI=',
  'github.com/kahing/goofys v0.24.0/go.mod h1:erC9E45nY5m8v6FE+tYIGRVjIC2N8viMlJrgrsXB2Q4=',
  'github.com/kahing/fusego v0.0.0-20200327063725-ca77844c7bcc h1:wNmVtupKbdEJcTkMIF2ah/nf3NzHEeNnpTR/1riaahQ=',
  'github.com/kahing/fusego v0.0.0-20200327063725-ca77844c7bcc/go.mod h1:Qk5T6wYqwRWfKHhEKkRsIXwsAtQ0GK8rBJNYf5LVdwo=',
];

/** A version the proxy can serve without a version list: a tag or a full pseudo-version. */
export function isExactVersion(version: string): boolean {
  return /^v\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+incompatible)?$/.test(version);
}

/** go.mod of the throw-away module that builds goofys; throws on a pin that is not exact. */
export function goofysGoMod(): string {
  const all = [GOOFYS, ...GOOFYS_PINS];
  const loose = all.filter((m) => !isExactVersion(m.version));
  if (loose.length > 0) throw new Error(`not an exact version: ${loose.map((m) => `${m.path}@${m.version}`).join(', ')}`);
  return [
    'module estuary.invalid/bench/goofys',
    '',
    'go 1.14',
    '',
    'require (',
    ...all.map((m) => `\t${m.path} ${m.version}`),
    ')',
    '',
    `replace github.com/jacobsa/fuse => ${GOOFYS_FUSE_FORK.path} ${GOOFYS_FUSE_FORK.version}`,
    '',
  ].join('\n');
}
