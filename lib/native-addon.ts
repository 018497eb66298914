// Loads one of the small addons built in lib/native by npm's postinstall (scripts/build-native.sh).
// Where it could not be built, the caller goes on without it and `why` says what to do.

import { createRequire } from 'node:module';

export function loadAddon<T>(name: string): { addon?: T; why?: string } {
  try {
    return { addon: createRequire(import.meta.url)(`./native/build/Release/${name}.node`) as T };
  } catch (err) {
    const why = err instanceof Error ? err.message.split('\n')[0] : String(err);
    return { why: `lib/native was not built (${why}); run npm rebuild with python3, make and g++ installed` };
  }
}
