#!/usr/bin/env node
// Plain JavaScript on purpose: an old Node must be able to parse this file to say what is wrong.
// The rest of estuary is TypeScript run directly by Node's type stripping (22.18+).
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 18)) {
  process.stderr.write(
    `estuary: needs Node.js 22.18 or newer, found ${process.version}; run it as \`npx estuary\` ` +
      'inside the package after `npm ci` (which brings Node 24), or install Node 24\n',
  );
  process.exit(2);
}
const { main } = await import('../cli/main.ts');
await main();
