#!/usr/bin/env node
// Plain JavaScript on purpose: an old Node must be able to parse this file to say what is wrong.
// The rest of estuary is TypeScript run directly by Node's type stripping (22.18+; undici 8 needs 22.19).
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 19)) {
  process.stderr.write(
    `estuary: needs Node.js 22.19 or newer, found ${process.version}; run bin/estuary (the command ` +
      'the README links onto PATH), which uses the Node 24 that `npm ci` brings, or install Node 24\n',
  );
  process.exit(2);
}
// Stripping the types of estuary's TypeScript and compiling it cost every start about 0.2 s of
// CPU and 30 MB of resident memory (the stripper is a WebAssembly module that stays loaded); a
// mount on a worker node keeps that memory for its whole life. Node's compile cache keeps the
// result between starts. It lives in the user's own cache directory, not in the shared temporary
// directory that is Node's default, where another user could plant code for root to run.
// NODE_DISABLE_COMPILE_CACHE=1 turns it off.
const { enableCompileCache } = await import('node:module');
const { homedir } = await import('node:os');
const { join } = await import('node:path');
enableCompileCache?.(join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'estuary', 'node-compile-cache'));
const { main } = await import('../cli/main.ts');
await main();
