// Everything a test starts is registered here and torn down after the file's tests, in reverse
// order, whether they passed or failed: test/helpers/setup.ts (a vitest setup file, so it runs
// for every test file) calls runTeardowns in a file-level afterAll. Child processes are also
// killed if the worker exits early, so a crashed test leaves no listener behind.

type Teardown = () => Promise<void> | void;

const pending: Teardown[] = [];
const children = new Set<number>();

let hooked = false;
function hook(): void {
  if (hooked) return;
  hooked = true;
  process.once('exit', () => {
    for (const pid of children) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });
}

/** Registers a teardown to run after this test file, in reverse order of registration. */
export function onTeardown(fn: Teardown): void {
  hook();
  pending.push(fn);
}

export function trackPid(pid: number | undefined): void {
  if (pid !== undefined) children.add(pid);
}

export function untrackPid(pid: number | undefined): void {
  if (pid !== undefined) children.delete(pid);
}

export async function runTeardowns(): Promise<void> {
  const errors: unknown[] = [];
  while (pending.length > 0) {
    const fn = pending.pop()!;
    try {
      await fn();
    } catch (err) {
      errors.push(err);
    }
  }
  if (errors.length > 0) throw new AggregateError(errors, 'teardown failed');
}
